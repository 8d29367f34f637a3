/** RFC 7591 dynamic client registration: for servers that let clients register themselves. */

import * as oauth from "oauth4webapi";
import { Secret } from "../core/secret.ts";
import type { OAuthClient } from "./client.ts";
import type { AuthorizationServer } from "./discovery.ts";
import { TokenEndpointError, toOAuthError } from "./errors.ts";
import { type RequestPolicy, requestOptions } from "./http.ts";

export interface RegisterClientOptions extends RequestPolicy {
  as: AuthorizationServer;
  /** RFC 7591 §2 metadata; `redirect_uris`, `grant_types`, `token_endpoint_auth_method`, `client_name`, … */
  metadata: Partial<oauth.OmitSymbolProperties<oauth.Client>>;
  initialAccessToken?: Secret;
}

export interface RegisteredClient extends OAuthClient {
  /** RFC 7592 management credentials, when the server issued them. */
  registrationAccessToken?: Secret;
  registrationClientUri?: string;
  /** RFC 7591 §3.2.1 `client_secret_expires_at` in ms since the epoch; absent when it never expires (0) or no secret. */
  clientSecretExpiresAt?: number;
}

export async function registerClient(options: RegisterClientOptions): Promise<RegisteredClient> {
  const { as } = options;
  if (!as.registration_endpoint) {
    throw new TokenEndpointError(
      "registration_unsupported",
      `The authorization server ${as.issuer} does not support dynamic client registration; configure a client id instead.`,
    );
  }
  try {
    const response = await oauth.dynamicClientRegistrationRequest(as, options.metadata, {
      ...requestOptions(as.registration_endpoint, options),
      initialAccessToken: options.initialAccessToken?.reveal(),
    });
    const client = await oauth.processDynamicClientRegistrationResponse(response);
    const method = client.token_endpoint_auth_method;
    return {
      clientId: client.client_id,
      clientSecret:
        typeof client.client_secret === "string" ? new Secret(client.client_secret) : undefined,
      authMethod:
        method === "client_secret_post" || method === "client_secret_basic" || method === "none"
          ? method
          : undefined,
      registrationAccessToken:
        typeof client.registration_access_token === "string"
          ? new Secret(client.registration_access_token)
          : undefined,
      registrationClientUri:
        typeof client.registration_client_uri === "string"
          ? client.registration_client_uri
          : undefined,
      clientSecretExpiresAt:
        typeof client.client_secret_expires_at === "number" && client.client_secret_expires_at > 0
          ? client.client_secret_expires_at * 1000
          : undefined,
    };
  } catch (error) {
    throw toOAuthError(error, "client registration");
  }
}
