/** RFC 7009 token revocation, and introspection (RFC 7662) for checking what the server thinks of a token. */

import * as oauth from "oauth4webapi";
import type { Secret } from "../core/secret.ts";
import { type OAuthClient, clientParts } from "./client.ts";
import type { AuthorizationServer } from "./discovery.ts";
import { TokenEndpointError, toOAuthError } from "./errors.ts";
import { type RequestPolicy, requestOptions } from "./http.ts";

export interface RevokeOptions extends RequestPolicy {
  as: AuthorizationServer;
  client: OAuthClient;
  refreshToken?: Secret;
  accessToken?: Secret;
}

/**
 * Revokes the refresh token first (RFC 7009 §2.1: servers SHOULD then revoke the whole grant, access tokens
 * included), then the access token for servers that do not. Throws a typed error when the server has no
 * revocation endpoint or refuses.
 */
export async function revokeTokens(options: RevokeOptions): Promise<void> {
  const { as } = options;
  if (!as.revocation_endpoint) {
    throw new TokenEndpointError("revocation_unsupported", `The authorization server ${as.issuer} has no revocation endpoint (RFC 7009).`);
  }
  const { client, auth } = clientParts(options.client);
  const targets: [Secret | undefined, string][] = [
    [options.refreshToken, "refresh_token"],
    [options.accessToken, "access_token"],
  ];
  for (const [token, hint] of targets) {
    if (!token) continue;
    try {
      const response = await oauth.revocationRequest(as, client, auth, token.reveal(), {
        ...requestOptions(as.revocation_endpoint, options),
        additionalParameters: { token_type_hint: hint },
      });
      await oauth.processRevocationResponse(response);
    } catch (error) {
      throw toOAuthError(error, "token revocation");
    }
  }
}

export interface IntrospectOptions extends RequestPolicy {
  as: AuthorizationServer;
  client: OAuthClient;
  token: Secret;
  tokenTypeHint?: "access_token" | "refresh_token";
}

export async function introspectToken(options: IntrospectOptions): Promise<oauth.IntrospectionResponse> {
  const { as } = options;
  if (!as.introspection_endpoint) {
    throw new TokenEndpointError("introspection_unsupported", `The authorization server ${as.issuer} has no introspection endpoint (RFC 7662).`);
  }
  const { client, auth } = clientParts(options.client);
  try {
    const response = await oauth.introspectionRequest(as, client, auth, options.token.reveal(), {
      ...requestOptions(as.introspection_endpoint, options),
      additionalParameters: options.tokenTypeHint ? { token_type_hint: options.tokenTypeHint } : undefined,
    });
    return await oauth.processIntrospectionResponse(as, client, response);
  } catch (error) {
    throw toOAuthError(error, "token introspection");
  }
}
