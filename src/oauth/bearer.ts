/** Reads the access token from an `Authorization: Bearer` header (RFC 6750 §2.1, RFC 9110 §11.6.2), without throwing. */

export type AuthorizationBearer =
  | { kind: "missing" }
  | { kind: "malformed" }
  | { kind: "token"; token: string };

// RFC 6750 §2.1: b64token = 1*( ALPHA / DIGIT / "-" / "." / "_" / "~" / "+" / "/" ) *"="
const B64TOKEN = /^[A-Za-z0-9\-._~+/]+=*$/;
// RFC 9110 §5.6.2 tchar: a scheme that merely starts with "Bearer" is another scheme.
const TCHAR = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]$/;
const isOws = (c: string | undefined): boolean => c === " " || c === "\t";

/**
 * Classifies an `Authorization` header value for a Bearer resource server:
 * - `missing`: no header, an empty one, or another scheme (`Basic …`). The request carries no Bearer credentials,
 *   so answer 401 with a challenge and no error code (RFC 6750 §3.1); RFC 9110 §11.6.1's challenge tells the
 *   client which scheme to use, which a 400 would not.
 * - `malformed`: the Bearer scheme with no token, several tokens, or characters outside b64token. Answer 400
 *   `invalid_request` (RFC 6750 §3.1).
 * - `token`: exactly one b64token after `Bearer` (scheme case-insensitive, RFC 9110 §11.1; 1*SP per §11.4).
 *
 * @example
 * const auth = parseAuthorizationBearer(request.headers.get("authorization"));
 * if (auth.kind === "malformed") return challengeResponse(buildBearerChallenge({ error: "invalid_request" }));
 */
export function parseAuthorizationBearer(header: string | null | undefined): AuthorizationBearer {
  return parseAuthorizationScheme(header, "bearer");
}

/** The same reading for RFC 9449 §7.1's `DPoP` scheme (its token68 is the same b64token). */
export function parseAuthorizationDpop(header: string | null | undefined): AuthorizationBearer {
  return parseAuthorizationScheme(header, "dpop");
}

function parseAuthorizationScheme(
  header: string | null | undefined,
  scheme: "bearer" | "dpop",
): AuthorizationBearer {
  // RFC 9110 §5.5: leading and trailing OWS is not part of the field value. (A loop: a trimming regex is
  // quadratic on long runs of inner whitespace.)
  const value = header ?? "";
  let start = 0;
  let end = value.length;
  while (start < end && isOws(value[start])) start++;
  while (end > start && isOws(value[end - 1])) end--;
  if (start === end) return { kind: "missing" };
  const length = scheme.length;
  if (value.slice(start, start + length).toLowerCase() !== scheme) return { kind: "missing" };
  const next = value[start + length];
  if (next !== undefined && TCHAR.test(next)) return { kind: "missing" }; // e.g. `BearerX …`
  // credentials = auth-scheme 1*SP token68 (RFC 9110 §11.4); a tab, comma or nothing there is not Bearer syntax.
  let tokenStart = start + length;
  while (value[tokenStart] === " ") tokenStart++;
  if (tokenStart === start + length) return { kind: "malformed" };
  const token = value.slice(tokenStart, end);
  return B64TOKEN.test(token) ? { kind: "token", token } : { kind: "malformed" };
}
