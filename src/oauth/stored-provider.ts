/**
 * Rebuilding what a stored credential was issued by: its client (the caller's, else the stored id and sealed
 * secret) and its provider preset (through the caller's `ProviderResolver`), checked against the record's issuer.
 */

import type { CredentialRecord } from "../vault/types.ts";
import type { OAuthClient } from "./client.ts";
import { DiscoveryError } from "./errors.ts";
import type { Provider, ProviderResolver } from "./provider.ts";

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
