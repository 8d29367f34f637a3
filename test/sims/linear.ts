/** Linear OAuth 2.0 simulator: linear.app/oauth/authorize (comma-separated scopes, PKCE, actor), api.linear.app/oauth/token (code, rotating refresh tokens, 24 h access tokens), api.linear.app/oauth/revoke and POST api.linear.app/graphql { viewer } on one loopback origin at the real paths, written from linear.app/developers/oauth-2-0-authentication. */
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

// https://linear.app/developers/oauth-2-0-authentication ("scope: Comma separated list of scopes").
const SCOPES = new Set([
  "read",
  "write",
  "issues:create",
  "comments:create",
  "timeSchedule:write",
  "admin",
  "app:assignable",
  "app:mentionable",
  "customer:read",
  "customer:write",
  "initiative:read",
  "initiative:write",
]);

export interface LinearSimulatorOptions extends BaseOptions {
  /** How the token answer carries scope: the docs show an array (["read","write"]); "string" gives "read,write". */
  scopeFormat?: "array" | "string";
}

export interface LinearSimulator extends BaseSimulator {}

const DEFAULT_USERS: SimUser[] = [
  {
    id: "8f1c2a6e-5d4b-4c3a-9e2f-1a2b3c4d5e6f",
    login: "alice",
    name: "Alice Example",
    email: "alice@example.com",
    avatar: "https://public.linear.app/avatars/alice.png",
    extra: { organization: "Example Inc" },
  },
];

export async function startLinearSimulator(
  options: LinearSimulatorOptions = {},
): Promise<LinearSimulator> {
  // Refresh tokens are on for every OAuth app since April 1, 2026; access tokens last 24 hours and each refresh
  // returns a new refresh token, the used one being invalidated (doc, "Refresh tokens" / "Migrate to using refresh tokens").
  const core = new SimCore(
    { redirectUris: ["http://127.0.0.1/callback"], ...options },
    { rotate: true, oldTokenValid: 0 },
    {
      clientId: randomToken("", 16).toLowerCase(),
      clientSecret: randomToken("", 32),
      users: DEFAULT_USERS,
    },
  );
  const { grants, counters, clientId, clientSecret } = core;
  const accessTtl = options.accessTokenTtlSeconds ?? 86399;
  const sim: LinearSimulator = core.handle({});
  const oauthError = (res: ServerResponse, status: number, error: string, description: string) =>
    sendJson(res, status, { error, error_description: description });

  const tokenResponse = (res: ServerResponse, grant: Grant, refreshToken: string | undefined) => {
    sendJson(res, 200, {
      access_token: grants.issueAccess(grant, "lin_oauth_", accessTtl),
      token_type: "Bearer",
      expires_in: accessTtl,
      scope: options.scopeFormat === "string" ? grant.scopes.join(",") : grant.scopes,
      refresh_token: refreshToken ?? grants.issueRefresh(grant, "lin_refresh_"),
    });
  };

  const fault = (res: ServerResponse): boolean => {
    const kind = core.faults.take();
    if (kind === "html")
      sendText(
        res,
        502,
        "<html><head><title>502 Bad Gateway</title></head><body>502 Bad Gateway</body></html>",
      );
    else if (kind === "no_token")
      sendJson(res, 200, { token_type: "Bearer", expires_in: accessTtl, scope: ["read"] });
    // https://linear.app/developers/rate-limiting: limited requests answer HTTP 400 with a RATELIMITED error and
    // the X-RateLimit-Requests-* headers.
    else if (kind === "rate_limit") {
      sendJson(
        res,
        400,
        { errors: [{ message: "Rate limit exceeded", extensions: { code: "RATELIMITED" } }] },
        {
          "x-ratelimit-requests-limit": "1500",
          "x-ratelimit-requests-remaining": "0",
          "x-ratelimit-requests-reset": String((core.clock.now() + 60) * 1000),
        },
      );
    } else if (kind === "server_error")
      oauthError(res, 500, "server_error", "Internal server error");
    return kind !== undefined;
  };

  // https://linear.app/developers/oauth-2-0-authentication ("Redirect user access requests to Linear")
  const authorize = (req: SimRequest, res: ServerResponse) => {
    const q = req.query;
    const redirectUri = q.get("redirect_uri") ?? "";
    if (q.get("client_id") !== clientId)
      return sendText(res, 400, "<html><p>Invalid client_id</p></html>");
    const registered = core.options.redirectUris ?? [];
    const loopbackOk = (() => {
      try {
        const u = new URL(redirectUri);
        return (
          u.hostname === "127.0.0.1" &&
          registered.some(
            (r) => new URL(r).hostname === "127.0.0.1" && new URL(r).pathname === u.pathname,
          )
        );
      } catch {
        return false;
      }
    })();
    if (!registered.includes(redirectUri) && !loopbackOk)
      return sendText(res, 400, "<html><p>Invalid redirect_uri</p></html>");
    counters.authorizations!++;
    const state = q.get("state") ?? undefined;
    const fail = (error: string, d: string) =>
      redirect(res, withQuery(redirectUri, { error, error_description: d, state }));
    // Comma separated per the docs; spaces are tolerated. "read" is always present.
    const scopes = [...new Set(["read", ...splitScopes(q.get("scope"), true)])];
    if (q.get("response_type") !== "code")
      return fail("unsupported_response_type", "response_type must be code");
    const bad = scopes.find((s) => !SCOPES.has(s));
    if (bad) return fail("invalid_scope", `Invalid scope: ${bad.slice(0, 64)}`);
    const method =
      q.get("code_challenge_method") ?? (q.get("code_challenge") ? "plain" : undefined);
    if (method !== undefined && !["plain", "S256"].includes(method))
      return fail("invalid_request", "Invalid code_challenge_method");
    const actor = q.get("actor") ?? "user";
    if (!["user", "app"].includes(actor))
      return fail("invalid_request", "actor must be user or app");
    if (sim.deny) return fail("access_denied", "The user denied the request");
    const grant = grants.create(core.findUser(sim.approveAs), clientId, scopes);
    const challenge = q.get("code_challenge") ?? undefined;
    const code = core.issueCode({ grant, redirectUri, challenge, method, extra: { actor } });
    redirect(res, withQuery(redirectUri, { code, state }));
  };

  // https://linear.app/developers/oauth-2-0-authentication ("Exchange code for an access token", "Refresh an access
  // token"): form body; client_secret may be left out when the code was issued with PKCE.
  const token = (req: SimRequest, res: ServerResponse) => {
    const params = readParams(req, false);
    if (!params) return oauthError(res, 400, "invalid_request", "Invalid request body");
    const auth = readClientAuth(req.headers, params);
    core.record(req, params, auth);
    if (fault(res)) return;
    if (auth.malformed || auth.clientId !== clientId)
      return oauthError(res, 401, "invalid_client", "Client authentication failed");
    if (auth.clientSecret !== undefined && auth.clientSecret !== clientSecret)
      return oauthError(res, 401, "invalid_client", "Client authentication failed");
    if (params.grant_type === "authorization_code") {
      counters.codeExchanges!++;
      const rec = core.takeCode(params.code);
      if (!rec || params.redirect_uri !== rec.redirectUri)
        return oauthError(res, 400, "invalid_grant", "Invalid authorization code");
      if (auth.clientSecret === undefined && rec.challenge === undefined)
        return oauthError(res, 401, "invalid_client", "Client authentication failed");
      const pkce =
        rec.method === "plain"
          ? params.code_verifier === rec.challenge
            ? undefined
            : "x"
          : checkPkce(rec.challenge, params.code_verifier);
      if (pkce) return oauthError(res, 400, "invalid_grant", "Invalid code verifier");
      return tokenResponse(res, rec.grant, undefined);
    }
    if (params.grant_type === "refresh_token") {
      counters.refreshGrants!++;
      if (auth.clientSecret === undefined)
        return oauthError(res, 401, "invalid_client", "Client authentication failed");
      const out = grants.useRefresh(params.refresh_token ?? "", clientId, "lin_refresh_");
      if (!out.ok) return oauthError(res, 400, "invalid_grant", "Invalid refresh token");
      return tokenResponse(res, out.grant, out.refreshToken);
    }
    return oauthError(res, 400, "unsupported_grant_type", "Unsupported grant type");
  };

  // https://linear.app/developers/oauth-2-0-authentication ("Revoke an access token"): the access token as Bearer
  // (200, or 400 when it cannot be revoked), or RFC 7009 `token` (+ token_type_hint) with client credentials.
  const revoke = (req: SimRequest, res: ServerResponse) => {
    const bearer = bearerToken(req.headers);
    let t = bearer;
    if (!t) {
      const params = readParams(req, false);
      const auth = params ? readClientAuth(req.headers, params) : undefined;
      if (!params?.token || auth?.clientId !== clientId || auth.clientSecret !== clientSecret)
        return oauthError(res, 400, "invalid_request", "Unable to revoke token");
      t = params.token;
    }
    const grant = grants.grantOfAccess(t) ?? (bearer ? undefined : grants.grantOfRefresh(t));
    if (!grant) return oauthError(res, 400, "invalid_token", "Unable to revoke token");
    counters.revocations!++;
    grants.revokeGrant(grant.id);
    res.writeHead(200).end();
  };

  // https://linear.app/developers/graphql ("Authentication", query { viewer { id name email } }).
  const graphql = (req: SimRequest, res: ServerResponse) => {
    counters.accountCalls!++;
    const t = bearerToken(req.headers);
    const grant = t ? grants.grantOfAccess(t) : undefined;
    if (!grant) {
      return sendJson(res, 401, {
        errors: [
          {
            message: "Authentication required, not authenticated",
            extensions: {
              type: "authentication error",
              code: "AUTHENTICATION_ERROR",
              userPresentableMessage: "You need to authenticate to access this operation.",
            },
          },
        ],
      });
    }
    let query = "";
    try {
      query = String((JSON.parse(req.body) as { query?: unknown }).query ?? "");
    } catch {}
    if (!/\bviewer\b/.test(query))
      return sendJson(res, 400, {
        errors: [
          {
            message: "This simulator answers only the viewer query",
            extensions: { code: "GRAPHQL_VALIDATION_FAILED" },
          },
        ],
      });
    const u = grant.user;
    const viewer: Record<string, unknown> = {
      id: u.id,
      name: u.name,
      email: u.email,
      displayName: u.login,
      avatarUrl: u.avatar,
      active: true,
    };
    const wanted = /viewer\s*\{([^}]*)\}/
      .exec(query)?.[1]
      ?.split(/[\s,]+/)
      .filter((f) => f in viewer);
    sendJson(res, 200, {
      data: {
        viewer: wanted?.length ? Object.fromEntries(wanted.map((f) => [f, viewer[f]])) : viewer,
      },
    });
  };

  const server = await listen((req, res) => {
    const route = `${req.method} ${req.path}`;
    if (route === "GET /oauth/authorize") return authorize(req, res);
    if (route === "POST /oauth/token") return token(req, res);
    if (route === "POST /oauth/revoke") return revoke(req, res);
    if (route === "POST /graphql") return graphql(req, res);
    sendJson(res, 404, { error: "not_found" });
  });
  sim.url = server.url;
  sim.close = server.close;
  return sim;
}
