/**
 * Pure rewriting of a provider's token-endpoint answer into the RFC 6749 §5.1/§5.2 shape oauth4webapi validates:
 * errors as 400 with `error`, tokens at the top level, space-separated scopes, a `token_type`. Nothing here is
 * lenient about what matters: an answer without an access token stays one without, and is refused downstream.
 */

import type { HttpQuirks } from "./types.ts";

export interface TokenAnswer {
  status: number;
  body: Record<string, unknown>;
}

export function normaliseTokenAnswer(answer: TokenAnswer, quirks: HttpQuirks): TokenAnswer {
  let { status } = answer;
  let body = { ...answer.body };
  if (quirks.okFalseErrors && body.ok === false) {
    const { ok: _ok, ...rest } = body;
    body = { ...rest, error: typeof rest.error === "string" ? rest.error : "unknown_error" };
    if (status < 400) status = 400;
  }
  if (quirks.errorsWithStatus200 && status === 200 && typeof body.error === "string") status = 400;
  if (typeof body.error === "string") {
    const mapped = quirks.errorCodes?.[body.error];
    if (mapped) {
      const description = typeof body.error_description === "string" ? body.error_description : "";
      body = {
        ...body,
        error: mapped,
        error_description: `${body.error}${description ? `: ${description}` : ""}`,
      };
    }
    return { status, body };
  }
  if (quirks.nestedTokens) body = liftNested(body, quirks.nestedTokens, quirks.requireNested);
  if (quirks.commaScopes && typeof body.scope === "string") body.scope = spaceScopes(body.scope);
  // Linear's documented token answer carries `scope` as a JSON array ("scope": ["read", "write"]).
  if (
    quirks.commaScopes &&
    Array.isArray(body.scope) &&
    body.scope.every((item) => typeof item === "string")
  ) {
    body.scope = spaceScopes(body.scope.join(" "));
  }
  if (quirks.bearerTokenType && typeof body.access_token === "string") {
    const type = typeof body.token_type === "string" ? body.token_type.toLowerCase() : "";
    // A bot's token is never relabelled as a bearer token for a person (it stays "bot", which is refused).
    if (type !== "bearer" && type !== "dpop" && type !== "bot") body.token_type = "bearer";
  }
  return { status, body };
}

/** `repo,gist` or `repo, gist` → `repo gist`. */
export function spaceScopes(scope: string): string {
  return scope
    .split(/[\s,]+/)
    .filter(Boolean)
    .join(" ");
}

/**
 * Slack's `oauth.v2.access` puts the user token in `authed_user` and a bot token (if any) at the top level. The
 * user token is what a tool acting for a person needs, so its fields replace the top-level token fields; the
 * rest of the body (`team`, `enterprise`, `authed_user` itself) stays for the account reader.
 */
function liftNested(
  body: Record<string, unknown>,
  key: string,
  required = false,
): Record<string, unknown> {
  const nested = body[key];
  if (typeof nested !== "object" || nested === null || Array.isArray(nested)) {
    // A flat answer (Slack's refresh answer) is the token itself, unless it says it is a bot's.
    const type = typeof body.token_type === "string" ? body.token_type.toLowerCase() : "";
    return required && type === "bot" ? withoutTokenFields(body) : body;
  }
  const inner = nested as Record<string, unknown>;
  if (typeof inner.access_token !== "string") return required ? withoutTokenFields(body) : body;
  const lifted: Record<string, unknown> = { ...body };
  for (const field of TOKEN_FIELDS) {
    if (field in inner) lifted[field] = inner[field];
    else delete lifted[field];
  }
  return lifted;
}

const TOKEN_FIELDS = [
  "access_token",
  "token_type",
  "scope",
  "refresh_token",
  "expires_in",
  "id_token",
] as const;

function withoutTokenFields(body: Record<string, unknown>): Record<string, unknown> {
  const out = { ...body };
  for (const field of TOKEN_FIELDS) delete out[field];
  return out;
}
