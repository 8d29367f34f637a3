/** Atlassian OAuth 2.0 (3LO) simulator: auth.atlassian.com/authorize and /oauth/token (JSON body, rotating refresh tokens with a reuse interval, 90-day inactivity and 365-day absolute expiry) and api.atlassian.com /me and /oauth/token/accessible-resources on one loopback origin at the real paths, written from developer.atlassian.com/cloud/jira/platform/oauth-2-3lo-apps/. */
import { randomUUID } from "node:crypto";
import type { ServerResponse } from "node:http";
import { type BaseOptions, type BaseSimulator, SimCore, splitScopes } from "./sim-core-b.ts";
import type { Grant, SimUser } from "./sim-grants-b.ts";
import {
  bearerToken,
  checkPkce,
  listen,
  randomToken,
  readClientAuth,
  readParams,
  redirect,
  type SimRequest,
  sendJson,
  sendText,
  withQuery,
} from "./sim-kit-b.ts";

export interface AtlassianSite {
  id: string;
  url: string;
  name: string;
}

export interface AtlassianSimulatorOptions extends BaseOptions {
  sites?: AtlassianSite[];
  /** Seconds a rotated-out refresh token is still accepted (default 600: the 10-minute reuse leeway). */
  reuseIntervalSeconds?: number;
  /** Include token_type in token answers; the documented answers have none (default false). */
  tokenType?: boolean;
}

export interface AtlassianSimulator extends BaseSimulator {
  /** The user removes the app under "Connected apps" in their Atlassian account: every grant ends. */
  removeAppAccess(user?: string): void;
}

const DEFAULT_USERS: SimUser[] = [
  {
    id: "5b10ac8d82e05b22cc7d4ef5",
    login: "alice@example.com",
    name: "Alice Example",
    email: "alice@example.com",
    avatar: "https://avatar-management--avatars.us-west-2.prod.public.atl-paas.net/default.png",
  },
];

/** Loopback callback URLs match the registered one on any port; others exactly. */
function callbackAllowed(registered: string[], uri: string): boolean {
  if (registered.includes(uri)) return true;
  try {
    const u = new URL(uri);
    if (u.protocol !== "http:" || !["127.0.0.1", "localhost"].includes(u.hostname)) return false;
    return registered.some(
      (r) => new URL(r).hostname === u.hostname && new URL(r).pathname === u.pathname,
    );
  } catch {
    return false;
  }
}

export async function startAtlassianSimulator(
  options: AtlassianSimulatorOptions = {},
): Promise<AtlassianSimulator> {
  // https://developer.atlassian.com/cloud/oauth/getting-started/refresh-tokens/ ("rotating refresh tokens"): a new
  // refresh token on every use; 90 days of inactivity and 365 days absolute (Atlassian staff on
  // community.developer.atlassian.com/t/refresh-token-expire-after-36000-seconds/60806/2); a replaced token is still
  // accepted for a 10-minute leeway (community.developer.atlassian.com/t/50348/60, "updated the leeway to 10min").
  const core = new SimCore(
    { redirectUris: ["http://127.0.0.1/callback"], ...options },
    {
      rotate: true,
      oldTokenValid: options.reuseIntervalSeconds ?? 600,
      ttlSeconds: 90 * 86400,
      absoluteTtlSeconds: 365 * 86400,
    },
    { clientId: randomToken("", 24), clientSecret: randomToken("ATOA", 48), users: DEFAULT_USERS },
  );
  const { clock, grants, counters, clientId, clientSecret } = core;
  const accessTtl = options.accessTokenTtlSeconds ?? 3600;
  const sites = options.sites ?? [
    { id: randomUUID(), url: "https://your-domain.atlassian.net", name: "your-domain" },
  ];
  const sim: AtlassianSimulator = core.handle({
    removeAppAccess: (who?: string) => {
      const u = core.findUser(who ?? sim.approveAs);
      for (let g = grants.findGrant(u.id, clientId); g; g = grants.findGrant(u.id, clientId))
        grants.revokeGrant(g.id);
    },
  });
  const oauthError = (res: ServerResponse, status: number, error: string, description: string) =>
    sendJson(res, status, { error, error_description: description });

  // https://developer.atlassian.com/cloud/jira/platform/oauth-2-3lo-apps/#2--exchange-authorization-code-for-access-token:
  // the documented answer is {access_token, expires_in, scope} (+ refresh_token with offline_access), no token_type.
  const tokenResponse = (res: ServerResponse, grant: Grant, refreshToken: string | undefined) => {
    const body: Record<string, unknown> = {
      access_token: grants.issueAccess(grant, "eyJraWQiOiJhdXRoLmF0bGFzc2lhbi5jb20t.", accessTtl),
      expires_in: accessTtl,
      scope: grant.scopes.join(" "),
    };
    if (grant.scopes.includes("offline_access"))
      body.refresh_token = refreshToken ?? grants.issueRefresh(grant, "eyJraWQiOiJydC");
    if (options.tokenType) body.token_type = "Bearer";
    sendJson(res, 200, body);
  };

  const fault = (res: ServerResponse): boolean => {
    const kind = core.faults.take();
    if (kind === "html")
      sendText(
        res,
        502,
        "<html><head><title>502 Bad Gateway</title></head><body><center><h1>502 Bad Gateway</h1></center></body></html>",
      );
    else if (kind === "no_token") sendJson(res, 200, { expires_in: accessTtl, scope: "" });
    // https://developer.atlassian.com/cloud/jira/platform/rate-limiting/: 429 with Retry-After and X-RateLimit-*.
    else if (kind === "rate_limit") {
      sendJson(
        res,
        429,
        { code: 429, message: "Too Many Requests" },
        {
          "retry-after": "10",
          "x-ratelimit-limit": "100",
          "x-ratelimit-remaining": "0",
          "x-ratelimit-reset": new Date((clock.now() + 10) * 1000).toISOString(),
          "ratelimit-reason": "jira-quota-based",
        },
      );
    } else if (kind === "server_error")
      oauthError(res, 500, "server_error", "Internal Server Error");
    return kind !== undefined;
  };

  // https://developer.atlassian.com/cloud/jira/platform/oauth-2-3lo-apps/#1--direct-the-user-to-the-authorization-url-to-get-an-authorization-code
  const authorize = (req: SimRequest, res: ServerResponse) => {
    const q = req.query;
    const redirectUri = q.get("redirect_uri") ?? "";
    if (q.get("client_id") !== clientId)
      return sendText(res, 400, "<html><p>Something went wrong: invalid client_id.</p></html>");
    if (!callbackAllowed(core.options.redirectUris ?? [], redirectUri))
      return sendText(
        res,
        400,
        "<html><p>Something went wrong: the callback URL does not match.</p></html>",
      );
    counters.authorizations!++;
    const state = q.get("state") ?? undefined;
    const fail = (error: string, d: string) =>
      redirect(res, withQuery(redirectUri, { error, error_description: d, state }));
    // audience=api.atlassian.com is required (step 1, "audience: (required)").
    if (q.get("audience") !== "api.atlassian.com")
      return fail("invalid_request", "audience must be api.atlassian.com");
    const scopes = splitScopes(q.get("scope"));
    if (q.get("response_type") !== "code" || scopes.length === 0)
      return fail("invalid_request", "response_type=code and scope are required");
    if (sim.deny) return fail("access_denied", "User did not authorize the request");
    const grant = grants.create(core.findUser(sim.approveAs), clientId, scopes);
    // PKCE is not in Atlassian's 3LO docs; its Auth0-based server checks a challenge when one was sent.
    const challenge = q.get("code_challenge") ?? undefined;
    const method = q.get("code_challenge_method") ?? (challenge ? "plain" : undefined);
    const code = core.issueCode({ grant, redirectUri, challenge, method, extra: {} });
    redirect(res, withQuery(redirectUri, { code, state }));
  };

  // https://developer.atlassian.com/cloud/jira/platform/oauth-2-3lo-apps/ (steps 2 and "Use a refresh token"): the
  // docs send a JSON body with client_id and client_secret; form bodies and Basic credentials are accepted too
  // (RFC 6749 §2.3.1, §4.1.3), and lastTokenRequest() records which one a client used.
  const token = (req: SimRequest, res: ServerResponse) => {
    const params = readParams(req, true);
    if (!params) return oauthError(res, 400, "invalid_request", "Invalid request body");
    const auth = readClientAuth(req.headers, params);
    core.record(req, params, auth);
    if (fault(res)) return;
    if (auth.malformed || auth.clientId !== clientId || auth.clientSecret !== clientSecret) {
      return oauthError(res, 401, "access_denied", "Unauthorized");
    }
    if (params.grant_type === "authorization_code") {
      counters.codeExchanges!++;
      const rec = core.takeCode(params.code);
      if (!rec) return oauthError(res, 403, "invalid_grant", "Invalid authorization code");
      if (params.redirect_uri !== rec.redirectUri)
        return oauthError(res, 403, "unauthorized_client", "redirect_uri is invalid");
      const pkce =
        rec.method === "plain"
          ? params.code_verifier === rec.challenge
            ? undefined
            : "x"
          : checkPkce(rec.challenge, params.code_verifier);
      if (pkce) return oauthError(res, 403, "invalid_grant", "Failed to verify code verifier");
      return tokenResponse(res, rec.grant, undefined);
    }
    if (params.grant_type === "refresh_token") {
      counters.refreshGrants!++;
      // Expired, unknown or past the reuse leeway: 403 {"error": "invalid_grant", "error_description": "Unknown or
      // invalid refresh token."} (refresh-tokens doc, "Troubleshooting").
      const out = grants.useRefresh(params.refresh_token ?? "", clientId, "eyJraWQiOiJydC");
      if (!out.ok)
        return oauthError(res, 403, "invalid_grant", "Unknown or invalid refresh token.");
      return tokenResponse(res, out.grant, out.refreshToken);
    }
    return oauthError(res, 403, "unauthorized_client", "Grant type not allowed for the client.");
  };

  // api.atlassian.com: GET /me (needs read:me: https://developer.atlassian.com/cloud/jira/platform/oauth-2-3lo-apps/#how-do-i-retrieve-the-public-profile-of-the-authenticated-user-)
  // and GET /oauth/token/accessible-resources (step 3.1, "Get the cloudid for your site").
  const api = (req: SimRequest, res: ServerResponse) => {
    counters.accountCalls!++;
    const t = bearerToken(req.headers);
    const grant = t ? grants.grantOfAccess(t) : undefined;
    if (!grant)
      return sendJson(
        res,
        401,
        { code: 401, message: "Unauthorized" },
        { "www-authenticate": 'Bearer realm="api.atlassian.com"' },
      );
    if (req.path === "/oauth/token/accessible-resources") {
      return sendJson(
        res,
        200,
        sites.map((s) => ({
          id: s.id,
          url: s.url,
          name: s.name,
          scopes: grant.scopes.filter((x) => x !== "offline_access"),
          avatarUrl:
            "https://site-admin-avatar-cdn.prod.public.atl-paas.net/avatars/240/rocket.png",
        })),
      );
    }
    if (!grant.scopes.includes("read:me"))
      return sendJson(res, 403, { code: 403, message: "Forbidden: the read:me scope is required" });
    const u = grant.user;
    sendJson(res, 200, {
      account_type: "atlassian",
      account_id: u.id,
      email: u.email,
      name: u.name,
      picture: u.avatar,
      account_status: "active",
      nickname: u.name.split(" ")[0],
      zoneinfo: "Australia/Sydney",
      locale: "en-US",
      extended_profile: {
        job_title: "Engineer",
        organization: "Example",
        department: "R&D",
        location: "Sydney",
      },
    });
  };

  const server = await listen((req, res) => {
    const route = `${req.method} ${req.path}`;
    if (route === "GET /authorize") return authorize(req, res);
    if (route === "POST /oauth/token") return token(req, res);
    if (route === "GET /me" || route === "GET /oauth/token/accessible-resources")
      return api(req, res);
    sendJson(res, 404, { code: 404, message: "Not Found" });
  });
  sim.url = server.url;
  sim.close = server.close;
  return sim;
}
