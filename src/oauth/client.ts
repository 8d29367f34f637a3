/** OAuth client identities: public (PKCE, no secret) or confidential (client_secret_basic / _post). */

import * as oauth from "oauth4webapi";
import type { Secret } from "../core/secret.ts";

export interface OAuthClient {
  clientId: string;
  /** Present for confidential clients; wrapped so it never prints. */
  clientSecret?: Secret;
  /** Default: `client_secret_basic` with a secret, `none` without. */
  authMethod?: "none" | "client_secret_basic" | "client_secret_post";
}

/** The oauth4webapi pair for a client: its metadata and how it authenticates at the token endpoint. */
export function clientParts(client: OAuthClient): { client: oauth.Client; auth: oauth.ClientAuth } {
  const method = client.authMethod ?? (client.clientSecret ? "client_secret_basic" : "none");
  const metadata: oauth.Client = { client_id: client.clientId, token_endpoint_auth_method: method };
  if (method === "none") return { client: metadata, auth: oauth.None() };
  if (!client.clientSecret) throw new TypeError(`${method} needs a client secret`);
  const secret = client.clientSecret.reveal();
  return {
    client: metadata,
    auth:
      method === "client_secret_post" ? oauth.ClientSecretPost(secret) : clientSecretBasic(secret),
  };
}

/**
 * RFC 6749 §2.3.1 HTTP Basic, encoding only what must be encoded. The RFC form-urlencodes the id and the secret
 * before Base64; oauth4webapi also encodes `-`, `_`, `.`, `~` (HTML 4.01's reading), which servers that decode
 * accept and servers comparing the credentials raw refuse (`pre-registered-client` arrives as
 * `pre%2Dregistered%2Dclient`). Leaving RFC 3986's unreserved characters as they are satisfies both: a decoder
 * leaves them unchanged, and everything a decoder would alter (`%`, `+`, a space, the `:` separator) is encoded.
 */
export function clientSecretBasic(secret: string): oauth.ClientAuth {
  return (_as, client, _body, headers) => {
    const credentials = `${basicEncode(client.client_id)}:${basicEncode(secret)}`;
    headers.set("authorization", `Basic ${Buffer.from(credentials, "utf8").toString("base64")}`);
  };
}

function basicEncode(value: string): string {
  return value.replace(/[^A-Za-z0-9\-._~]+/g, (run) =>
    encodeURIComponent(run).replace(
      /[!'()*]/g,
      (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`,
    ),
  );
}
