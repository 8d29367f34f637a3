/** GitLab OAuth 2.0 / OpenID Connect simulator for one instance (its own origin is the host, like a self-managed GitLab): discovery, authorize with PKCE, token, device authorization, RFC 7009 revoke, /oauth/userinfo and /api/v4/user, written from docs.gitlab.com/api/oauth2. */
import type { ServerResponse } from "node:http";
import {
  apiUser,
  DOORKEEPER,
  GITLAB_DEFAULT_USERS,
  gitlabDiscovery,
  userinfoClaims,
} from "./gitlab-meta.ts";
import { gitlabError, gitlabTokenEndpoints } from "./gitlab-token.ts";
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
  readClientAuth,
  readParams,
  redirect,
  type SimRequest,
  sendJson,
  sendText,
  withQuery,
} from "./sim-kit-b.ts";

export interface GitLabSimulatorOptions extends BaseOptions {
  /** Scopes the application was registered with (requests for others are invalid_scope). */
  scopes?: string[];
  /** Confidential application (default true): the client secret is required at the token endpoint. */
  confidential?: boolean;
}

export interface GitLabSimulator extends BaseSimulator, DeviceControls {
  jwks(): { keys: Record<string, unknown>[] };
}

/**
 * Registered redirect URIs match exactly, except that a loopback IP URI may use any port (RFC 8252 §7.3, which
 * Doorkeeper, GitLab's OAuth server, follows for native applications).
 */
function redirectAllowed(registered: string[], uri: string): boolean {
  if (registered.includes(uri)) return true;
  try {
    const u = new URL(uri);
    if (u.protocol !== "http:" || !["127.0.0.1", "[::1]"].includes(u.hostname)) return false;
    return registered.some((r) => {
      const g = new URL(r);
      return g.hostname === u.hostname && g.pathname === u.pathname && g.search === u.search;
    });
  } catch {
    return false;
  }
}

export async function startGitLabSimulator(
  options: GitLabSimulatorOptions = {},
): Promise<GitLabSimulator> {
  // Refresh tokens rotate and the used one dies at once (Doorkeeper without refresh_token_revoked_on_use).
  const core = new SimCore(
    { redirectUris: ["http://127.0.0.1/callback"], ...options },
    { rotate: true, oldTokenValid: 0 },
    {
      clientId: randomToken("", 32),
      clientSecret: randomToken("gloas-", 32),
      users: GITLAB_DEFAULT_USERS,
    },
  );
  const { grants, counters, clientId, clientSecret } = core;
  const appScopes = options.scopes ?? [
    "api",
    "read_api",
    "read_user",
    "read_repository",
    "openid",
    "profile",
    "email",
  ];
  const signer = new RsaSigner();
  const sim: GitLabSimulator = core.handle({ jwks: () => signer.jwks() });
  const endpoints = gitlabTokenEndpoints({
    core,
    signer,
    host: () => sim.url,
    accessTtl: options.accessTokenTtlSeconds ?? 7200,
    confidential: options.confidential ?? true,
    appScopes,
    deviceIntervalSeconds: options.deviceIntervalSeconds ?? 5,
    deviceCodeTtlSeconds: options.deviceCodeTtlSeconds ?? 300,
  });

  // https://docs.gitlab.com/api/oauth2/#authorization-code-with-proof-key-for-code-exchange-pkce (step 2)
  const authorize = (req: SimRequest, res: ServerResponse) => {
    const q = req.query;
    const redirectUri = q.get("redirect_uri") ?? "";
    // Unknown client or unregistered redirect URI: Doorkeeper renders an error page instead of redirecting.
    if (q.get("client_id") !== clientId)
      return sendText(res, 401, `<html><p>${DOORKEEPER.invalid_client}</p></html>`);
    if (!redirectAllowed(core.options.redirectUris ?? [], redirectUri)) {
      return sendText(res, 400, "<html><p>The redirect URI included is not valid.</p></html>");
    }
    counters.authorizations!++;
    const state = q.get("state") ?? undefined;
    const fail = (error: keyof typeof DOORKEEPER) =>
      redirect(res, withQuery(redirectUri, { error, error_description: DOORKEEPER[error], state }));
    const scopes = q.get("scope") ? splitScopes(q.get("scope")) : appScopes;
    const method =
      q.get("code_challenge_method") ?? (q.get("code_challenge") ? "plain" : undefined);
    if (q.get("response_type") !== "code") return fail("invalid_request");
    if (method !== undefined && !["plain", "S256"].includes(method)) return fail("invalid_request");
    if (scopes.some((s) => !appScopes.includes(s))) return fail("invalid_scope");
    if (sim.deny) return fail("access_denied");
    const grant = grants.create(
      core.findUser(sim.approveAs),
      clientId,
      scopes,
      q.get("nonce") ?? undefined,
    );
    const challenge = q.get("code_challenge") ?? undefined;
    const code = core.issueCode({ grant, redirectUri, challenge, method, extra: {} });
    redirect(res, withQuery(redirectUri, { code, state }));
  };

  // https://docs.gitlab.com/api/oauth2/#revoke-a-token: RFC 7009; client credentials; 200 also for unknown tokens
  // (RFC 7009 §2.2); revoking either token of a pair revokes the pair (here: the grant).
  const revoke = (req: SimRequest, res: ServerResponse) => {
    const params = readParams(req, true);
    if (!params?.token) return gitlabError(res, 400, "invalid_request");
    const auth = readClientAuth(req.headers, params);
    const secretOk =
      auth.clientSecret === clientSecret ||
      (options.confidential === false && auth.clientSecret === undefined);
    if (auth.malformed || auth.clientId !== clientId || !secretOk)
      return gitlabError(res, 401, "invalid_client");
    const grant = grants.grantOfAccess(params.token) ?? grants.grantOfRefresh(params.token);
    if (grant && grant.clientId !== clientId) {
      return sendJson(res, 403, {
        error: "unauthorized_client",
        error_description: "You are not authorized to revoke this token",
      });
    }
    counters.revocations!++;
    if (grant) grants.revokeGrant(grant.id);
    sendJson(res, 200, {});
  };

  // https://docs.gitlab.com/api/users/#get-the-current-user (read_user or api) and the OIDC userinfo endpoint.
  const account = (req: SimRequest, res: ServerResponse) => {
    counters.accountCalls!++;
    const t = bearerToken(req.headers) ?? req.query.get("access_token") ?? undefined;
    const grant = t ? grants.grantOfAccess(t) : undefined;
    if (!grant) {
      const h = {
        "www-authenticate":
          'Bearer realm="Protected by OAuth 2.0", error="invalid_token", error_description="Token is expired. You can either do re-authorization or token refresh."',
      };
      return sendJson(res, 401, { message: "401 Unauthorized" }, h);
    }
    const u = grant.user;
    if (req.path === "/oauth/userinfo") {
      if (!grant.scopes.includes("openid"))
        return sendJson(res, 403, {
          error: "insufficient_scope",
          error_description:
            "The request requires higher privileges than provided by the access token.",
          scope: "openid",
        });
      return sendJson(res, 200, userinfoClaims(sim.url, u));
    }
    if (!grant.scopes.some((s) => ["api", "read_api", "read_user"].includes(s))) {
      return sendJson(res, 403, {
        error: "insufficient_scope",
        error_description:
          "The request requires higher privileges than provided by the access token.",
        scope: "api read_user read_api",
      });
    }
    sendJson(res, 200, apiUser(sim.url, u, true));
  };

  const server = await listen((req, res) => {
    const route = `${req.method} ${req.path}`;
    if (
      route === "GET /.well-known/openid-configuration" ||
      route === "GET /.well-known/oauth-authorization-server"
    ) {
      return sendJson(res, 200, gitlabDiscovery(sim.url));
    }
    if (route === "GET /oauth/discovery/keys") return sendJson(res, 200, signer.jwks());
    if (route === "GET /oauth/authorize") return authorize(req, res);
    if (route === "POST /oauth/token") return endpoints.token(req, res);
    if (route === "POST /oauth/authorize_device") return endpoints.deviceCode(req, res);
    if (route === "POST /oauth/revoke") return revoke(req, res);
    if (
      route === "GET /oauth/userinfo" ||
      route === "POST /oauth/userinfo" ||
      route === "GET /api/v4/user"
    )
      return account(req, res);
    sendJson(res, 404, { message: "404 Not Found" });
  });
  sim.url = server.url;
  sim.close = server.close;
  return sim;
}
