/**
 * Google's `hd` (Workspace domain) restriction needs an ID token: the authorization parameter is only a hint, and
 * Google says to check the ID token's `hd` claim ("Validating an ID token",
 * https://developers.google.com/identity/openid-connect/openid-connect#validatinganidtoken). Without `openid` in
 * the scope no ID token comes back and nothing could be checked, so with `hd` set a sign-in's token answer (code
 * or device grant) without an ID token is refused before anything is stored. The preset already adds `openid` to
 * its own scope; this catches a scope handed to `login()` that lacks it. Refresh answers are left alone (Google's
 * carry no ID token unless it chooses to, and the grant was checked at sign-in).
 */

import type { AuthorizationServer, CustomFetch, QuirkyServer } from "../oauth/index.ts";
import { serverFetch } from "../oauth/index.ts";
import { ProviderApiError } from "./errors.ts";

const wrapped = Symbol("agentauth.googleHdIdToken");

const SIGN_IN_GRANTS = new Set([
  "authorization_code",
  "urn:ietf:params:oauth:grant-type:device_code",
]);

/** Installs the check on the metadata's fetch (once per metadata object, which is built once per preset). */
export function requireIdToken(as: AuthorizationServer, hd: string): AuthorizationServer {
  const server = as as QuirkyServer & { [wrapped]?: true };
  if (server[wrapped]) return as;
  const inner: CustomFetch =
    server[serverFetch] ?? ((url, init) => fetch(url, init as RequestInit));
  const endpoint = as.token_endpoint;
  server[serverFetch] = async (url, init) => {
    const response = await inner(url, init);
    if (url !== endpoint || response.status !== 200 || !SIGN_IN_GRANTS.has(grantOf(init))) {
      return response;
    }
    let body: unknown;
    try {
      body = await response.clone().json();
    } catch {
      return response; // not JSON: the engine's own checks refuse it as invalid_response
    }
    const idToken = (body as { id_token?: unknown } | null)?.id_token;
    if (typeof body === "object" && body !== null && typeof idToken !== "string") {
      await response.body?.cancel();
      throw new ProviderApiError(
        "provider_account_refused",
        `Google returned no ID token, so the Workspace domain ${hd} cannot be checked and nothing was stored. ` +
          `Sign in again asking for the openid scope (e.g. "openid email").`,
      );
    }
    return response;
  };
  server[wrapped] = true;
  return as;
}

function grantOf(init: { body?: unknown } | undefined): string {
  const body = init?.body;
  if (body instanceof URLSearchParams) return body.get("grant_type") ?? "";
  if (typeof body === "string") return new URLSearchParams(body).get("grant_type") ?? "";
  return "";
}
