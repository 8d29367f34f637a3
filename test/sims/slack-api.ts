/** Slack simulator: the Web API methods oauth.v2.access, auth.revoke and auth.test, and injected faults. */

import type { IncomingMessage, ServerResponse } from "node:http";
import {
  bearerToken,
  parseBasic,
  parseParams,
  redactParams,
  s256,
  sameSecret,
  sendJson,
  sendText,
} from "./common.ts";
import type { SlackFault, SlackModel } from "./slack-state.ts";

/**
 * "Web API basics" (https://docs.slack.dev/apis/web-api/) §"Evaluating responses": every answer is HTTP 200 JSON
 * with a boolean `ok`; a failure carries `error` (a short machine-readable code).
 */
function fail(res: ServerResponse, error: string, extra: Record<string, unknown> = {}) {
  sendJson(res, 200, { ok: false, error, ...extra });
}

/** Arguments from the query string and from a form or JSON body (the methods accept both content types). */
function argsOf(
  req: IncomingMessage,
  body: Buffer,
  query: URLSearchParams,
): Record<string, string> {
  return {
    ...Object.fromEntries(query),
    ...(parseParams(body, req.headers["content-type"]) ?? {}),
  };
}

export function sendFault(res: ServerResponse, fault: SlackFault, model: SlackModel) {
  if (fault === "html" || fault === "html200") {
    const page =
      "<!DOCTYPE html><html><head><title>Slack is down</title></head><body><h1>Slack is " +
      "temporarily unavailable</h1><p>Please try again in a few minutes.</p></body></html>";
    return sendText(res, fault === "html" ? 503 : 200, page, "text/html; charset=utf-8");
  }
  if (fault === "server_error") return sendText(res, 500, "Internal Server Error", "text/plain");
  if (fault === "no_token") {
    return sendJson(res, 200, {
      ok: true,
      app_id: model.appId,
      team: { id: model.team.id, name: model.team.name },
    });
  }
  // "Rate limits" (https://docs.slack.dev/apis/web-api/rate-limits) §"Responding to rate limiting conditions":
  // HTTP 429 Too Many Requests with a Retry-After header (seconds); the body says error "ratelimited".
  sendJson(
    res,
    429,
    { ok: false, error: "ratelimited" },
    { "retry-after": String(model.retryAfter) },
  );
}

/** POST /api/oauth.v2.access (https://docs.slack.dev/reference/methods/oauth.v2.access). */
export function handleAccess(
  model: SlackModel,
  req: IncomingMessage,
  res: ServerResponse,
  body: Buffer,
  query: URLSearchParams,
) {
  model.counters.tokenRequests++;
  const fault = model.tokenFaults.shift();
  if (fault) return sendFault(res, fault, model);
  const args = argsOf(req, body, query);
  // Arguments: client_id and client_secret as parameters or, preferably, "using the HTTP Basic authentication
  // scheme".
  const basic = parseBasic(req.headers.authorization);
  const clientId = basic ? basic.user : args.client_id;
  const clientSecret = basic ? basic.password : args.client_secret;
  model.last = {
    contentType: req.headers["content-type"] ?? null,
    accept: req.headers.accept ?? null,
    auth: basic ? "basic" : args.client_secret !== undefined ? "post" : "none",
    grantType: args.grant_type ?? null,
    params: redactParams(args),
  };
  // Errors table: invalid_client_id, bad_client_secret.
  if (clientId !== model.clientId) return fail(res, "invalid_client_id");
  if (clientSecret === undefined || !sameSecret(clientSecret, model.clientSecret)) {
    return fail(res, "bad_client_secret");
  }
  const grant = args.grant_type ?? "authorization_code";
  if (grant === "authorization_code") return exchange(model, res, args);
  if (grant === "refresh_token") return refresh(model, res, args);
  fail(res, "invalid_grant_type");
}

function exchange(model: SlackModel, res: ServerResponse, args: Record<string, string>) {
  model.counters.codeExchanges++;
  const code = args.code === undefined ? undefined : model.codes.get(args.code);
  // Errors: invalid_code ("Value passed for code was invalid"); a code is single use and short-lived.
  if (!code || code.expiresAt <= model.clock.now()) return fail(res, "invalid_code");
  // redirect_uri: "This must match the originally submitted URI (if one was sent)" → bad_redirect_uri.
  if (code.redirectUri !== null && args.redirect_uri !== code.redirectUri)
    return fail(res, "bad_redirect_uri");
  model.codes.delete(args.code!);
  // code_verifier: "The code_verifier param used to generate the code_challenge originally. Used for PKCE." No
  // dedicated error is documented for a wrong verifier; the code is refused as invalid_code.
  if (
    code.challenge !== null &&
    (args.code_verifier === undefined || s256(args.code_verifier) !== code.challenge)
  ) {
    return fail(res, "invalid_code");
  }
  const team = { id: model.team.id, name: model.team.name };
  // "Installing with OAuth" §"Exchanging a temporary authorization code for an access token": the bot token at
  // the top level (only when bot scopes were requested), the user token nested in authed_user.
  const bot = code.botScope ? model.mint("bot", code.user, code.botScope) : null;
  const user = code.userScope ? model.mint("user", code.user, code.userScope) : null;
  sendJson(res, 200, {
    ok: true,
    app_id: model.appId,
    authed_user: { id: code.user.id, ...(user ?? {}) },
    ...(bot ? { ...bot, bot_user_id: "U0SIMBOT01" } : {}),
    team,
    enterprise: null,
    is_enterprise_install: false,
  });
}

function refresh(model: SlackModel, res: ServerResponse, args: Record<string, string>) {
  model.counters.refreshGrants++;
  // "Using token rotation" §"Refresh": grant_type=refresh_token at oauth.v2.access; "The refresh token is then
  // revoked, and a new refresh token is used". A used or unknown one answers invalid_refresh_token.
  const old =
    args.refresh_token === undefined ? undefined : model.refreshTokens.get(args.refresh_token);
  if (!old) return fail(res, "invalid_refresh_token");
  model.refreshTokens.delete(args.refresh_token!);
  const previous = model.tokens.get(old.accessToken);
  if (previous) previous.refreshToken = null;
  // The refresh answer is flat: access_token, refresh_token, expires_in and token_type ("user" or "bot") at the
  // top level, whichever kind of token was refreshed (Slack's SDK token rotators read it so).
  const minted = model.mint(old.kind, old.user, old.scope, old.grantId);
  sendJson(res, 200, {
    ok: true,
    app_id: model.appId,
    ...minted,
    ...(old.kind === "bot" ? { bot_user_id: "U0SIMBOT01" } : { user_id: old.user.id }),
    team: { id: model.team.id, name: model.team.name },
    enterprise: null,
    is_enterprise_install: false,
  });
}

/** The token of a Web API call: `Authorization: Bearer` or a `token` argument. */
function callToken(req: IncomingMessage, args: Record<string, string>): string | null {
  return bearerToken(req.headers.authorization) ?? args.token ?? null;
}

/** /api/auth.revoke (https://docs.slack.dev/reference/methods/auth.revoke): `test` revokes nothing. */
export function handleRevoke(
  model: SlackModel,
  req: IncomingMessage,
  res: ServerResponse,
  body: Buffer,
  query: URLSearchParams,
) {
  const args = argsOf(req, body, query);
  const token = callToken(req, args);
  const status = model.check(token);
  if (status !== "ok") return fail(res, status);
  const test = args.test === "true" || args.test === "1";
  if (!test) {
    model.revoke(token!);
    model.counters.revocations++;
  }
  sendJson(res, 200, { ok: true, revoked: !test });
}

/** /api/auth.test (https://docs.slack.dev/reference/methods/auth.test): who a token belongs to. */
export function handleAuthTest(
  model: SlackModel,
  req: IncomingMessage,
  res: ServerResponse,
  body: Buffer,
  query: URLSearchParams,
) {
  model.counters.accountCalls++;
  const fault = model.accountFaults.shift();
  if (fault) return sendFault(res, fault, model);
  const args = argsOf(req, body, query);
  const token = callToken(req, args);
  const status = model.check(token);
  if (status !== "ok") return fail(res, status);
  const record = model.tokens.get(token!)!;
  sendJson(res, 200, {
    ok: true,
    url: `https://${model.team.domain}.slack.com/`,
    team: model.team.name,
    user: record.kind === "bot" ? "simbot" : record.user.name,
    team_id: model.team.id,
    user_id: record.kind === "bot" ? "U0SIMBOT01" : record.user.id,
    ...(record.kind === "bot" ? { bot_id: "B0SIMBOT01" } : {}),
    is_enterprise_install: false,
  });
}

/**
 * /api/users.identity (https://docs.slack.dev/reference/methods/users.identity): the signed-in user of a user token
 * with identity.basic ({name, id}, plus email with identity.email) and the team id; other tokens get the documented
 * not_allowed_token_type / missing_scope errors.
 */
export function handleUsersIdentity(
  model: SlackModel,
  req: IncomingMessage,
  res: ServerResponse,
  body: Buffer,
  query: URLSearchParams,
) {
  model.counters.accountCalls++;
  const fault = model.accountFaults.shift();
  if (fault) return sendFault(res, fault, model);
  const args = argsOf(req, body, query);
  const token = callToken(req, args);
  const status = model.check(token);
  if (status !== "ok") return fail(res, status);
  const record = model.tokens.get(token!)!;
  if (record.kind !== "user") return fail(res, "not_allowed_token_type");
  const scopes = record.scope.split(",");
  if (!scopes.includes("identity.basic")) {
    return fail(res, "missing_scope", { needed: "identity.basic", provided: record.scope });
  }
  sendJson(res, 200, {
    ok: true,
    user: {
      name: record.user.realName,
      id: record.user.id,
      ...(scopes.includes("identity.email") ? { email: record.user.email } : {}),
    },
    team: { id: model.team.id },
  });
}
