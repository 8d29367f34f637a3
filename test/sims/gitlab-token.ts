/** GitLab simulator, token side: /oauth/token (authorization code with PKCE, refresh with Doorkeeper's rotation, device code polling) and /oauth/authorize_device, with Doorkeeper-shaped errors and ID tokens. */
import type { ServerResponse } from "node:http";
import { DOORKEEPER } from "./gitlab-meta.ts";
import { type SimCore, splitScopes } from "./sim-core-b.ts";
import type { Grant } from "./sim-grants-b.ts";
import {
  checkPkce,
  type RsaSigner,
  readClientAuth,
  readParams,
  type SimRequest,
  sendJson,
  sendText,
} from "./sim-kit-b.ts";

const DEVICE_GRANT = "urn:ietf:params:oauth:grant-type:device_code";

export interface GitLabTokenContext {
  core: SimCore;
  signer: RsaSigner;
  host: () => string;
  accessTtl: number;
  /** Non-confidential applications (PKCE, no secret): "Confidential" unchecked when registering. */
  confidential: boolean;
  appScopes: string[];
  deviceIntervalSeconds: number;
  deviceCodeTtlSeconds: number;
}

export function gitlabError(
  res: ServerResponse,
  status: number,
  error: keyof typeof DOORKEEPER,
): void {
  sendJson(res, status, { error, error_description: DOORKEEPER[error] });
}

export function gitlabTokenEndpoints(ctx: GitLabTokenContext): {
  token(req: SimRequest, res: ServerResponse): void;
  deviceCode(req: SimRequest, res: ServerResponse): void;
} {
  const { core, signer, accessTtl } = ctx;
  const { clock, grants, devices, counters, clientId, clientSecret } = core;
  const err = gitlabError;

  const idToken = (grant: Grant) => {
    const now = clock.now();
    const u = grant.user;
    // https://docs.gitlab.com/integration/openid_connect_provider/#shared-information
    return signer.sign({
      iss: ctx.host(),
      sub: u.id,
      aud: clientId,
      exp: now + 120,
      iat: now,
      auth_time: now,
      sub_legacy: `${u.id}-legacy`,
      name: u.name,
      nickname: u.login,
      preferred_username: u.login,
      email: u.email,
      email_verified: true,
      picture: u.avatar,
      ...(grant.nonce !== undefined ? { nonce: grant.nonce } : {}),
    });
  };

  // https://docs.gitlab.com/api/oauth2/#authorization-code-with-proof-key-for-code-exchange-pkce: access tokens
  // expire after 7200 s; every answer has a refresh token and Doorkeeper's created_at.
  const send = (res: ServerResponse, grant: Grant) => {
    const access = grants.issueAccess(grant, "glpat-oauth-", accessTtl);
    const body: Record<string, unknown> = {
      access_token: access,
      token_type: "Bearer",
      expires_in: accessTtl,
      refresh_token: grants.issueRefresh(grant, "glrt-"),
      scope: grant.scopes.join(" "),
      created_at: clock.now(),
    };
    if (grant.scopes.includes("openid")) body.id_token = idToken(grant);
    sendJson(res, 200, body);
  };

  const fault = (res: ServerResponse): boolean => {
    const kind = core.faults.take();
    if (kind === "html")
      sendText(
        res,
        502,
        "<!DOCTYPE html><html><head><title>GitLab is not responding (502)</title></head><body><h1>502</h1><h2>Whoops, GitLab is taking too much time to respond.</h2></body></html>",
      );
    else if (kind === "no_token")
      sendJson(res, 200, { token_type: "Bearer", expires_in: accessTtl, created_at: clock.now() });
    // https://docs.gitlab.com/security/rate_limits/: 429 "Retry later" with RateLimit-* and Retry-After headers.
    else if (kind === "rate_limit")
      sendText(res, 429, "Retry later\n", "text/plain", {
        "retry-after": "60",
        "ratelimit-limit": "600",
        "ratelimit-remaining": "0",
        "ratelimit-reset": String(clock.now() + 60),
      });
    else if (kind === "server_error") sendJson(res, 500, { message: "500 Internal Server Error" });
    return kind !== undefined;
  };

  const token = (req: SimRequest, res: ServerResponse) => {
    const params = readParams(req, true);
    if (!params) return err(res, 400, "invalid_request");
    const auth = readClientAuth(req.headers, params);
    core.record(req, params, auth);
    if (fault(res)) return;
    const secretOk =
      auth.clientSecret === clientSecret || (!ctx.confidential && auth.clientSecret === undefined);
    if (auth.malformed || auth.clientId !== clientId || !secretOk)
      return err(res, 401, "invalid_client");
    const gt = params.grant_type;
    if (gt === "authorization_code") {
      counters.codeExchanges!++;
      const rec = core.takeCode(params.code);
      if (!rec || params.redirect_uri !== rec.redirectUri) return err(res, 400, "invalid_grant");
      const pkce =
        rec.method === "plain"
          ? params.code_verifier === rec.challenge
            ? undefined
            : "x"
          : checkPkce(rec.challenge, params.code_verifier);
      if (pkce) return err(res, 400, "invalid_grant");
      return send(res, rec.grant);
    }
    if (gt === "refresh_token") {
      counters.refreshGrants!++;
      // https://docs.gitlab.com/api/oauth2/#authorization-code-flow (refresh step): a new access and refresh token;
      // Doorkeeper revokes the used token pair at once, so the old refresh and access tokens both stop working.
      const grant = grants.grantOfRefresh(params.refresh_token ?? "");
      const out = grants.useRefresh(params.refresh_token ?? "", clientId, "glrt-");
      if (!out.ok || !grant) return err(res, 400, "invalid_grant");
      grants.revokeAccessOfGrant(grant.id);
      const access = grants.issueAccess(grant, "glpat-oauth-", accessTtl);
      return sendJson(res, 200, {
        access_token: access,
        token_type: "Bearer",
        expires_in: accessTtl,
        refresh_token: out.refreshToken,
        scope: grant.scopes.join(" "),
        created_at: clock.now(),
        ...(grant.scopes.includes("openid") ? { id_token: idToken(grant) } : {}),
      });
    }
    if (gt === DEVICE_GRANT) {
      counters.devicePolls!++;
      // https://docs.gitlab.com/api/oauth2/#device-authorization-grant-flow: RFC 8628 §3.5 errors, all 400.
      const out = devices.poll(params.device_code ?? "", clientId);
      if (out.kind === "approved")
        return send(res, grants.create(out.record.user!, clientId, out.record.scopes));
      if (out.kind === "pending") return err(res, 400, "authorization_pending");
      if (out.kind === "slow_down") return err(res, 400, "slow_down");
      if (out.kind === "denied") return err(res, 400, "access_denied");
      if (out.kind === "expired") return err(res, 400, "expired_token");
      return err(res, 400, "invalid_grant");
    }
    return err(res, 400, "unsupported_grant_type");
  };

  // https://docs.gitlab.com/api/oauth2/#device-authorization-grant-flow (step 1: POST /oauth/authorize_device).
  const deviceCode = (req: SimRequest, res: ServerResponse) => {
    const params = readParams(req, true);
    if (!params) return err(res, 400, "invalid_request");
    if (params.client_id !== clientId) return err(res, 401, "invalid_client");
    const scopes = params.scope ? splitScopes(params.scope) : ctx.appScopes;
    if (scopes.some((s) => !ctx.appScopes.includes(s))) return err(res, 400, "invalid_scope");
    counters.deviceAuthorizations!++;
    const rec = devices.create(
      clientId,
      scopes,
      ctx.deviceIntervalSeconds,
      ctx.deviceCodeTtlSeconds,
    );
    const verification = `${ctx.host()}/oauth/device`;
    sendJson(res, 200, {
      device_code: rec.deviceCode,
      user_code: rec.userCode,
      verification_uri: verification,
      verification_uri_complete: `${verification}?user_code=${encodeURIComponent(rec.userCode)}`,
      expires_in: rec.exp - clock.now(),
      interval: rec.interval,
    });
  };

  return { token, deviceCode };
}
