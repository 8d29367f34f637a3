/** `WWW-Authenticate` challenges: an RFC 9110 §11.6.1 parser for clients and an RFC 6750 §3 Bearer builder for resource servers. */

import { AgentAuthError } from "../core/errors.ts";

/** Longer headers are refused before parsing: real challenges are a few hundred bytes. */
export const MAX_WWW_AUTHENTICATE_LENGTH = 8 * 1024;

/** One challenge. `scheme` is lower-cased (RFC 9110 §11.1: schemes are case-insensitive); `rawScheme` is as sent. */
export interface Challenge {
  readonly scheme: string;
  readonly rawScheme: string;
  /** Parameter names lower-cased (RFC 9110 §11.2), values unquoted and unescaped. */
  readonly parameters: Readonly<Record<string, string>>;
  readonly token68?: string;
}

/** The header does not follow RFC 9110's grammar. The message gives a position, never the header (it may carry tokens). */
export class ChallengeParseError extends AgentAuthError {
  readonly position: number;

  constructor(position: number, reason: string) {
    super(
      "www_authenticate_malformed",
      `Malformed WWW-Authenticate header at character ${position}: ${reason}. Treat the response as carrying no usable challenge.`,
    );
    this.position = position;
  }
}

/** A Bearer challenge option would produce an invalid or injectable header; fix the resource server's configuration. */
export class ChallengeBuildError extends AgentAuthError {
  constructor(option: string, reason: string) {
    super(
      "www_authenticate_invalid_value",
      `Cannot build a Bearer challenge: ${option} ${reason}.`,
    );
  }
}

// RFC 9110 §5.6.2: tchar = "!" / "#" / "$" / "%" / "&" / "'" / "*" / "+" / "-" / "." / "^" / "_" / "`" / "|" / "~" / DIGIT / ALPHA
const TCHAR_SYMBOLS = "!#$%&'*+-.^_`|~";
// RFC 9110 §11.2: token68 = 1*( ALPHA / DIGIT / "-" / "." / "_" / "~" / "+" / "/" ) *"="
const TOKEN68_SYMBOLS = "-._~+/";

const isAlnum = (c: string): boolean =>
  (c >= "a" && c <= "z") || (c >= "A" && c <= "Z") || (c >= "0" && c <= "9");
const isTchar = (c: string): boolean => isAlnum(c) || TCHAR_SYMBOLS.includes(c);
const isToken68Char = (c: string): boolean => isAlnum(c) || TOKEN68_SYMBOLS.includes(c);
const isOws = (c: string | undefined): boolean => c === " " || c === "\t";
/** HTAB / SP / VCHAR / obs-text: what a quoted-string may carry (RFC 9110 §5.6.4). Code points above 0xFF count as
 * obs-text, so a header some layer decoded as UTF-8 still parses. CR, LF, NUL and other controls never do. */
const isQuotableChar = (code: number): boolean =>
  code === 0x09 || (code >= 0x20 && code <= 0x7e) || code >= 0x80;

function fail(at: number, reason: string): never {
  throw new ChallengeParseError(at, reason);
}

/**
 * Parses a `WWW-Authenticate` value (several header lines may be joined with ", ") into its challenges.
 * Throws {@link ChallengeParseError} on anything outside the grammar; returns `[]` for an empty list.
 *
 * @example
 * const bearer = findBearerChallenge(parseWwwAuthenticate(response.headers.get("www-authenticate") ?? ""));
 * const prm = bearer && challengeResourceMetadata(bearer);
 */
export function parseWwwAuthenticate(header: string): Challenge[] {
  if (typeof header !== "string") throw new ChallengeParseError(0, "expected a string");
  if (header.length > MAX_WWW_AUTHENTICATE_LENGTH) {
    throw new ChallengeParseError(MAX_WWW_AUTHENTICATE_LENGTH, "longer than 8 KiB");
  }
  const s = header;
  const end = s.length;
  let pos = 0;
  const skipOws = (): void => {
    while (isOws(s[pos])) pos++;
  };
  const readToken = (): string => {
    const start = pos;
    while (pos < end && isTchar(s[pos]!)) pos++;
    return s.slice(start, pos);
  };
  const readQuotedString = (): string => {
    const start = pos++;
    let out = "";
    while (pos < end) {
      const c = s[pos]!;
      if (c === '"') {
        pos++;
        return out;
      }
      if (c === "\\") pos++; // quoted-pair = "\" ( HTAB / SP / VCHAR / obs-text )
      if (pos >= end) break;
      if (!isQuotableChar(s.charCodeAt(pos))) fail(pos, "control character in quoted-string");
      out += s[pos++];
    }
    return fail(start, "unterminated quoted-string");
  };
  // token68 only when nothing but OWS separates it from "," or the end; otherwise rewind and read auth-params.
  // This is how RFC 9110 §11.2's `token68 / #auth-param` alternative is told apart (`realm=x` vs `abc==`).
  const tryToken68 = (): string | undefined => {
    let i = pos;
    while (i < end && isToken68Char(s[i]!)) i++;
    if (i === pos) return undefined;
    while (s[i] === "=") i++;
    let j = i;
    while (isOws(s[j])) j++;
    if (j < end && s[j] !== ",") return undefined;
    const value = s.slice(pos, i);
    pos = i;
    return value;
  };
  // auth-param = token BWS "=" BWS ( token / quoted-string ), called with `pos` on the "=".
  const readParamValue = (params: Record<string, string>, name: string, nameAt: number): void => {
    pos++;
    skipOws();
    const valueAt = pos;
    const value = s[pos] === '"' ? readQuotedString() : readToken();
    if (pos === valueAt) fail(valueAt, "expected a token or quoted-string value");
    const key = name.toLowerCase();
    // RFC 9110 §11.2: "Each parameter name MUST only occur once per challenge." Reject rather than guess which wins.
    if (Object.hasOwn(params, key)) fail(nameAt, "duplicate auth-param in one challenge");
    // defineProperty, so a parameter named `__proto__` is stored as data instead of touching the prototype.
    Object.defineProperty(params, key, {
      value,
      enumerable: true,
      writable: true,
      configurable: true,
    });
  };

  const challenges: Challenge[] = [];
  let current:
    | { scheme: string; rawScheme: string; parameters: Record<string, string>; token68?: string }
    | undefined;
  let first = true;
  for (;;) {
    // RFC 9110 §5.6.1: list elements are separated by OWS "," OWS, and empty elements must be accepted and ignored.
    skipOws();
    if (!first) {
      if (pos >= end) break;
      if (s[pos] !== ",") fail(pos, "expected ',' between list elements");
    }
    first = false;
    while (s[pos] === "," || isOws(s[pos])) pos++;
    if (pos >= end) break;

    // In list position a token is either an auth-scheme (a new challenge) or, when "=" follows, an auth-param
    // of the current challenge: a comma separates both params and challenges (RFC 9110 §11.6.1).
    const nameAt = pos;
    const name = readToken();
    if (name === "") fail(nameAt, "expected an auth-scheme or auth-param name");
    const afterName = pos;
    skipOws();
    if (s[pos] === "=") {
      if (current === undefined) fail(nameAt, "auth-param before any auth-scheme");
      if (current.token68 !== undefined) fail(nameAt, "auth-param after a token68");
      readParamValue(current.parameters, name, nameAt);
      continue;
    }
    current = { scheme: name.toLowerCase(), rawScheme: name, parameters: {} };
    challenges.push(current);
    // challenge = auth-scheme [ 1*SP ( token68 / #auth-param ) ]
    if (pos === afterName || pos >= end || s[pos] === ",") continue;
    const token68 = tryToken68();
    if (token68 !== undefined) {
      current.token68 = token68;
      continue;
    }
    const paramAt = pos;
    const param = readToken();
    skipOws();
    if (param === "" || s[pos] !== "=")
      fail(paramAt, "expected a token68 or an auth-param after the auth-scheme");
    readParamValue(current.parameters, param, paramAt);
  }
  return challenges;
}

/** The first Bearer challenge (scheme compared case-insensitively), if any. */
export function findBearerChallenge(challenges: readonly Challenge[]): Challenge | undefined {
  return challenges.find((c) => c.scheme === "bearer");
}

/** The RFC 6750 §3 `error` code, e.g. `invalid_token`. */
export function challengeError(challenge: Challenge): string | undefined {
  return challenge.parameters.error;
}

/** The RFC 6750 §3 `error_description`, unescaped. For developers, never for end users. */
export function challengeErrorDescription(challenge: Challenge): string | undefined {
  return challenge.parameters.error_description;
}

/** The RFC 6750 §3 `scope`, split on spaces (RFC 6749 §3.3); `undefined` when absent. */
export function challengeScope(challenge: Challenge): string[] | undefined {
  return challenge.parameters.scope?.split(" ").filter((s) => s !== "");
}

/**
 * The RFC 9728 §5.1 `resource_metadata` URL, when it is an absolute http(s) URL; `undefined` otherwise.
 * Requiring https (and matching it to the resource) is the discovery step's job, which knows about loopback.
 */
export function challengeResourceMetadata(challenge: Challenge): URL | undefined {
  const value = challenge.parameters.resource_metadata;
  const url = value === undefined ? null : URL.parse(value);
  return url && (url.protocol === "https:" || url.protocol === "http:") ? url : undefined;
}

export type BearerErrorCode = "invalid_request" | "invalid_token" | "insufficient_scope";
/** RFC 9449 §7.1 and §9 add two codes for the DPoP scheme, both answered with 401. */
export type DpopErrorCode = BearerErrorCode | "invalid_dpop_proof" | "use_dpop_nonce";

export interface BearerChallengeOptions {
  realm?: string;
  /** Leave out when the request carried no credentials (RFC 6750 §3.1). */
  error?: BearerErrorCode;
  /** Sanitised to RFC 6750's charset; needs `error`. */
  errorDescription?: string;
  scope?: readonly string[];
  /** The RFC 9728 protected resource metadata URL. */
  resourceMetadata?: string;
}

export interface DpopChallengeOptions extends Omit<BearerChallengeOptions, "error"> {
  error?: DpopErrorCode;
  /** RFC 9449 §7.1 `algs`: the proof algorithms the resource server accepts. */
  algs?: readonly string[];
}

export interface BearerChallenge {
  status: 400 | 401 | 403;
  header: string;
}

// RFC 6750 §3.1 and RFC 9449 §7.1, §9: each error code names its status.
const STATUS_BY_ERROR: Record<DpopErrorCode, 400 | 401 | 403> = {
  invalid_request: 400,
  invalid_token: 401,
  insufficient_scope: 403,
  invalid_dpop_proof: 401,
  use_dpop_nonce: 401,
};
const BEARER_ERRORS = new Set<string>(["invalid_request", "invalid_token", "insufficient_scope"]);

/**
 * Builds an RFC 6750 §3 Bearer challenge and the status that goes with it. Configuration values (realm, scope,
 * resourceMetadata) containing control characters throw {@link ChallengeBuildError} instead of being stripped:
 * they would be header injection, and a silently altered realm or URL hides the bug. The description is free
 * text, often built from other errors, so it is sanitised instead.
 *
 * @example
 * const { status, header } = buildBearerChallenge({ realm: "mcp", resourceMetadata: prmUrl });
 * return new Response(null, { status, headers: { "www-authenticate": header } }); // 401, no error code
 */
export function buildBearerChallenge(options: BearerChallengeOptions = {}): BearerChallenge {
  if (options.error !== undefined && !BEARER_ERRORS.has(options.error)) {
    throw new ChallengeBuildError(
      "error",
      "must be invalid_request, invalid_token or insufficient_scope",
    );
  }
  return buildChallenge("Bearer", options);
}

/** The RFC 9449 §7.1 DPoP challenge: the Bearer parameters, `algs`, and the DPoP error codes. */
export function buildDpopChallenge(options: DpopChallengeOptions = {}): BearerChallenge {
  if (options.error !== undefined && !Object.hasOwn(STATUS_BY_ERROR, options.error)) {
    throw new ChallengeBuildError("error", "is not an RFC 6750 or RFC 9449 error code");
  }
  const extra: string[] = [];
  if (options.algs !== undefined && options.algs.length > 0) {
    for (const alg of options.algs) {
      if (!/^[A-Za-z0-9_-]+$/.test(alg))
        throw new ChallengeBuildError("algs", "holds a malformed algorithm");
    }
    extra.push(`algs=${quote(options.algs.join(" "))}`);
  }
  return buildChallenge("DPoP", options, extra);
}

/**
 * What a resource server answers with: the Bearer challenge, and with `dpop` the DPoP one beside it (RFC 9449 §7.1:
 * a server taking both schemes offers both; one requiring DPoP, or refusing a proof, offers DPoP alone).
 */
export function buildResourceChallenge(
  options: DpopChallengeOptions & { dpop?: { required?: boolean } },
): BearerChallenge {
  const { dpop, ...common } = options;
  const dpopOnly = common.error === "invalid_dpop_proof" || common.error === "use_dpop_nonce";
  const parts: BearerChallenge[] = [];
  if (!dpop?.required && !dpopOnly) {
    parts.push(
      buildBearerChallenge({ ...common, error: common.error as BearerErrorCode | undefined }),
    );
  }
  if (dpop) parts.push(buildDpopChallenge({ ...common, algs: common.algs ?? ["ES256"] }));
  if (parts.length === 0) throw new ChallengeBuildError("error", "is a DPoP error without DPoP");
  return {
    status: (parts[0] as BearerChallenge).status,
    header: parts.map((c) => c.header).join(", "),
  };
}

function buildChallenge(
  scheme: "Bearer" | "DPoP",
  options: DpopChallengeOptions,
  extra: string[] = [],
): BearerChallenge {
  const params: string[] = [];
  let status: 400 | 401 | 403 = 401;
  if (options.realm !== undefined) params.push(`realm=${quote(checkText("realm", options.realm))}`);
  if (options.error !== undefined) {
    status = STATUS_BY_ERROR[options.error];
    params.push(`error="${options.error}"`);
    if (options.errorDescription !== undefined) {
      params.push(`error_description=${quote(sanitizeErrorDescription(options.errorDescription))}`);
    }
  } else if (options.errorDescription !== undefined) {
    // RFC 6750 §3.1: without credentials the server "SHOULD NOT include an error code or other error information".
    throw new ChallengeBuildError("errorDescription", "needs an error code (RFC 6750 §3.1)");
  }
  if (options.scope !== undefined && options.scope.length > 0) {
    for (const token of options.scope) {
      // RFC 6749 §3.3: scope-token = 1*( %x21 / %x23-5B / %x5D-7E )
      if (token === "" || [...token].some((c) => !isDescriptionChar(c) || c === " ")) {
        throw new ChallengeBuildError("scope", "holds a token outside RFC 6749 §3.3's charset");
      }
    }
    params.push(`scope=${quote(options.scope.join(" "))}`);
  }
  if (options.resourceMetadata !== undefined) {
    const value = checkText("resourceMetadata", options.resourceMetadata);
    if (!URL.canParse(value))
      throw new ChallengeBuildError("resourceMetadata", "is not an absolute URL");
    params.push(`resource_metadata=${quote(value)}`);
  }
  params.push(...extra);
  return { status, header: params.length > 0 ? `${scheme} ${params.join(", ")}` : scheme };
}

// RFC 6750 §3: error_description uses %x20-21 / %x23-5B / %x5D-7E, so no quote, backslash, control or non-ASCII.
const isDescriptionChar = (c: string): boolean => c >= " " && c <= "~" && c !== '"' && c !== "\\";

/** Keeps the description readable: `"` becomes `'`, `\` becomes `/`, whitespace controls a space, the rest `?`. */
function sanitizeErrorDescription(text: string): string {
  let out = "";
  for (const c of text) {
    if (isDescriptionChar(c)) out += c;
    else if (c === '"') out += "'";
    else if (c === "\\") out += "/";
    else if (c === "\t" || c === "\r" || c === "\n") out += " ";
    else out += "?";
  }
  return out;
}

/** Printable ASCII, SP and HTAB only: anything else is injection (CR/LF) or not portable (obs-text). */
function checkText(option: string, value: string): string {
  for (const c of value) {
    if (c !== "\t" && (c < " " || c > "~")) {
      throw new ChallengeBuildError(option, "contains a control or non-ASCII character");
    }
  }
  return value;
}

/** RFC 9110 §5.6.4 quoted-string: escape the two characters that need it. */
function quote(value: string): string {
  let out = '"';
  for (const c of value) out += c === '"' || c === "\\" ? `\\${c}` : c;
  return `${out}"`;
}
