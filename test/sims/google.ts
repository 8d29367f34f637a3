/** Google OAuth 2.0 / OpenID Connect simulator: discovery, the consent redirect, token (code, refresh, device), device authorization, revoke, userinfo and JWKS on one loopback origin at Google's real paths, written from developers.google.com/identity. */
import type { ServerResponse } from "node:http";
import {
  GOOGLE_DEFAULT_USERS,
  GOOGLE_DEVICE_SCOPES,
  GOOGLE_DISCOVERY,
  GOOGLE_ISSUER,
  isLoopbackRedirect,
} from "./google-meta.ts";
import {
  type BaseOptions,
  type BaseSimulator,
  type DeviceControls,
  SimCore,
  splitScopes,
} from "./sim-core-b.ts";
import type { Grant } from "./sim-grants-b.ts";
import {
  atHash,
  bearerToken,
  checkPkce,
  listen,
  RsaSigner,
  randomToken,
  readClientAuth,
  readParams,
  redirect,
  type SimRequest,
  sendJson,
  sendText,
  withQuery,
} from "./sim-kit-b.ts";

const DEVICE_GRANT = "urn:ietf:params:oauth:grant-type:device_code";

export interface GoogleSimulatorOptions extends BaseOptions {
  /**
   * "web" (default): a refresh token only with access_type=offline, and on a later consent only with
   * prompt=consent. "desktop": installed apps get one on every code exchange (native-app doc, step 5 response).
   */
  clientType?: "web" | "desktop";
}

export interface GoogleSimulator extends BaseSimulator, DeviceControls {
  jwks(): { keys: Record<string, unknown>[] };
}

export async function startGoogleSimulator(
  options: GoogleSimulatorOptions = {},
): Promise<GoogleSimulator> {
  // Google refresh tokens do not rotate: the refresh response carries no refresh_token (web-server doc,
  // "Refreshing an access token (offline access)"); they end on revocation, 6 months unused or a password change.
  const core = new SimCore(
    options,
    { rotate: false, oldTokenValid: "until_expiry" },
    {
      clientId: `${randomToken("", 9)}.apps.googleusercontent.com`,
      clientSecret: randomToken("GOCSPX-", 21),
      users: GOOGLE_DEFAULT_USERS,
    },
  );
  const { clock, grants, devices, counters, clientId, clientSecret } = core;
  const accessTtl = options.accessTokenTtlSeconds ?? 3599;
  const offlineConsented = new Set<string>();
  const signer = new RsaSigner();
  const sim: GoogleSimulator = core.handle({ jwks: () => signer.jwks() });

  // Token errors are JSON with 400 (401 for client authentication), e.g. {"error": "invalid_grant",
  // "error_description": "Bad Request"} (https://developers.google.com/identity/protocols/oauth2/native-app#exchange-authorization-code).
  const oauthError = (res: ServerResponse, status: number, error: string, description: string) =>
    sendJson(res, status, { error, error_description: description });

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
  const oauthErrorWith = (
    res: ServerResponse,
    status: number,
    error: string,
    d: string,
    h: Record<string, string>,
  ) => sendJson(res, status, { error, error_description: d }, h);

  // https://developers.google.com/identity/protocols/oauth2/native-app#step-2:-send-a-request-to-googles-oauth-2.0-server
  const authorize = (req: SimRequest, res: ServerResponse) => {
    const q = req.query;
    const redirectUri = q.get("redirect_uri") ?? "";
    // A bad client or redirect URI gets Google's error page ("Error 401: invalid_client", "Error 400:
    // redirect_uri_mismatch"), never a redirect (native-app doc, "Error responses").
    if (q.get("client_id") !== clientId)
      return sendText(
        res,
        401,
        "<html><p>Error 401: invalid_client</p><p>The OAuth client was not found.</p></html>",
      );
    if (!(options.redirectUris ?? []).includes(redirectUri) && !isLoopbackRedirect(redirectUri)) {
      return sendText(res, 400, "<html><p>Error 400: redirect_uri_mismatch</p></html>");
    }
    counters.authorizations!++;
    const state = q.get("state") ?? undefined;
    const scopes = splitScopes(q.get("scope"));
    const method = q.get("code_challenge_method") ?? "plain";
    if (
      q.get("response_type") !== "code" ||
      scopes.length === 0 ||
      !["plain", "S256"].includes(method)
    ) {
      return sendText(
        res,
        400,
        "<html><p>Error 400: invalid_request</p><p>Required parameter is missing or invalid.</p></html>",
      );
    }
    if (sim.deny) return redirect(res, withQuery(redirectUri, { error: "access_denied", state }));
    const user = core.findUser(sim.approveAs);
    const grant = grants.create(user, clientId, scopes, q.get("nonce") ?? undefined);
    // A refresh token with access_type=offline; on a repeat consent only with prompt=consent
    // (https://developers.google.com/identity/protocols/oauth2/web-server#offline, and "prompt" in step 1).
    const key = `${user.id} ${clientId}`;
    const desktop = options.clientType === "desktop";
    const wantsOffline = desktop || q.get("access_type") === "offline";
    const consent = (q.get("prompt") ?? "").split(" ").includes("consent");
    const offline = wantsOffline && (desktop || consent || !offlineConsented.has(key));
    if (offline) offlineConsented.add(key);
    const challenge = q.get("code_challenge") ?? undefined;
    const code = core.issueCode(
      { grant, redirectUri, challenge, method, extra: { offline: String(offline) } },
      "4/0A",
    );
    redirect(res, withQuery(redirectUri, { state, code, scope: scopes.join(" ") }));
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

  // https://developers.google.com/identity/protocols/oauth2/native-app#tokenrevoke: the token as a query or form
  // parameter; 200 on success, 400 otherwise; revoking an access token also revokes its refresh token.
  const revoke = (req: SimRequest, res: ServerResponse) => {
    const params = req.body.length > 0 ? readParams(req, false) : {};
    const t = req.query.get("token") ?? params?.token;
    if (!t) return oauthError(res, 400, "invalid_request", "Bad Request");
    const grant = grants.grantOfAccess(t) ?? grants.grantOfRefresh(t);
    if (!grant) return oauthError(res, 400, "invalid_token", "Token expired or revoked");
    counters.revocations!++;
    grants.revokeGrant(grant.id);
    offlineConsented.delete(`${grant.user.id} ${grant.clientId}`);
    sendJson(res, 200, {});
  };

  // https://developers.google.com/identity/openid-connect/openid-connect#obtaininguserprofileinformation
  const userinfo = (req: SimRequest, res: ServerResponse) => {
    counters.accountCalls!++;
    const t = bearerToken(req.headers);
    const grant = t ? grants.grantOfAccess(t) : undefined;
    if (!grant) {
      return oauthErrorWith(res, 401, "invalid_request", "Invalid Credentials", {
        "www-authenticate": 'Bearer realm="https://accounts.google.com/", error="invalid_token"',
      });
    }
    const u = grant.user;
    const has = (short: string) =>
      grant.scopes.some((s) => s === short || s.endsWith(`userinfo.${short}`));
    const body: Record<string, unknown> = { sub: u.id };
    if (has("profile")) {
      Object.assign(body, {
        name: u.name,
        given_name: u.name.split(" ")[0],
        family_name: u.name.split(" ").slice(1).join(" "),
        picture: u.avatar,
      });
    }
    if (has("email")) Object.assign(body, { email: u.email, email_verified: true });
    sendJson(res, 200, body);
  };

  const server = await listen((req, res) => {
    const route = `${req.method} ${req.path}`;
    if (route === "GET /.well-known/openid-configuration")
      return sendJson(res, 200, GOOGLE_DISCOVERY);
    if (route === "GET /o/oauth2/v2/auth") return authorize(req, res);
    if (route === "POST /token") return token(req, res);
    if (route === "POST /device/code") return deviceCode(req, res);
    if (route === "POST /revoke") return revoke(req, res);
    if (req.path === "/v1/userinfo" && ["GET", "POST"].includes(req.method))
      return userinfo(req, res);
    if (route === "GET /oauth2/v3/certs") return sendJson(res, 200, signer.jwks());
    sendText(res, 404, "<html><p>404. That’s an error.</p></html>");
  });
  sim.url = server.url;
  sim.close = server.close;
  return sim;
}
