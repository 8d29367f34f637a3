/** The tokens a grant returns, normalised: secrets wrapped, expiry absolute, scopes split, account claims read. */

import type * as oauth from "oauth4webapi";
import { getValidatedIdTokenClaims } from "oauth4webapi";
import { type Secret, secret } from "../core/secret.ts";
import type { AccountInfo, CredentialInput } from "../vault/types.ts";

export interface TokenSet {
  accessToken: Secret;
  refreshToken?: Secret;
  idToken?: Secret;
  tokenType: string;
  /** Absolute expiry in ms since the epoch, when the server sent `expires_in`. */
  expiresAt?: number;
  scopes: string[];
  /** `sub` of the validated ID token, when there was one. */
  subject?: string;
  account: AccountInfo;
}

export function toTokenSet(
  response: oauth.TokenEndpointResponse,
  requestedScope?: string,
  now = Date.now(),
): TokenSet {
  const claims = response.id_token ? getValidatedIdTokenClaims(response) : undefined;
  // RFC 6749 §5.1: `scope` may be omitted when it equals the requested scope.
  const scope = response.scope ?? requestedScope ?? "";
  return {
    accessToken: secret(response.access_token),
    refreshToken: secret(response.refresh_token),
    idToken: secret(response.id_token),
    tokenType: response.token_type,
    expiresAt:
      typeof response.expires_in === "number" ? now + response.expires_in * 1000 : undefined,
    scopes: scope.split(" ").filter(Boolean),
    subject: claims?.sub,
    account: claims ? accountFromClaims(claims) : {},
  };
}

/** The vault record for tokens a grant returned, under `key`: one mapping for every login path. */
export function credentialFromTokens(
  tokens: TokenSet,
  key: { subject: string; issuer: string; resource: string; clientId: string },
): CredentialInput {
  return {
    ...key,
    tokens: {
      accessToken: tokens.accessToken,
      refreshToken: tokens.refreshToken,
      idToken: tokens.idToken,
      tokenType: tokens.tokenType,
    },
    expiresAt: tokens.expiresAt,
    scopes: tokens.scopes,
    account: tokens.account,
    status: "active",
  };
}

export function accountFromClaims(claims: Record<string, unknown>): AccountInfo {
  const str = (v: unknown) => (typeof v === "string" && v.length > 0 ? v : undefined);
  const email = str(claims.email);
  const name = str(claims.name);
  const organization = str(claims.org) ?? str(claims.organization);
  return {
    label: email ?? str(claims.preferred_username) ?? name ?? str(claims.sub),
    name,
    email,
    organization,
  };
}
