/** RFC 7009 token revocation, and introspection (RFC 7662) for checking what the server thinks of a token. */

import * as oauth from "oauth4webapi";
import type { Secret } from "../core/secret.ts";
import { clientParts, type OAuthClient } from "./client.ts";
import type { AuthorizationServer } from "./discovery.ts";
import { TokenEndpointError, toOAuthError } from "./errors.ts";
import { type RequestPolicy, requestOptions } from "./http.ts";

export interface RevokeOptions extends RequestPolicy {
  as: AuthorizationServer;
  client: OAuthClient;
  refreshToken?: Secret;
  accessToken?: Secret;
}

/** Per token: revoked, not held, or refused as `unsupported_token_type` (e.g. a self-contained JWT access token). */
export type RevocationOutcome = "revoked" | "absent" | "unsupported";

/**
 * Revokes the refresh token first (RFC 7009 §2.1: servers SHOULD then revoke the whole grant, access tokens
 * included), then the access token for servers that do not. A server that cannot revoke JWT access tokens says
 * `unsupported_token_type` (§2.2.1); that is reported, not thrown, since such tokens die at their short expiry.
 * Any other refusal, or no revocation endpoint at all, throws a typed error.
 */
export async function revokeTokens(
  options: RevokeOptions,
): Promise<{ refreshToken: RevocationOutcome; accessToken: RevocationOutcome }> {
  const { as } = options;
  if (!as.revocation_endpoint) {
    throw new TokenEndpointError(
      "revocation_unsupported",
      `The authorization server ${as.issuer} has no revocation endpoint (RFC 7009).`,
    );
  }
  const endpoint = as.revocation_endpoint;
  const { client, auth } = clientParts(options.client);
  const revoke = async (token: Secret | undefined, hint: string): Promise<RevocationOutcome> => {
    if (!token) return "absent";
    try {
      const response = await oauth.revocationRequest(as, client, auth, token.reveal(), {
        ...requestOptions(endpoint, options, as),
        additionalParameters: { token_type_hint: hint },
      });
      await oauth.processRevocationResponse(response);
      return "revoked";
    } catch (error) {
      if (error instanceof oauth.ResponseBodyError && error.error === "unsupported_token_type")
        return "unsupported";
      throw toOAuthError(error, "token revocation");
    }
  };
  const refreshToken = await revoke(options.refreshToken, "refresh_token");
  const accessToken = await revoke(options.accessToken, "access_token");
  return { refreshToken, accessToken };
}

export interface IntrospectOptions extends RequestPolicy {
  as: AuthorizationServer;
  client: OAuthClient;
  token: Secret;
  tokenTypeHint?: "access_token" | "refresh_token";
}

export async function introspectToken(
  options: IntrospectOptions,
): Promise<oauth.IntrospectionResponse> {
  const { as } = options;
  if (!as.introspection_endpoint) {
    throw new TokenEndpointError(
      "introspection_unsupported",
      `The authorization server ${as.issuer} has no introspection endpoint (RFC 7662).`,
    );
  }
  const { client, auth } = clientParts(options.client);
  try {
    const response = await oauth.introspectionRequest(as, client, auth, options.token.reveal(), {
      ...requestOptions(as.introspection_endpoint, options, as),
      additionalParameters: options.tokenTypeHint
        ? { token_type_hint: options.tokenTypeHint }
        : undefined,
    });
    return await oauth.processIntrospectionResponse(as, client, response);
  } catch (error) {
    throw toOAuthError(error, "token introspection");
  }
}
