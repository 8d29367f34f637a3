/**
 * Binds a sign-in to the browser that consented (issue 20 §1.1). The provider URL that Continue answers with is
 * only a URL: carried to another browser (an attacker presses Continue on their own consent page and sends the
 * provider URL to a victim), it would let the victim's sign-in be filed under the attacker's `user_id` without the
 * victim ever seeing the consent page. So Continue also sets a cookie (HttpOnly, SameSite=Lax so that the provider's
 * cross-site redirect back still carries it) whose SHA-256 is kept with the pending authorization; the redirect
 * endpoint refuses a `state` whose cookie is missing or different, before the code is exchanged. The console's
 * Connect does the same (`agentauth_connect`, console/security.ts). Pure.
 *
 * The attacker holds the cookie's name (it comes from `state`) and a value that passes (their own, from their own
 * Continue), so the cookie must be one that nobody but the tool's origin can set. On https it is `__Host-…`
 * (RFC 6265bis §4.1.3): browsers take it only from a secure origin, with Secure, `Path=/` and no `Domain`, so neither
 * a network attacker answering a plain-http request to the tool's host nor a sibling subdomain (`Domain=`) can
 * plant it. `Path=/` is what the prefix demands; the per-state name and HttpOnly keep it harmless on other paths.
 * On plain http (loopback only, server.ts refuses anything else for the redirect URI) no prefix is possible: the
 * cookie is scoped to the redirect path, and only programs on the same machine could plant one.
 */

import { createHash, randomBytes, timingSafeEqual } from "node:crypto";

export interface BrowserBinding {
  /** The cookie's value: given only to the browser that presses Continue. */
  secret: string;
  /** Hex SHA-256 of `secret`: kept with the pending authorization. */
  digest: string;
}

export function newBrowserBinding(): BrowserBinding {
  const secret = randomBytes(32).toString("base64url");
  return { secret, digest: sha256(secret).toString("hex") };
}

export interface BindingCookieOptions {
  /** The redirect endpoint's path (`${base path}/oauth/callback`): the cookie's Path on plain http. */
  path: string;
  /** The tool's public base URL is https: a `__Host-` cookie (Secure, Path=/). */
  secure: boolean;
}

/** Named per sign-in (from its `state`), so two sign-ins pending in one browser keep their own cookies. */
export function bindingCookieName(
  state: string,
  options: Pick<BindingCookieOptions, "secure">,
): string {
  const name = `rap_signin_${sha256(state).toString("base64url").slice(0, 16)}`;
  return options.secure ? `__Host-${name}` : name;
}

/** The Set-Cookie value Continue answers with. */
export function bindingCookie(
  state: string,
  secret: string,
  maxAgeSeconds: number,
  options: BindingCookieOptions,
): string {
  return cookieLine(state, secret, Math.max(1, Math.floor(maxAgeSeconds)), options);
}

/** The Set-Cookie value that removes it once the redirect came back (used or refused). */
export function clearBindingCookie(state: string, options: BindingCookieOptions): string {
  return cookieLine(state, "", 0, options);
}

function cookieLine(
  state: string,
  value: string,
  maxAge: number,
  options: BindingCookieOptions,
): string {
  const scope = options.secure ? "Path=/; Secure" : `Path=${options.path}`;
  return `${bindingCookieName(state, options)}=${value}; ${scope}; HttpOnly; SameSite=Lax; Max-Age=${maxAge}`;
}

/** Does the cookie the browser sent hash to the digest kept with the pending authorization? Constant-time. */
export function sameBrowser(cookie: string | undefined, digest: string | undefined): boolean {
  if (cookie === undefined || cookie.length === 0 || cookie.length > 200) return false;
  if (digest === undefined || !/^[0-9a-f]{64}$/.test(digest)) return false;
  return timingSafeEqual(sha256(cookie), Buffer.from(digest, "hex"));
}

function sha256(value: string): Buffer {
  return createHash("sha256").update(value).digest();
}
