/**
 * Google's device authorization answer names the page `verification_url`, not RFC 8628 §3.2's `verification_uri`
 * ("OAuth 2.0 for TV and Limited-Input Device Applications", step 2 "Handle the authorization server response",
 * https://developers.google.com/identity/protocols/oauth2/limited-input-device#step-2:-handle-the-authorization-server-response).
 * oauth4webapi requires `verification_uri`, so the preset's fetch copies the field over for that one endpoint; the
 * rest of the answer (and every other endpoint) passes through the engine's quirks untouched.
 */

import type { AuthorizationServer, CustomFetch, QuirkyServer } from "../oauth/index.ts";
import { serverFetch } from "../oauth/index.ts";

const wrapped = Symbol("agentauth.googleDeviceAlias");

/** Installs the alias on the metadata's fetch (once; the metadata object is built once per preset instance). */
export function aliasVerificationUrl(as: AuthorizationServer): AuthorizationServer {
  const server = as as QuirkyServer & { [wrapped]?: true };
  if (server[wrapped]) return as;
  const inner: CustomFetch =
    server[serverFetch] ?? ((url, init) => fetch(url, init as RequestInit));
  const endpoint = as.device_authorization_endpoint;
  server[serverFetch] = async (url, init) => {
    const response = await inner(url, init);
    if (url !== endpoint || response.status !== 200) return response;
    return renameField(response);
  };
  server[wrapped] = true;
  return as;
}

/** The answer with `verification_uri` filled from `verification_url` when only the latter is present. */
export async function renameField(response: Response): Promise<Response> {
  const text = await response.text();
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    body = undefined;
  }
  let out = text;
  if (typeof body === "object" && body !== null && !Array.isArray(body)) {
    const fields = body as Record<string, unknown>;
    if (fields.verification_uri === undefined && typeof fields.verification_url === "string") {
      out = JSON.stringify({ ...fields, verification_uri: fields.verification_url });
    }
  }
  const headers = new Headers(response.headers);
  headers.delete("content-length");
  const rebuilt = new Response(out, {
    status: response.status,
    statusText: response.statusText,
    headers,
  });
  // oauth4webapi checks that the answer came from the endpoint it asked (`response.url`).
  Object.defineProperty(rebuilt, "url", { value: response.url });
  return rebuilt;
}
