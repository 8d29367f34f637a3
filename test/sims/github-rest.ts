/** GitHub simulator: the REST side (GET /user, app authorization/token deletion), with rate-limit headers. */

import type { IncomingMessage, ServerResponse } from "node:http";
import { bearerToken, parseBasic, parseJson, sameSecret, sendJson } from "./common.ts";
import { sendFault } from "./github-answers.ts";
import type { GitHubModel } from "./github-state.ts";

const DOCS = "https://docs.github.com/rest";

/**
 * docs.github.com "Rate limits for the REST API" §"Checking the status of your rate limit": every answer carries
 * x-ratelimit-limit / -remaining / -used / -reset (UTC epoch seconds) / -resource.
 */
function rateHeaders(model: GitHubModel): Record<string, string> {
  const used = Math.min(model.counters.accountCalls, 5000);
  return {
    "x-ratelimit-limit": "5000",
    "x-ratelimit-remaining": String(5000 - used),
    "x-ratelimit-used": String(used),
    "x-ratelimit-reset": String(Math.floor(model.clock.now() / 1000) + 3600),
    "x-ratelimit-resource": "core",
    "x-github-api-version-selected": "2022-11-28",
  };
}

/** GET /user ("Users" REST: "Get the authenticated user"). */
export function handleUser(
  model: GitHubModel,
  origin: string,
  req: IncomingMessage,
  res: ServerResponse,
) {
  model.counters.accountCalls++;
  const fault = model.accountFaults.shift();
  if (fault) return sendFault(res, fault, model, true);
  // "Authenticating to the REST API": `Authorization: Bearer TOKEN` or the older `Authorization: token TOKEN`.
  const token = bearerToken(req.headers.authorization, ["bearer", "token"]);
  const record = token ? model.live(token) : null;
  if (!record) {
    // "Troubleshooting the REST API" §"401 Bad credentials".
    return sendJson(
      res,
      401,
      { message: "Bad credentials", documentation_url: DOCS, status: "401" },
      rateHeaders(model),
    );
  }
  const web = model.publicHost ?? origin;
  const user = record.user;
  // "Scopes for OAuth apps" §"Checking granted scopes": X-OAuth-Scopes lists the token's scopes.
  const scopeHeaders: Record<string, string> =
    model.appKind === "oauth_app" ? { "x-oauth-scopes": record.scope.split(",").join(", ") } : {};
  sendJson(
    res,
    200,
    {
      login: user.login,
      id: user.id,
      node_id: Buffer.from(`04:User${user.id}`).toString("base64"),
      avatar_url: `https://avatars.githubusercontent.com/u/${user.id}?v=4`,
      html_url: `${web}/${user.login}`,
      type: "User",
      site_admin: false,
      name: user.name,
      email: user.email,
    },
    { ...rateHeaders(model), ...scopeHeaders },
  );
}

/**
 * DELETE /applications/{client_id}/grant and /applications/{client_id}/token (REST "OAuth authorizations" /
 * "Apps: Delete an app authorization" and "Delete an app token"): Basic authentication with the client id and
 * secret, JSON body {"access_token"}; 204 on success, 422 for a bad body. "Delete an app authorization" says "You
 * must provide a valid OAuth access_token": an expired, revoked or unknown token is refused with 404 Not Found (the
 * status GitHub's REST API gives a resource it will not show; the docs list only 204 and 422), for both calls.
 * Deleting the grant deletes every token the app holds for that user ("Deleting an application's grant will also
 * delete all OAuth tokens associated with the application for the user"); deleting a token ("revoke a single
 * token") deletes that token. ASSUMPTION, not in the docs: a GitHub App token's refresh token goes with it (the docs
 * say nothing either way; "Refreshing user access tokens" pairs each refresh token with one access token).
 */
export function handleRevoke(
  model: GitHubModel,
  req: IncomingMessage,
  res: ServerResponse,
  body: Buffer,
  clientId: string,
  what: "grant" | "token",
) {
  const headers = rateHeaders(model);
  const basic = parseBasic(req.headers.authorization);
  if (!basic) {
    return sendJson(
      res,
      401,
      { message: "Requires authentication", documentation_url: DOCS },
      headers,
    );
  }
  if (basic.user !== model.clientId || !sameSecret(basic.password, model.clientSecret)) {
    return sendJson(res, 401, { message: "Bad credentials", documentation_url: DOCS }, headers);
  }
  if (clientId !== model.clientId) {
    return sendJson(res, 404, { message: "Not Found", documentation_url: DOCS }, headers);
  }
  const parsed = parseJson(body.toString("utf8")) as { access_token?: unknown } | null;
  if (parsed === null || typeof parsed !== "object" || typeof parsed.access_token !== "string") {
    return sendJson(
      res,
      422,
      { message: 'Invalid request.\n\n"access_token" wasn\'t supplied.', documentation_url: DOCS },
      headers,
    );
  }
  const record = model.live(parsed.access_token);
  if (!record)
    return sendJson(res, 404, { message: "Not Found", documentation_url: DOCS }, headers);
  model.counters.revocations++;
  if (what === "grant") model.revokeGrant(record.user.login);
  else model.revokeToken(parsed.access_token);
  res.writeHead(204, headers);
  res.end();
}
