/** Google OAuth 2.0 / OpenID Connect simulator: discovery, the consent redirect, token (code, refresh, device), device authorization, revoke, userinfo and JWKS on one loopback origin at Google's real paths, written from developers.google.com/identity. */
import type { ServerResponse } from "node:http";
import { GOOGLE_DEFAULT_USERS, GOOGLE_DISCOVERY, isLoopbackRedirect } from "./google-meta.ts";
import { googleError, googleTokenEndpoints } from "./google-token.ts";
import {
  type BaseOptions,
  type BaseSimulator,
  type DeviceControls,
  SimCore,
  splitScopes,
} from "./sim-core-b.ts";
import {
  bearerToken,
  listen,
  RsaSigner,
  randomToken,
  readParams,
  redirect,
  type SimRequest,
  sendJson,
  sendText,
  withQuery,
} from "./sim-kit-b.ts";

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
  const { grants, counters, clientId } = core;
  const offlineConsented = new Set<string>();
  const signer = new RsaSigner();
  const sim: GoogleSimulator = core.handle({ jwks: () => signer.jwks() });

  const oauthError = googleError;
  const endpoints = googleTokenEndpoints({
    core,
    signer,
    accessTtl: options.accessTokenTtlSeconds ?? 3599,
    deviceIntervalSeconds: options.deviceIntervalSeconds ?? 5,
    deviceCodeTtlSeconds: options.deviceCodeTtlSeconds ?? 1800,
  });

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
      return googleError(res, 401, "invalid_request", "Invalid Credentials", {
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
    if (route === "POST /token") return endpoints.token(req, res);
    if (route === "POST /device/code") return endpoints.deviceCode(req, res);
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
