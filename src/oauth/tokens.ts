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
    expiresAt: expiresAtFrom(response.expires_in, now),
    scopes: scope.split(" ").filter(Boolean),
    subject: claims?.sub,
    account: claims ? accountFromClaims(claims) : {},
    claims: claims ? { ...claims } : undefined,
    extra: withoutTokens(response) as Record<string, unknown>,
  };
}

/** The longest lifetime believed: 10 years. */
export const MAX_LIFETIME_MS = 10 * 365 * 24 * 3600 * 1000;

/**
 * The absolute expiry for `expires_in` seconds (RFC 6749 §5.1, optional). oauth4webapi has already refused a
 * negative or non-finite value; a huge one (1e306) would make the expiry Infinity, which the vault refuses, and
 * by then the server has rotated the refresh token, so refusing the answer would lose the grant. Clamping to 10
 * years keeps the rotated token; a server saying "practically never" is believed for 10 years.
 */
export function expiresAtFrom(expiresIn: unknown, now = Date.now()): number | undefined {
  if (typeof expiresIn !== "number" || !Number.isFinite(expiresIn) || expiresIn < 0)
    return undefined;
  return now + Math.min(expiresIn * 1000, MAX_LIFETIME_MS);
}

/**
 * Members never kept: the tokens themselves, and Slack's `incoming_webhook`, whose `url` posts to a channel with
 * no other credential (https://docs.slack.dev/messaging/sending-messages-using-incoming-webhooks: "keep it secret").
 */
const SECRET_FIELDS = new Set(["access_token", "refresh_token", "id_token", "incoming_webhook"]);
const MAX_DEPTH = 8;

/**
 * A deep copy without any secret member, so what providers nest (Slack `authed_user`) is covered. A subtree
 * deeper than `MAX_DEPTH` is dropped, not returned unfiltered: what cannot be inspected is not kept.
 */
function withoutTokens(value: unknown, depth = 0): unknown {
  if (typeof value !== "object" || value === null) return value;
  if (depth >= MAX_DEPTH) return undefined;
  if (Array.isArray(value)) return value.map((v) => withoutTokens(v, depth + 1));
  const out: Record<string, unknown> = {};
  for (const [name, v] of Object.entries(value)) {
    if (SECRET_FIELDS.has(name)) continue;
    const kept = withoutTokens(v, depth + 1);
    if (kept !== undefined) out[name] = kept;
  }
  return out;
}

/** The vault record for tokens a grant returned, under `key`: one mapping for every login path. */
export function credentialFromTokens(
  tokens: TokenSet,
  key: { subject: string; issuer: string; resource: string; clientId: string },
  registration: { provider?: ProviderRef; clientSecret?: Secret; dpopKey?: Secret } = {},
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
      // Kept only when the server bound the tokens to it (`token_type` DPoP, RFC 9449 §5).
      ...(registration.dpopKey && tokens.tokenType.toLowerCase() === "dpop"
        ? { dpopKey: registration.dpopKey }
        : {}),
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
