/**
 * OAuth 2.0 Token Exchange (RFC 8693): one security token for another at a token endpoint. agentauth uses it for the
 * Identity Assertion JWT Authorization Grant (draft-ietf-oauth-identity-assertion-authz-grant; MCP's
 * enterprise-managed authorization, SEP-990): the person's ID token from the enterprise identity provider is
 * exchanged there for an ID-JAG naming the MCP server's authorization server (`audience`) and the MCP server
 * (`resource`), which jwt-bearer.ts then redeems. Tokens in and out are `Secret`s.
 */

import * as oauth from "oauth4webapi";
import { Secret } from "../core/secret.ts";
import { clientParts, type OAuthClient } from "./client.ts";
import type { AuthorizationServer } from "./discovery.ts";
import { TokenEndpointError, toOAuthError } from "./errors.ts";
import { type RequestPolicy, requestOptions } from "./http.ts";

export const TOKEN_EXCHANGE_GRANT = "urn:ietf:params:oauth:grant-type:token-exchange";
export const ID_TOKEN_TYPE = "urn:ietf:params:oauth:token-type:id_token";
export const ID_JAG_TOKEN_TYPE = "urn:ietf:params:oauth:token-type:id-jag";

export interface TokenExchangeOptions extends RequestPolicy {
  as: AuthorizationServer;
  client: OAuthClient;
  subjectToken: Secret;
  subjectTokenType: string;
  requestedTokenType?: string;
  audience?: string;
  resource?: string;
  scope?: string;
}

export interface ExchangedToken {
  token: Secret;
  /** RFC 8693 §2.2.1 `issued_token_type`. */
  issuedTokenType: string;
  expiresIn?: number;
  scope?: string;
}

export async function tokenExchange(options: TokenExchangeOptions): Promise<ExchangedToken> {
  const { as } = options;
  const { client, auth } = clientParts(options.client);
  const params = new URLSearchParams({
    subject_token: options.subjectToken.reveal(),
    subject_token_type: options.subjectTokenType,
  });
  if (options.requestedTokenType) params.set("requested_token_type", options.requestedTokenType);
  if (options.audience) params.set("audience", options.audience);
  if (options.resource) params.set("resource", options.resource);
  if (options.scope) params.set("scope", options.scope);
  let answer: oauth.TokenEndpointResponse;
  try {
    const response = await oauth.genericTokenEndpointRequest(
      as,
      client,
      auth,
      TOKEN_EXCHANGE_GRANT,
      params,
      {
        ...requestOptions(as.token_endpoint ?? as.issuer, options, as),
      },
    );
    // RFC 8693 §2.2.1: a token that is not an access token comes with `token_type` "N_A".
    answer = await oauth.processGenericTokenEndpointResponse(as, client, response, {
      recognizedTokenTypes: { n_a: () => {} },
    });
  } catch (error) {
    throw toOAuthError(error, "token exchange");
  }
  const issued = (answer as Record<string, unknown>).issued_token_type;
  if (typeof issued !== "string") {
    throw new TokenEndpointError(
      "invalid_response",
      `The token exchange answer from ${as.issuer} does not say what it issued (issued_token_type, RFC 8693 §2.2.1).`,
    );
  }
  if (options.requestedTokenType && issued !== options.requestedTokenType) {
    throw new TokenEndpointError(
      "token_exchange_mismatch",
      `${as.issuer} issued another kind of token than the one asked for; refusing it.`,
    );
  }
  return {
    token: new Secret(answer.access_token),
    issuedTokenType: issued,
    expiresIn: answer.expires_in,
    scope: answer.scope,
  };
}
