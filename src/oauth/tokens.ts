/** The tokens a grant returns, normalised: secrets wrapped, expiry absolute, scopes split, account claims read. */

import type * as oauth from "oauth4webapi";
import { getValidatedIdTokenClaims } from "oauth4webapi";
import { type Secret, secret } from "../core/secret.ts";
import type { AccountInfo, CredentialInput, ProviderRef } from "../vault/types.ts";

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
  /** Validated ID token claims, when there was an ID token. */
  claims?: Record<string, unknown>;
  /**
   * The rest of the token response with every token removed (Slack's `team`, Notion's `owner`, ...), for a
   * provider's account reader.
   */
  extra: Record<string, unknown>;
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
    claims: claims ? { ...claims } : undefined,
    extra: withoutTokens(response) as Record<string, unknown>,
  };
}

const TOKEN_FIELDS = new Set(["access_token", "refresh_token", "id_token"]);

/** A deep copy without any member named like a token, so what providers nest (Slack `authed_user`) is covered. */
function withoutTokens(value: unknown, depth = 0): unknown {
  if (depth > 8 || typeof value !== "object" || value === null) return value;
  if (Array.isArray(value)) return value.map((v) => withoutTokens(v, depth + 1));
  const out: Record<string, unknown> = {};
  for (const [name, v] of Object.entries(value)) {
    if (!TOKEN_FIELDS.has(name)) out[name] = withoutTokens(v, depth + 1);
  }
  return out;
}

/** The vault record for tokens a grant returned, under `key`: one mapping for every login path. */
export function credentialFromTokens(
  tokens: TokenSet,
  key: { subject: string; issuer: string; resource: string; clientId: string },
  registration: { provider?: ProviderRef; clientSecret?: Secret } = {},
): CredentialInput {
  return {
    ...key,
    ...(registration.provider ? { provider: registration.provider } : {}),
    tokens: {
      accessToken: tokens.accessToken,
      refreshToken: tokens.refreshToken,
      idToken: tokens.idToken,
      tokenType: tokens.tokenType,
      ...(registration.clientSecret ? { clientSecret: registration.clientSecret } : {}),
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
