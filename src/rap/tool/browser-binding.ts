/**
 * Binds a sign-in to the browser that consented (issue 20 §1.1). The provider URL that Continue answers with is
 * only a URL: carried to another browser (an attacker presses Continue on their own consent page and sends the
 * provider URL to a victim), it would let the victim's sign-in be filed under the attacker's `user_id` without the
 * victim ever seeing the consent page. So Continue also sets a cookie (HttpOnly, SameSite=Lax so that the provider's
 * cross-site redirect back still carries it, scoped to the redirect path) whose SHA-256 is kept with the pending
 * authorization; the redirect endpoint refuses a `state` whose cookie is missing or different, before the code is
 * exchanged. The console's Connect does the same (`agentauth_connect`). Pure.
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

/** Named per sign-in (from its `state`), so two sign-ins pending in one browser keep their own cookies. */
export function bindingCookieName(state: string): string {
  return `rap_signin_${sha256(state).toString("base64url").slice(0, 16)}`;
}

export interface BindingCookieOptions {
  /** The redirect endpoint's path (`${base path}/oauth/callback`): the cookie goes nowhere else. */
  path: string;
  secure: boolean;
}

/** The Set-Cookie value Continue answers with. */
export function bindingCookie(
  state: string,
  secret: string,
  maxAgeSeconds: number,
  options: BindingCookieOptions,
): string {
  const age = Math.max(1, Math.floor(maxAgeSeconds));
  return `${bindingCookieName(state)}=${secret}; Path=${options.path}; HttpOnly; SameSite=Lax; Max-Age=${age}${options.secure ? "; Secure" : ""}`;
}

/** The Set-Cookie value that removes it once the redirect came back (used or refused). */
export function clearBindingCookie(state: string, options: BindingCookieOptions): string {
  return `${bindingCookieName(state)}=; Path=${options.path}; HttpOnly; SameSite=Lax; Max-Age=0${options.secure ? "; Secure" : ""}`;
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
