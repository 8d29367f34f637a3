/** Google simulator, token side: /token (authorization code with PKCE and offline access, non-rotating refresh tokens, device-code polling), /device/code, Google ID tokens and Google's JSON error bodies. */
import type { ServerResponse } from "node:http";
import { GOOGLE_DEVICE_SCOPES, GOOGLE_ISSUER } from "./google-meta.ts";
import { type SimCore, splitScopes } from "./sim-core-b.ts";
import type { Grant } from "./sim-grants-b.ts";
import {
  atHash,
  checkPkce,
  type RsaSigner,
  readClientAuth,
  readParams,
  type SimRequest,
  sendJson,
  sendText,
} from "./sim-kit-b.ts";

const DEVICE_GRANT = "urn:ietf:params:oauth:grant-type:device_code";

export interface GoogleTokenContext {
  core: SimCore;
  signer: RsaSigner;
  accessTtl: number;
  deviceIntervalSeconds: number;
  deviceCodeTtlSeconds: number;
}

/**
 * Token-endpoint errors are JSON with 400 (401 for client authentication), e.g. {"error": "invalid_grant",
 * "error_description": "Bad Request"} (https://developers.google.com/identity/protocols/oauth2/native-app#exchange-authorization-code).
 */
export function googleError(
  res: ServerResponse,
  status: number,
  error: string,
  description: string,
  h: Record<string, string> = {},
): void {
  sendJson(res, status, { error, error_description: description }, h);
}

export function googleTokenEndpoints(ctx: GoogleTokenContext): {
  token(req: SimRequest, res: ServerResponse): void;
  deviceCode(req: SimRequest, res: ServerResponse): void;
} {
  const { core, signer, accessTtl } = ctx;
  const { clock, grants, devices, counters, clientId, clientSecret } = core;
  const oauthError = googleError;
  const oauthErrorWith = googleError;
  const options = {
    deviceIntervalSeconds: ctx.deviceIntervalSeconds,
    deviceCodeTtlSeconds: ctx.deviceCodeTtlSeconds,
  };

  const idToken = (grant: Grant, accessToken: string) => {
    const now = clock.now();
    const u = grant.user;
    // https://developers.google.com/identity/openid-connect/openid-connect#an-id-tokens-payload
    return signer.sign({
      iss: GOOGLE_ISSUER,
      azp: clientId,
      aud: clientId,
      sub: u.id,
      email: u.email,
      email_verified: true,
      at_hash: atHash(accessToken),
      name: u.name,
      picture: u.avatar,
      given_name: u.name.split(" ")[0],
      family_name: u.name.split(" ").slice(1).join(" "),
      iat: now,
      exp: now + 3600,
      ...(grant.nonce !== undefined ? { nonce: grant.nonce } : {}),
    });
  };

  const tokenResponse = (res: ServerResponse, grant: Grant, withRefresh: boolean) => {
    const access = grants.issueAccess(grant, "ya29.", accessTtl);
    const body: Record<string, unknown> = {
      access_token: access,
      expires_in: accessTtl,
      scope: grant.scopes.join(" "),
      token_type: "Bearer",
    };
    if (withRefresh) body.refresh_token = grants.issueRefresh(grant, "1//0");
    if (grant.scopes.includes("openid")) body.id_token = idToken(grant, access);
    sendJson(res, 200, body);
  };

  const fault = (res: ServerResponse): boolean => {
    const kind = core.faults.take();
    if (kind === "html")
      sendText(
        res,
        502,
        "<!DOCTYPE html><html><title>Error 502 (Server Error)!!1</title><p><b>502.</b> That’s an error.</p></html>",
      );
    else if (kind === "no_token")
      sendJson(res, 200, { expires_in: accessTtl, token_type: "Bearer" });
    // Google APIs answer quota exhaustion with 429 rateLimitExceeded and ask for exponential backoff
    // (https://developers.google.com/workspace/drive/api/guides/limits); Retry-After is our plausible addition.
    else if (kind === "rate_limit")
      oauthErrorWith(res, 429, "rate_limit_exceeded", "Rate Limit Exceeded", {
        "retry-after": "30",
      });
    else if (kind === "server_error") oauthError(res, 500, "internal_failure", "Backend Error");
    return kind !== undefined;
  };

  // https://developers.google.com/identity/protocols/oauth2/native-app#exchange-authorization-code and #offline
  const token = (req: SimRequest, res: ServerResponse) => {
    const params = readParams(req, false);
    if (!params) return oauthError(res, 400, "invalid_request", "Bad Request");
    const auth = readClientAuth(req.headers, params);
    core.record(req, params, auth);
    if (fault(res)) return;
    // Installed-app and web clients send their client_secret here (native-app doc, step 5).
    if (auth.malformed || auth.clientId !== clientId || auth.clientSecret !== clientSecret) {
      return oauthError(res, 401, "invalid_client", "Unauthorized");
    }
    if (params.grant_type === "authorization_code") {
      counters.codeExchanges!++;
      const rec = core.takeCode(params.code);
      if (!rec) return oauthError(res, 400, "invalid_grant", "Bad Request");
      if (params.redirect_uri !== rec.redirectUri)
        return oauthError(res, 400, "redirect_uri_mismatch", "Bad Request");
      const pkce =
        rec.method === "plain" && rec.challenge !== undefined
          ? params.code_verifier === rec.challenge
            ? undefined
            : "Invalid code verifier."
          : checkPkce(rec.challenge, params.code_verifier);
      if (pkce) return oauthError(res, 400, "invalid_grant", pkce);
      return tokenResponse(res, rec.grant, rec.extra.offline === "true");
    }
    if (params.grant_type === "refresh_token") {
      counters.refreshGrants!++;
      const out = grants.useRefresh(params.refresh_token ?? "", clientId, "1//0");
      if (!out.ok)
        return oauthError(res, 400, "invalid_grant", "Token has been expired or revoked.");
      return tokenResponse(res, out.grant, false);
    }
    if (params.grant_type === DEVICE_GRANT) return devicePoll(params, res);
    return oauthError(res, 400, "unsupported_grant_type", "Invalid grant_type");
  };

  // https://developers.google.com/identity/protocols/oauth2/limited-input-device#step-6:-handle-responses-to-polling-requests
  const devicePoll = (params: Record<string, string>, res: ServerResponse) => {
    counters.devicePolls!++;
    const out = devices.poll(params.device_code ?? "", clientId);
    if (out.kind === "pending")
      return oauthError(res, 428, "authorization_pending", "Precondition Required");
    if (out.kind === "slow_down") return oauthError(res, 403, "slow_down", "Forbidden");
    if (out.kind === "denied") return oauthError(res, 403, "access_denied", "Forbidden");
    if (out.kind === "expired") return oauthError(res, 400, "expired_token", "Bad Request");
    if (out.kind !== "approved") return oauthError(res, 400, "invalid_grant", "Bad Request");
    // The device-flow token response includes a refresh token (limited-input doc, step 6).
    return tokenResponse(res, grants.create(out.record.user!, clientId, out.record.scopes), true);
  };

  // https://developers.google.com/identity/protocols/oauth2/limited-input-device#step-1:-request-device-and-user-codes
  const deviceCode = (req: SimRequest, res: ServerResponse) => {
    const params = readParams(req, false);
    if (!params) return oauthError(res, 400, "invalid_request", "Bad Request");
    if (params.client_id !== clientId)
      return oauthError(res, 401, "invalid_client", "The OAuth client was not found.");
    const scopes = splitScopes(params.scope);
    if (scopes.length === 0)
      return oauthError(res, 400, "invalid_request", "Missing required parameter: scope");
    const bad = scopes.find((s) => !GOOGLE_DEVICE_SCOPES.has(s));
    if (bad)
      return oauthError(
        res,
        400,
        "invalid_scope",
        `Invalid device flow scope: ${bad.slice(0, 128)}`,
      );
    counters.deviceAuthorizations!++;
    const rec = devices.create(
      clientId,
      scopes,
      options.deviceIntervalSeconds ?? 5,
      options.deviceCodeTtlSeconds ?? 1800,
      "AH-1Ng",
    );
    // Google names the field verification_url, not RFC 8628's verification_uri (step 1 response example).
    sendJson(res, 200, {
      device_code: rec.deviceCode,
      user_code: rec.userCode,
      verification_url: "https://www.google.com/device",
      expires_in: rec.exp - clock.now(),
      interval: rec.interval,
    });
  };

  return { token, deviceCode };
}
