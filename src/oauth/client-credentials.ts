/**
 * The client credentials grant (RFC 6749 §4.4; OAuth 2.1 §4.2): a client acting for itself, no person involved. The
 * client authenticates with a secret or a private key (private_key_jwt, RFC 7523 §2.2); `resource` binds the token
 * (RFC 8707), and `dpop` asks for a token bound to a key (RFC 9449). There is no refresh token (§4.4.3): a new
 * token is asked for when this one expires.
 */

import * as oauth from "oauth4webapi";
import { clientParts, type OAuthClient } from "./client.ts";
import type { AuthorizationServer } from "./discovery.ts";
import { type DpopHandle, withDpopNonce } from "./dpop.ts";
import { TokenEndpointError, toOAuthError } from "./errors.ts";
import { type RequestPolicy, requestOptions } from "./http.ts";
import { type TokenSet, toTokenSet } from "./tokens.ts";

export interface ClientCredentialsOptions extends RequestPolicy {
  as: AuthorizationServer;
  /** A confidential client: a secret or a private key. */
  client: OAuthClient;
  scope?: string;
  resource?: string;
  dpop?: DpopHandle;
}

export async function clientCredentialsGrant(options: ClientCredentialsOptions): Promise<TokenSet> {
  const { as } = options;
  if (!options.client.clientSecret && !options.client.privateKey) {
    throw new TokenEndpointError(
      "client_credentials_unauthenticated",
      "The client credentials grant needs a confidential client: give its secret or its private key.",
    );
  }
  const { client, auth } = clientParts(options.client);
  const params = new URLSearchParams();
  if (options.scope) params.set("scope", options.scope);
  if (options.resource) params.set("resource", options.resource);
  try {
    const tokens = await withDpopNonce(options.dpop, async () => {
      const response = await oauth.clientCredentialsGrantRequest(as, client, auth, params, {
        ...requestOptions(as.token_endpoint ?? as.issuer, options, as),
        DPoP: options.dpop,
      });
      return oauth.processClientCredentialsResponse(as, client, response);
    });
    return toTokenSet(tokens, options.scope);
  } catch (error) {
    throw toOAuthError(error, "client credentials grant");
  }
}
