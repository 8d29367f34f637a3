/** Microsoft Entra ID simulator, token side: the /token endpoint (authorization code with PKCE, rotating refresh tokens, device code polling), /devicecode, v2.0 ID tokens and AADSTS-shaped errors. */
import type { ServerResponse } from "node:http";
import { aadError, LOGIN } from "./microsoft-meta.ts";
import { type SimCore, splitScopes } from "./sim-core-b.ts";
import type { Grant } from "./sim-grants-b.ts";
import {
  checkPkce,
  type RsaSigner,
  randomToken,
  readClientAuth,
  readParams,
  type SimRequest,
  sendJson,
  sendText,
} from "./sim-kit-b.ts";

const DEVICE_GRANTS = new Set(["urn:ietf:params:oauth:grant-type:device_code", "device_code"]);

export interface MicrosoftTokenContext {
  core: SimCore;
  signer: RsaSigner;
  accessTtl: number;
  confidential: boolean;
  deviceIntervalSeconds: number;
  deviceCodeTtlSeconds: number;
}

/**
 * Entra's v2.0 endpoints take the resource inside each scope ("Scopes, not resources":
 * https://learn.microsoft.com/en-us/entra/identity-platform/azure-ad-endpoint-comparison) and refuse RFC 8707's
 * `resource` parameter with AADSTS901002 ("The 'resource' request parameter isn't supported",
 * https://learn.microsoft.com/en-us/entra/identity-platform/reference-error-codes), error invalid_request.
 */
export const RESOURCE_REFUSED = [
  "invalid_request",
  901002,
  "The 'resource' request parameter is not supported.",
] as const;

/** Whether a form body names `resource` (read raw: repeated `resource` parameters count too). */
export function namesResource(body: string): boolean {
  return new URLSearchParams(body).has("resource");
}

export function microsoftErr(
  res: ServerResponse,
  status: number,
  error: string,
  code: number,
  msg: string,
  h: Record<string, string> = {},
): void {
  sendJson(res, status, aadError(error, code, msg), h);
}

export function microsoftTokenEndpoints(ctx: MicrosoftTokenContext): {
  token(req: SimRequest, res: ServerResponse): void;
  deviceCode(req: SimRequest, res: ServerResponse): void;
} {
  const { core, signer, accessTtl, confidential } = ctx;
  const { clock, grants, devices, counters, clientId, clientSecret } = core;
  const err = microsoftErr;
  const options = {
    deviceIntervalSeconds: ctx.deviceIntervalSeconds,
    deviceCodeTtlSeconds: ctx.deviceCodeTtlSeconds,
  };

  const idToken = (grant: Grant) => {
    const now = clock.now();
    const u = grant.user;
    const tid = u.extra?.tid ?? "";
    // https://learn.microsoft.com/en-us/entra/identity-platform/id-token-claims-reference (v2.0 claims)
    return signer.sign({
      ver: "2.0",
      iss: `${LOGIN}/${tid}/v2.0`,
      sub: u.id,
      aud: clientId,
      exp: now + 3600,
      iat: now,
      nbf: now,
      name: u.name,
      preferred_username: u.login,
      oid: u.extra?.oid,
      tid,
      ...(grant.scopes.includes("email") ? { email: u.email } : {}),
      ...(grant.nonce !== undefined ? { nonce: grant.nonce } : {}),
      uti: randomToken("", 16),
    });
  };

  // https://learn.microsoft.com/en-us/entra/identity-platform/v2-oauth2-auth-code-flow#successful-response-2
  const tokenResponse = (res: ServerResponse, grant: Grant, refreshToken: string | undefined) => {
    const body: Record<string, unknown> = {
      token_type: "Bearer",
      scope: grant.scopes.filter((s) => s !== "offline_access").join(" "),
      expires_in: accessTtl,
      ext_expires_in: accessTtl,
      access_token: grants.issueAccess(grant, "EwA", accessTtl),
    };
    // offline_access is what earns a refresh token (permissions doc, "offline_access").
    if (grant.scopes.includes("offline_access"))
      body.refresh_token = refreshToken ?? grants.issueRefresh(grant, "0.AX");
    if (grant.scopes.includes("openid")) body.id_token = idToken(grant);
    sendJson(res, 200, body);
  };

  const fault = (res: ServerResponse): boolean => {
    const kind = core.faults.take();
    if (kind === "html")
      sendText(
        res,
        502,
        "<html><head><title>502 - Web server received an invalid response</title></head><body>Bad Gateway</body></html>",
      );
    else if (kind === "no_token")
      sendJson(res, 200, { token_type: "Bearer", expires_in: accessTtl });
    // Throttling: 429 with Retry-After (https://learn.microsoft.com/en-us/entra/identity-platform/reference-error-codes, AADSTS90055 TenantThrottlingError).
    else if (kind === "rate_limit")
      err(res, 429, "temporarily_unavailable", 90055, "There are too many incoming requests.", {
        "retry-after": "30",
      });
    else if (kind === "server_error")
      err(res, 500, "server_error", 90033, "A transient error has occurred. Please try again.");
    return kind !== undefined;
  };

  const token = (req: SimRequest, res: ServerResponse) => {
    if (namesResource(req.body)) return err(res, 400, ...RESOURCE_REFUSED);
    const params = readParams(req, false);
    if (!params)
      return err(
        res,
        400,
        "invalid_request",
        900144,
        "The request body must contain the following parameter: 'grant_type'.",
      );
    const auth = readClientAuth(req.headers, params);
    core.record(req, params, auth);
    if (fault(res)) return;
    if (auth.malformed || auth.clientId !== clientId)
      return err(
        res,
        400,
        "unauthorized_client",
        700016,
        `Application with identifier '${String(auth.clientId).slice(0, 64)}' was not found in the directory.`,
      );
    if (confidential && auth.clientSecret === undefined)
      return err(
        res,
        401,
        "invalid_client",
        7000218,
        "The request body must contain the following parameter: 'client_assertion' or 'client_secret'.",
      );
    if (auth.clientSecret !== undefined && auth.clientSecret !== clientSecret)
      return err(res, 401, "invalid_client", 7000215, "Invalid client secret provided.");
    const gt = params.grant_type ?? "";
    if (gt === "authorization_code") {
      counters.codeExchanges!++;
      const rec = core.takeCode(params.code);
      if (!rec)
        return err(
          res,
          400,
          "invalid_grant",
          54005,
          "OAuth2 Authorization code was already redeemed, please retry with a new valid code or use an existing refresh token.",
        );
      if (params.redirect_uri !== rec.redirectUri)
        return err(
          res,
          400,
          "invalid_grant",
          50011,
          "The redirect URI specified in the request does not match the redirect URI used to obtain the authorization code.",
        );
      const pkce =
        rec.method === "plain"
          ? params.code_verifier === rec.challenge
            ? undefined
            : "x"
          : checkPkce(rec.challenge, params.code_verifier);
      if (pkce)
        return err(
          res,
          400,
          "invalid_grant",
          50148,
          "The code_verifier does not match the code_challenge supplied in the authorization request for PKCE.",
        );
      return tokenResponse(res, rec.grant, undefined);
    }
    if (gt === "refresh_token") {
      counters.refreshGrants!++;
      // https://learn.microsoft.com/en-us/entra/identity-platform/v2-oauth2-auth-code-flow#refresh-the-access-token
      const out = grants.useRefresh(params.refresh_token ?? "", clientId, "0.AX");
      if (!out.ok && out.reason === "expired")
        return err(
          res,
          400,
          "invalid_grant",
          700082,
          "The refresh token has expired due to inactivity.",
        );
      if (!out.ok)
        return err(
          res,
          400,
          "invalid_grant",
          9002313,
          "Invalid request. Request is malformed or invalid.",
        );
      return tokenResponse(res, out.grant, out.refreshToken);
    }
    if (DEVICE_GRANTS.has(gt)) return devicePoll(params, res);
    return err(
      res,
      400,
      "unsupported_grant_type",
      70003,
      `The app requested an unsupported grant type '${gt.slice(0, 64)}'.`,
    );
  };

  // https://learn.microsoft.com/en-us/entra/identity-platform/v2-oauth2-device-code#expected-errors: every error is
  // 400; a refusal is authorization_declined (not RFC 8628's access_denied). Microsoft does not document slow_down;
  // a forced one (slowDownNext) answers it as RFC 8628 §3.5 defines.
  const devicePoll = (params: Record<string, string>, res: ServerResponse) => {
    counters.devicePolls!++;
    const out = devices.poll(params.device_code ?? "", clientId);
    if (out.kind === "pending")
      return err(
        res,
        400,
        "authorization_pending",
        70016,
        "OAuth 2.0 device flow error. Authorization is pending. Continue polling.",
      );
    if (out.kind === "slow_down")
      return err(res, 400, "slow_down", 70016, "Polling too fast. Slow down.");
    if (out.kind === "denied")
      return err(
        res,
        400,
        "authorization_declined",
        70000,
        "The user declined the authorization request.",
      );
    if (out.kind === "expired")
      return err(
        res,
        400,
        "expired_token",
        70020,
        "The provided value for the input parameter 'device_code' is not valid. This device code has expired.",
      );
    if (out.kind !== "approved")
      return err(
        res,
        400,
        "bad_verification_code",
        70019,
        "The device_code sent to the /token endpoint wasn't recognized.",
      );
    return tokenResponse(
      res,
      grants.create(out.record.user!, clientId, out.record.scopes),
      undefined,
    );
  };

  // https://learn.microsoft.com/en-us/entra/identity-platform/v2-oauth2-device-code#device-authorization-response
  const deviceCode = (req: SimRequest, res: ServerResponse) => {
    if (namesResource(req.body)) return err(res, 400, ...RESOURCE_REFUSED);
    const params = readParams(req, false);
    if (!params || params.client_id !== clientId)
      return err(
        res,
        400,
        "unauthorized_client",
        700016,
        "Application was not found in the directory.",
      );
    const scopes = splitScopes(params.scope);
    if (scopes.length === 0)
      return err(
        res,
        400,
        "invalid_request",
        900144,
        "The request body must contain the following parameter: 'scope'.",
      );
    counters.deviceAuthorizations!++;
    const rec = devices.create(
      clientId,
      scopes,
      options.deviceIntervalSeconds ?? 5,
      options.deviceCodeTtlSeconds ?? 900,
      "DAQABAAEAAA",
    );
    sendJson(res, 200, {
      user_code: rec.userCode,
      device_code: rec.deviceCode,
      verification_uri: "https://microsoft.com/devicelogin",
      expires_in: rec.exp - clock.now(),
      interval: rec.interval,
      message: `To sign in, use a web browser to open the page https://microsoft.com/devicelogin and enter the code ${rec.userCode} to authenticate.`,
    });
  };

  return { token, deviceCode };
}
