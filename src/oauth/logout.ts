/**
 * Signing out: revoke at the provider (RFC 7009, or the provider's own call), then delete locally. A provider
 * with no revocation API is deleted locally and the result says where the person removes the app.
 */

import { AgentAuthError } from "../core/errors.ts";
import type { Secret } from "../core/secret.ts";
import type { CredentialKey, CredentialRecord, CredentialStore } from "../vault/types.ts";
import type { OAuthClient } from "./client.ts";
import { type DiscoveryOptions, discoverAuthorizationServer } from "./discovery.ts";
import { LoginRequiredError } from "./errors.ts";
import { ACCESS_TOKEN_REJECTED, type ProviderResolver, type Revocation } from "./provider.ts";
import { TokenRefresher } from "./refresh.ts";
import { type RevocationOutcome, revokeTokens } from "./revoke.ts";
import { clientOf, providerOf } from "./stored-provider.ts";

export interface LogoutResult {
  /** False when the credential was not found. */
  found: boolean;
  /** Whether the server confirmed revocation; false with `error` when it could not be reached or refused. */
  revoked: boolean;
  /** What happened to each token at the server, when revocation ran. */
  outcome?: { refreshToken: RevocationOutcome; accessToken: RevocationOutcome };
  /** The provider has no revocation API: the page where the person removes the app's access. */
  manageUrl?: string;
  error?: Error;
  deleted: boolean;
}

/**
 * Revokes at the authorization server, then deletes locally. With `deleteOnRevokeFailure: false` (default) a
 * failed revocation keeps the record so the caller can retry; the error says how to force it. A credential that
 * names a provider preset needs `providers` (`resolveProvider` from `agentauth/providers`).
 */
export async function logout(options: {
  store: CredentialStore;
  key: CredentialKey;
  client?: OAuthClient;
  providers?: ProviderResolver;
  deleteOnRevokeFailure?: boolean;
  discovery?: DiscoveryOptions;
}): Promise<LogoutResult> {
  const record = await options.store.get(options.key);
  if (!record) return { found: false, revoked: false, deleted: false };
  let outcome: LogoutResult["outcome"];
  try {
    const provider = providerOf(record, options);
    if (provider?.revocation.kind === "none") {
      const unsupported = { refreshToken: "unsupported", accessToken: "unsupported" } as const;
      const deleted = await options.store.delete(options.key);
      const { manageUrl } = provider.revocation;
      return {
        found: true,
        revoked: false,
        outcome: unsupported,
        ...(manageUrl ? { manageUrl } : {}),
        deleted,
      };
    }
    const client = provider?.client ?? clientOf(record, options.client);
    if (provider?.revocation.kind === "custom") {
      outcome = await revokeLive(provider.revocation.revoke, client, record, options);
    } else {
      const as = provider
        ? await provider.server(options.discovery)
        : await discoverAuthorizationServer(record.issuer, options.discovery);
      outcome = await revokeTokens({
        as,
        client,
        refreshToken: record.tokens.refreshToken,
        accessToken: record.tokens.accessToken,
      });
    }
  } catch (error) {
    if (!options.deleteOnRevokeFailure) {
      return { found: true, revoked: false, error: error as Error, deleted: false };
    }
    const deleted = await options.store.delete(options.key);
    return { found: true, revoked: false, error: error as Error, deleted };
  }
  return { found: true, revoked: true, outcome, deleted: await options.store.delete(options.key) };
}

/**
 * A provider's own revocation call with a live access token; when the provider still refuses it as expired or
 * unknown (`ACCESS_TOKEN_REJECTED`: clocks disagree, or the grant was revoked on the provider's site), the token
 * is refreshed once more, stored, and the call repeated.
 */
async function revokeLive(
  revoke: Extract<Revocation, { kind: "custom" }>["revoke"],
  client: OAuthClient,
  record: CredentialRecord,
  options: LiveTokenOptions,
): Promise<{ refreshToken: RevocationOutcome; accessToken: RevocationOutcome }> {
  const tokens = await liveTokens(record, options);
  try {
    return await revoke({ client, ...tokens });
  } catch (error) {
    if (!(error instanceof AgentAuthError) || error.code !== ACCESS_TOKEN_REJECTED) throw error;
    if (!tokens.refreshToken) throw error;
    return revoke({ client, ...(await liveTokens(record, options, true)) });
  }
}

interface LiveTokenOptions {
  store: CredentialStore;
  key: CredentialKey;
  client?: OAuthClient;
  providers?: ProviderResolver;
  discovery?: DiscoveryOptions;
}

/** Refresh this long before expiry, as `TokenRefresher` does by default. */
const SKEW_MS = 60_000;

/**
 * The tokens to hand a provider's own revocation call. Those calls take the access token, which the provider
 * refuses once expired (GitHub answers 404 to anything but "a valid OAuth access_token"; Slack's auth.revoke
 * answers token_expired), so an expired one is refreshed first through a `TokenRefresher`: the rotated tokens are
 * stored by compare-and-swap before they are used, so a revocation that then fails loses nothing. A refresh token
 * the server has refused (`login_required`) is known dead and is not offered to the revocation.
 */
async function liveTokens(
  record: CredentialRecord,
  options: LiveTokenOptions,
  force = false,
): Promise<{ accessToken?: Secret; refreshToken?: Secret }> {
  const { accessToken, refreshToken } = record.tokens;
  if (record.status === "login_required") return { accessToken };
  const due = record.expiresAt !== undefined && record.expiresAt - SKEW_MS <= Date.now();
  if (!(due || force) || !refreshToken) return { accessToken, refreshToken };
  const given = options.client;
  const refresher = new TokenRefresher({
    store: options.store,
    providers: options.providers,
    discovery: options.discovery,
    skewMs: SKEW_MS,
    ...(given ? { clientFor: () => given } : {}),
  });
  try {
    const fresh = force
      ? await refresher.forceRefresh(options.key)
      : await refresher.getCredential(options.key);
    return { accessToken: fresh.tokens.accessToken, refreshToken: fresh.tokens.refreshToken };
  } catch (error) {
    // The server refused the refresh token for good: nothing but the (expired) access token is left to revoke.
    if (error instanceof LoginRequiredError) return { accessToken };
    throw error;
  }
}
