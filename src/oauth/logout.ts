/**
 * Signing out: revoke at the provider (RFC 7009, or the provider's own call), then delete locally. A provider
 * with no revocation API is deleted locally and the result says where the person removes the app.
 */

import type { CredentialKey, CredentialRecord, CredentialStore } from "../vault/types.ts";
import type { OAuthClient } from "./client.ts";
import { type DiscoveryOptions, discoverAuthorizationServer } from "./discovery.ts";
import { DiscoveryError } from "./errors.ts";
import type { Provider, ProviderResolver } from "./provider.ts";
import { type RevocationOutcome, revokeTokens } from "./revoke.ts";

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
      outcome = await provider.revocation.revoke({
        client,
        accessToken: record.tokens.accessToken,
        refreshToken: record.tokens.refreshToken,
      });
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

/** The client the tokens were issued to: the caller's, else the stored registration (id and sealed secret). */
export function clientOf(record: CredentialRecord, given?: OAuthClient): OAuthClient {
  if (given) return given;
  return record.tokens.clientSecret
    ? { clientId: record.clientId, clientSecret: record.tokens.clientSecret }
    : { clientId: record.clientId };
}

/** The provider preset a credential names, rebuilt with its stored (or the given) client; undefined for none. */
export function providerOf(
  record: CredentialRecord,
  options: { client?: OAuthClient; providers?: ProviderResolver },
): Provider | undefined {
  if (!record.provider) return undefined;
  if (!options.providers) {
    throw new DiscoveryError(
      "provider_resolver_missing",
      `The credential ${record.id} was issued by the ${record.provider.name} provider preset; pass providers: ` +
        "resolveProvider (from agentauth/providers) so the engine can reach it.",
    );
  }
  const provider = options.providers(record.provider, clientOf(record, options.client));
  // The record's issuer is its vault key and what its tokens were issued by; a provider that rebuilds to another
  // issuer (an edited row, a resolver that falls back to another preset) would send the tokens elsewhere.
  if (provider.issuer !== record.issuer) {
    throw new DiscoveryError(
      "provider_issuer_mismatch",
      `The credential ${record.id} was issued by ${record.issuer}, but its ${record.provider.name} provider ` +
        `settings now point at ${provider.issuer}; nothing was sent. Sign in again with the provider as ` +
        "configured now (agentauth login), or delete this credential (agentauth vault delete).",
    );
  }
  return provider;
}
