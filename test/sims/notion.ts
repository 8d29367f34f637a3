/** Notion public-connection OAuth simulator: api.notion.com/v1/oauth/authorize (owner=user), /v1/oauth/token (HTTP Basic client credentials, JSON body, rolling refresh tokens), /v1/oauth/revoke, /v1/oauth/introspect and GET /v1/users/me (Notion-Version) on one loopback origin at the real paths, written from developers.notion.com. */
import { randomUUID } from "node:crypto";
import type { ServerResponse } from "node:http";
import { type BaseOptions, type BaseSimulator, SimCore } from "./sim-core-b.ts";
import type { Grant, SimUser } from "./sim-grants-b.ts";
import {
  BoundedMap,
  bearerToken,
  listen,
  mediaType,
  randomToken,
  readClientAuth,
  readParams,
  redirect,
  type SimRequest,
  sendJson,
  sendText,
  withQuery,
} from "./sim-kit-b.ts";

export interface NotionSimulatorOptions extends BaseOptions {
  /** Access tokens carry no expires_in; give a lifetime here to make them stop working (unannounced). */
  accessTokenTtlSeconds?: number;
}

export interface NotionSimulator extends BaseSimulator {}

const DEFAULT_USERS: SimUser[] = [
  {
    id: "6794760a-1f15-45cd-9c65-0dfe42f5135a",
    login: "alice",
    name: "Alice Example",
    email: "alice@example.com",
    avatar: "https://s3-us-west-2.amazonaws.com/public.notion-static.com/alice.png",
    extra: {
      workspace_id: "9f3ba1f6-6f4a-4b8e-8f1c-1c2d3e4f5a6b",
      workspace_name: "Alice's Notion",
      workspace_icon: "https://www.notion.so/images/page-cover/woodcuts_1.jpg",
    },
  },
];

const requestId = () => randomUUID();

export async function startNotionSimulator(
  options: NotionSimulatorOptions = {},
): Promise<NotionSimulator> {
  // https://developers.notion.com/reference/refresh-a-token: "generating a new access token and new refresh
  // token"; the used refresh token is invalidated (rolling refresh tokens).
  const core = new SimCore(
    { redirectUris: ["http://127.0.0.1/callback"], ...options },
    { rotate: true, oldTokenValid: 0 },
    { clientId: randomUUID(), clientSecret: randomToken("secret_", 32), users: DEFAULT_USERS },
  );
  const { grants, counters, clientId, clientSecret } = core;
  const accessTtl = options.accessTokenTtlSeconds ?? 100 * 365 * 86400;
  const botIds = new BoundedMap<string, string>();
  const sim: NotionSimulator = core.handle({});

  // OAuth endpoints answer RFC 6749 errors ({"error", "error_description"}) plus Notion's request_id.
  const oauthError = (res: ServerResponse, status: number, error: string, description: string) =>
    sendJson(res, status, { error, error_description: description, request_id: requestId() });
  // https://developers.notion.com/reference/status-codes#error-codes: {"object": "error", "status", "code", "message"}.
  const apiError = (
    res: ServerResponse,
    status: number,
    code: string,
    message: string,
    h: Record<string, string> = {},
  ) =>
    sendJson(res, status, { object: "error", status, code, message, request_id: requestId() }, h);

  const ownerOf = (u: SimUser) => ({
    type: "user",
    user: {
      object: "user",
      id: u.id,
      name: u.name,
      avatar_url: u.avatar,
      type: "person",
      person: { email: u.email },
    },
  });

  // https://developers.notion.com/reference/create-a-token (200 response body).
  const tokenResponse = (res: ServerResponse, grant: Grant, refreshToken: string | undefined) => {
    const u = grant.user;
    const bot = botIds.get(grant.id) ?? randomUUID();
    botIds.set(grant.id, bot);
    sendJson(res, 200, {
      access_token: grants.issueAccess(grant, "ntn_", accessTtl),
      token_type: "bearer",
      refresh_token: refreshToken ?? grants.issueRefresh(grant, "nrt_"),
      bot_id: bot,
      workspace_icon: u.extra?.workspace_icon ?? null,
      workspace_name: u.extra?.workspace_name ?? null,
      workspace_id: u.extra?.workspace_id ?? randomUUID(),
      owner: ownerOf(u),
      duplicated_template_id: null,
      request_id: requestId(),
    });
  };

  const fault = (res: ServerResponse): boolean => {
    const kind = core.faults.take();
    if (kind === "html")
      sendText(
        res,
        502,
        "<html><head><title>502 Bad Gateway</title></head><body><center><h1>502 Bad Gateway</h1></center><hr><center>cloudflare</center></body></html>",
      );
    else if (kind === "no_token")
      sendJson(res, 200, { token_type: "bearer", bot_id: randomUUID(), request_id: requestId() });
    // https://developers.notion.com/reference/request-limits: 429 rate_limited with Retry-After (seconds).
    else if (kind === "rate_limit")
      apiError(
        res,
        429,
        "rate_limited",
        "You have been rate limited. Please try again in a few minutes.",
        { "retry-after": "30" },
      );
    else if (kind === "server_error")
      apiError(res, 500, "internal_server_error", "Unexpected error occurred.");
    return kind !== undefined;
  };

  // https://developers.notion.com/docs/authorization#step-1-navigate-the-user-to-the-integrations-authorization-url
  const authorize = (req: SimRequest, res: ServerResponse) => {
    const q = req.query;
    const given = q.get("redirect_uri") ?? undefined;
    const registered = core.options.redirectUris ?? [];
    if (q.get("client_id") !== clientId)
      return sendText(res, 400, "<html><p>Invalid client_id.</p></html>");
    // Without redirect_uri Notion uses the only registered one; with one, it must be registered (a loopback URI
    // matches the registered loopback path on any port).
    const target = given ?? (registered.length === 1 ? registered[0] : undefined);
    const ok = (uri: string | undefined) => {
      if (!uri) return false;
      if (registered.includes(uri)) return true;
      try {
        const u = new URL(uri);
        return (
          u.hostname === "127.0.0.1" &&
          registered.some(
            (r) => new URL(r).hostname === "127.0.0.1" && new URL(r).pathname === u.pathname,
          )
        );
      } catch {
        return false;
      }
    };
    if (!ok(target)) return sendText(res, 400, "<html><p>Invalid redirect_uri.</p></html>");
    counters.authorizations!++;
    const state = q.get("state") ?? undefined;
    if (q.get("response_type") !== "code" || q.get("owner") !== "user") {
      return redirect(
        res,
        withQuery(target!, {
          error: "invalid_request",
          error_description: "owner=user and response_type=code are required",
          state,
        }),
      );
    }
    if (sim.deny) return redirect(res, withQuery(target!, { error: "access_denied", state }));
    const grant = grants.create(core.findUser(sim.approveAs), clientId, []);
    const code = core.issueCode({
      grant,
      redirectUri: given,
      challenge: undefined,
      method: undefined,
      extra: {},
    });
    redirect(res, withQuery(target!, { code, state }));
  };

  // Basic client credentials and a JSON body (create-a-token, refresh-a-token, revoke-token, introspect-token).
  const clientCall = (req: SimRequest, res: ServerResponse): Record<string, string> | undefined => {
    if (mediaType(req.headers) !== "application/json") {
      apiError(res, 400, "validation_error", "Content-Type must be application/json.");
      return undefined;
    }
    const params = readParams(req, true);
    if (!params) {
      apiError(res, 400, "invalid_json", "Error parsing JSON body.");
      return undefined;
    }
    const auth = readClientAuth(req.headers, params);
    if (req.path === "/v1/oauth/token") core.record(req, params, auth);
    if (req.path === "/v1/oauth/token" && fault(res)) return undefined;
    if (
      auth.method !== "basic" ||
      auth.malformed ||
      auth.clientId !== clientId ||
      auth.clientSecret !== clientSecret
    ) {
      oauthError(
        res,
        401,
        "invalid_client",
        "Client authentication failed: use HTTP Basic with the client ID and secret.",
      );
      return undefined;
    }
    return params;
  };

  const token = (req: SimRequest, res: ServerResponse) => {
    const params = clientCall(req, res);
    if (!params) return;
    if (params.grant_type === "authorization_code") {
      counters.codeExchanges!++;
      const rec = core.takeCode(params.code);
      if (!rec) return oauthError(res, 400, "invalid_grant", "Invalid code.");
      // redirect_uri is required when the authorization URL had one and not allowed when it did not (create-a-token).
      if (params.redirect_uri !== rec.redirectUri)
        return oauthError(res, 400, "invalid_grant", "Invalid redirect_uri.");
      return tokenResponse(res, rec.grant, undefined);
    }
    if (params.grant_type === "refresh_token") {
      counters.refreshGrants!++;
      const out = grants.useRefresh(params.refresh_token ?? "", clientId, "nrt_");
      if (!out.ok) return oauthError(res, 400, "invalid_grant", "Invalid refresh token.");
      return tokenResponse(res, out.grant, out.refreshToken);
    }
    return oauthError(res, 400, "unsupported_grant_type", "Unsupported grant_type.");
  };

  // https://developers.notion.com/reference/revoke-token and /reference/introspect-token
  const revoke = (req: SimRequest, res: ServerResponse) => {
    const params = clientCall(req, res);
    if (!params) return;
    const grant =
      grants.grantOfAccess(params.token ?? "") ?? grants.grantOfRefresh(params.token ?? "");
    if (!grant) return oauthError(res, 400, "invalid_token", "Token not found.");
    counters.revocations!++;
    grants.revokeGrant(grant.id);
    sendJson(res, 200, { request_id: requestId() });
  };
  const introspect = (req: SimRequest, res: ServerResponse) => {
    const params = clientCall(req, res);
    if (!params) return;
    const grant = grants.grantOfAccess(params.token ?? "");
    sendJson(
      res,
      200,
      grant
        ? {
            active: true,
            scope: "read_content update_content insert_content",
            iat: grant.createdAt,
            request_id: requestId(),
          }
        : { active: false, request_id: requestId() },
    );
  };

  // https://developers.notion.com/reference/get-self: the bot user of the token, owned by the person who installed it.
  const me = (req: SimRequest, res: ServerResponse) => {
    counters.accountCalls!++;
    const t = bearerToken(req.headers);
    const grant = t ? grants.grantOfAccess(t) : undefined;
    if (!grant) return apiError(res, 401, "unauthorized", "API token is invalid.");
    // https://developers.notion.com/reference/versioning: every request names a Notion-Version.
    const version = req.headers["notion-version"];
    if (typeof version !== "string" || !/^\d{4}-\d{2}-\d{2}$/.test(version)) {
      return apiError(
        res,
        400,
        "missing_version",
        `Notion-Version header failed validation: Notion-Version header should be defined, instead was \`${String(version)}\`.`,
      );
    }
    const u = grant.user;
    sendJson(res, 200, {
      object: "user",
      id: botIds.get(grant.id) ?? randomUUID(),
      name: "agentauth test connection",
      avatar_url: null,
      type: "bot",
      bot: { owner: ownerOf(u), workspace_name: u.extra?.workspace_name ?? null },
      request_id: requestId(),
    });
  };

  const server = await listen((req, res) => {
    const route = `${req.method} ${req.path}`;
    if (route === "GET /v1/oauth/authorize") return authorize(req, res);
    if (route === "POST /v1/oauth/token") return token(req, res);
    if (route === "POST /v1/oauth/revoke") return revoke(req, res);
    if (route === "POST /v1/oauth/introspect") return introspect(req, res);
    if (route === "GET /v1/users/me") return me(req, res);
    apiError(res, 404, "object_not_found", "Invalid request URL.");
  });
  sim.url = server.url;
  sim.close = server.close;
  return sim;
}
