/**
 * Every check the console's server makes, as pure functions (the server only wires them to requests). The model is
 * Jupyter's local server: loopback only, a Host allow-list against DNS rebinding, a one-time login token that
 * becomes an HttpOnly SameSite=Strict session cookie, a CSRF token for every state change, and no CORS at all.
 */

import { createHash, randomBytes, timingSafeEqual } from "node:crypto";

export const SESSION_COOKIE = "agentauth_console";
export const MAX_BODY_BYTES = 16 * 1024;

/** Sent with every answer (docs/console.md "Security"). */
export const SECURITY_HEADERS: Readonly<Record<string, string>> = {
  "cache-control": "no-store",
  "content-security-policy":
    "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self' data:; " +
    "form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
  "x-frame-options": "DENY",
  "x-content-type-options": "nosniff",
  "referrer-policy": "no-referrer",
};

/** A refusal: the HTTP status and the typed error the API answers. */
export interface Refusal {
  status: 400 | 401 | 403 | 404 | 405 | 413 | 415 | 421;
  code: string;
  message: string;
}

/** 256 random bits, base64url: login tokens, session ids, CSRF tokens. */
export function randomToken(): string {
  return randomBytes(32).toString("base64url");
}

/** Constant-time equality of two strings (digests first, so lengths leak nothing either). */
export function sameSecret(a: string, b: string): boolean {
  const da = createHash("sha256").update(a).digest();
  const db = createHash("sha256").update(b).digest();
  return timingSafeEqual(da, db) && a.length === b.length;
}

/** DNS rebinding: only our own loopback names with our port reach the console. */
export function checkHost(host: string | undefined, port: number): Refusal | undefined {
  const allowed = [`127.0.0.1:${port}`, `localhost:${port}`];
  if (typeof host === "string" && allowed.includes(host.toLowerCase())) return undefined;
  return {
    status: 421,
    code: "console_host_refused",
    message: `This console answers only at http://127.0.0.1:${port}/ (the Host header named another site).`,
  };
}

/** The console's own origins: what an `Origin` header may say. */
export function ownOrigins(port: number): string[] {
  return [`http://127.0.0.1:${port}`, `http://localhost:${port}`];
}

/**
 * Fetch metadata: only the console's own pages (`same-origin`) and the person's own navigation (`none`, or no header
 * from older clients) pass. `same-site` is refused too: any other 127.0.0.1 port is the same site, since ports do not
 * count. An `Origin`, when sent, must be ours.
 */
export function checkSite(
  headers: { origin?: string | undefined; secFetchSite?: string | undefined },
  port: number,
): Refusal | undefined {
  const site = headers.secFetchSite?.toLowerCase();
  if (site !== undefined && site !== "same-origin" && site !== "none") {
    return {
      status: 403,
      code: "console_cross_site",
      message: "Requests from other sites are refused.",
    };
  }
  if (headers.origin !== undefined && !ownOrigins(port).includes(headers.origin.toLowerCase())) {
    return {
      status: 403,
      code: "console_origin_refused",
      message: "Requests from other origins are refused.",
    };
  }
  return undefined;
}

/** State changes carry `application/json` (a form post cannot), which also forces a CORS preflight. */
export function checkJsonContentType(contentType: string | undefined): Refusal | undefined {
  const type = contentType?.split(";")[0]?.trim().toLowerCase();
  if (type === "application/json") return undefined;
  return {
    status: 415,
    code: "console_content_type",
    message: "Send the request body as application/json.",
  };
}

/** The CSRF header must equal the session's token. */
export function checkCsrf(header: string | undefined, expected: string): Refusal | undefined {
  if (
    typeof header === "string" &&
    header.length > 0 &&
    header.length <= 256 &&
    sameSecret(header, expected)
  ) {
    return undefined;
  }
  return {
    status: 403,
    code: "console_csrf_refused",
    message: "The request's x-csrf-token header is missing or wrong; reload the console page.",
  };
}

/** One cookie's value from a `Cookie` header (the last one when repeated), or undefined. */
export function cookieValue(header: string | undefined, name: string): string | undefined {
  if (!header) return undefined;
  let found: string | undefined;
  for (const part of header.split(";")) {
    const at = part.indexOf("=");
    if (at < 0) continue;
    if (part.slice(0, at).trim() === name) found = part.slice(at + 1).trim();
  }
  return found;
}

export function sessionCookie(id: string): string {
  return `${SESSION_COOKIE}=${id}; HttpOnly; SameSite=Strict; Path=/`;
}

/**
 * Binds a Connect's `state` to the browser that started it. SameSite=Lax, since the authorization server sends the
 * browser back with a cross-site redirect (a Strict cookie would stay home); only the callback path sees it.
 *
 * No `__Host-` prefix, unlike the RAP tool's sign-in cookie (rap/tool/browser-binding.ts): the console is only ever
 * http://127.0.0.1 (or localhost), so no network attacker sits on the path and an IP host takes no `Domain=`; the
 * only ones able to set a cookie for it are other servers on this machine, which the prefix would not stop (to a
 * browser that accepts `Secure` from loopback http at all, they are the same host), and which can already read the
 * session cookie (docs/console.md, residual risks). The prefix would need `Secure`, which not every browser takes
 * from plain http. A cookie that is there with another value is refused like a missing one (Connector.complete).
 */
export const CONNECT_COOKIE = "agentauth_connect";

export function connectCookie(binding: string): string {
  return `${CONNECT_COOKIE}=${binding}; HttpOnly; SameSite=Lax; Path=/connect/callback; Max-Age=900`;
}

export interface ConsoleSession {
  id: string;
  csrf: string;
  /** The value of the Connect cookie this session's sign-ins are bound to. */
  connectBinding: string;
  createdAt: number;
}

/** How long a link minted by `agentauth console --link` works (the printed one works until it is used). */
export const FRESH_LINK_TTL_MS = 10 * 60_000;
/** Fresh links outstanding at once: the oldest gives way. */
const MAX_FRESH_LINKS = 8;

/**
 * The login tokens and the sessions they opened. Each token works once; the printed one has no expiry, the fresh
 * ones `agentauth console --link` asks for expire after 10 minutes. Each session has its own CSRF token. Only
 * digests of tokens and ids are kept as map keys, and the final comparison is constant-time.
 */
export class SessionBook {
  #loginToken: string | undefined = randomToken();
  readonly #fresh = new Map<string, { token: string; expiresAt: number }>();
  readonly #sessions = new Map<string, ConsoleSession>();

  /** The one-time token for the printed login link (undefined once used). */
  get loginToken(): string | undefined {
    return this.#loginToken;
  }

  /** A new one-time token for `agentauth console --link`. */
  mintLoginToken(now = Date.now()): string {
    const token = randomToken();
    this.#fresh.set(digest(token), { token, expiresAt: now + FRESH_LINK_TTL_MS });
    while (this.#fresh.size > MAX_FRESH_LINKS) {
      const oldest = this.#fresh.keys().next().value;
      if (oldest === undefined) break;
      this.#fresh.delete(oldest);
    }
    return token;
  }

  /** Redeems a login token: a new session, or undefined when the token is wrong, used or expired. */
  redeem(token: string | null | undefined, now = Date.now()): ConsoleSession | undefined {
    if (typeof token !== "string" || token.length === 0 || token.length > 256) return undefined;
    const expected = this.#loginToken;
    if (expected && sameSecret(token, expected)) {
      this.#loginToken = undefined;
    } else {
      const key = digest(token);
      const fresh = this.#fresh.get(key);
      if (!fresh || !sameSecret(token, fresh.token)) return undefined;
      this.#fresh.delete(key);
      if (fresh.expiresAt <= now) return undefined;
    }
    const session: ConsoleSession = {
      id: randomToken(),
      csrf: randomToken(),
      connectBinding: randomToken(),
      createdAt: now,
    };
    this.#sessions.set(digest(session.id), session);
    return session;
  }

  /** The session the request's cookie names, if any. */
  find(cookieHeader: string | undefined): ConsoleSession | undefined {
    const id = cookieValue(cookieHeader, SESSION_COOKIE);
    if (!id || id.length > 256) return undefined;
    const session = this.#sessions.get(digest(id));
    return session && sameSecret(session.id, id) ? session : undefined;
  }
}

/** `Authorization: Bearer <link key>` of `agentauth console --link` (link-file.ts), compared in constant time. */
export function checkLinkKey(header: string | undefined, key: string): Refusal | undefined {
  const presented = /^Bearer ([A-Za-z0-9_-]{1,256})$/.exec(header ?? "")?.[1];
  if (presented && sameSecret(presented, key)) return undefined;
  return {
    status: 401,
    code: "console_link_key_refused",
    message:
      "Only `agentauth console --link`, run by the console's own user, may ask for a fresh link.",
  };
}

function digest(value: string): string {
  return createHash("sha256").update(value).digest("hex");
}
