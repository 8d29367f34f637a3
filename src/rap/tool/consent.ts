/**
 * The consent step between `auth_url` and the provider (issue 8 §1.2). RAP hands the tool's authorization link to
 * whatever the runtime shows it to; whoever completes it binds *their* provider account to the invocation's
 * `user_id`. So `auth_url` leads first to a page of the tool's naming the tool, the provider, the scopes and the
 * `user_id` the connection will belong to, and only a POST of that page (per-link CSRF token, same-site cookie)
 * goes on to the provider. Entries are single use, expire with the authorization, and are bounded in number.
 */

import { createHash, randomBytes, timingSafeEqual } from "node:crypto";

export interface ConsentRequest {
  toolName: string;
  operation: string;
  provider: string;
  providerName: string;
  /** Where the person will sign in (the issuer's host), so a look-alike provider stands out. */
  providerHost: string;
  scopes: string[];
  userId: string;
  /** The provider's authorization URL (PKCE + state); only revealed by a valid Continue. */
  authorizationUrl: URL;
  /** The OAuth state inside authorizationUrl, to burn on Cancel. */
  state: string;
  /**
   * The cookie value Continue gives the browser (browser-binding.ts); the redirect is refused without it. Absent in
   * links made before it existed: their sign-ins are refused at the redirect.
   */
  browserBinding?: string;
  groupId: string;
  id: string;
  attempt: string;
}

export interface ConsentEntry extends ConsentRequest {
  csrf: string;
  expiresAt: number;
}

export class ConsentLinks {
  readonly #ttlMs: number;
  readonly #max: number;
  readonly #entries = new Map<string, ConsentEntry>();

  constructor(ttlMs: number, maxEntries: number) {
    this.#ttlMs = ttlMs;
    this.#max = Math.max(1, maxEntries);
  }

  /** A new single-use link id (256 bits) for `request`. */
  create(request: ConsentRequest, now = Date.now()): string {
    this.#sweep(now);
    while (this.#entries.size >= this.#max) {
      const oldest = this.#entries.keys().next().value;
      if (oldest === undefined) break;
      this.#entries.delete(oldest);
    }
    const id = randomBytes(32).toString("base64url");
    this.#entries.set(id, {
      ...request,
      csrf: randomBytes(32).toString("base64url"),
      expiresAt: now + this.#ttlMs,
    });
    return id;
  }

  /** The entry for a link id, without using it up (to show the page). */
  peek(id: string | null, now = Date.now()): ConsentEntry | undefined {
    if (id === null || id.length > 100) return undefined;
    const entry = this.#entries.get(id);
    if (!entry) return undefined;
    if (entry.expiresAt <= now) {
      this.#entries.delete(id);
      return undefined;
    }
    return entry;
  }

  /** Uses up the link when both CSRF values (form field and cookie) match its token; else undefined. */
  take(
    id: string | null,
    field: string | null,
    cookie: string | undefined,
    now = Date.now(),
  ): ConsentEntry | undefined {
    const entry = this.peek(id, now);
    if (!entry || !sameSecret(field, entry.csrf) || !sameSecret(cookie ?? null, entry.csrf))
      return undefined;
    this.#entries.delete(id as string);
    return entry;
  }

  get size(): number {
    return this.#entries.size;
  }

  #sweep(now: number): void {
    for (const [id, entry] of this.#entries) if (entry.expiresAt <= now) this.#entries.delete(id);
  }
}

/** The cookie carrying a link's CSRF token: named per link, so two pending sign-ins in one browser do not clash. */
export function consentCookieName(id: string): string {
  return `rap_consent_${createHash("sha256").update(id).digest("base64url").slice(0, 16)}`;
}

export function readCookie(header: string | undefined, name: string): string | undefined {
  if (!header || header.length > 8192) return undefined;
  for (const part of header.split(";")) {
    const eq = part.indexOf("=");
    if (eq > 0 && part.slice(0, eq).trim() === name) return part.slice(eq + 1).trim();
  }
  return undefined;
}

export function sameSecret(given: string | null, expected: string): boolean {
  if (given === null || given.length > 200) return false;
  const a = createHash("sha256").update(given).digest();
  const b = createHash("sha256").update(expected).digest();
  return timingSafeEqual(a, b);
}
