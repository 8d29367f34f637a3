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
      method === "client_secret_post"
        ? oauth.ClientSecretPost(secret)
        : oauth.ClientSecretBasic(secret),
  };
}
