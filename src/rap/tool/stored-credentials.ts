/**
 * A stored credential, back to the tool's configuration: which configured client refreshes and revokes it, and
 * which provider it is rebuilt as. The tool's configuration wins over what the record stored (a rotated client
 * secret, changed origins), and a preset the catalog does not list (a `Provider` the tool author wrote) still
 * refreshes; only a credential no configured provider matches falls back to the catalog (`resolveProvider`).
 */

import {
  clientOf,
  type OAuthClient,
  type Provider,
  type ProviderRef,
  type ProviderResolver,
} from "../../oauth/index.ts";
import { resolveProvider } from "../../providers/index.ts";
import { type CredentialRecord, sameProviderRef } from "../../vault/index.ts";
import type { ToolProvider } from "./providers.ts";

/**
 * The engine's `clientFor`: the configured client the tokens were issued to (same client id and issuer, and, for
 * a preset, the same stored provider reference), else the stored registration. A record whose reference matches
 * no configured preset (other options, e.g. origins sent elsewhere) keeps its own client: the tool's secret goes
 * only where the tool's configuration sends it (review #1).
 */
export function configuredClient(
  providers: ReadonlyMap<string, ToolProvider>,
  record: CredentialRecord,
): OAuthClient {
  for (const entry of providers.values()) {
    if (entry.client.clientId !== record.clientId || !sameIssuer(entry.issuer, record.issuer))
      continue;
    const sameSource = entry.preset
      ? record.provider !== undefined && sameProviderRef(entry.preset.ref, record.provider)
      : record.provider === undefined;
    if (sameSource) return entry.client;
  }
  return clientOf(record);
}

/**
 * The engine's `ProviderResolver`: the configured preset with the same name, options and client, else the catalog
 * rebuilt from the stored reference with the STORED client (which `configuredClient` hands over for such a
 * record). Should a configured client arrive here all the same (a caller passing `client:` to logout), its secret
 * is dropped rather than handed to a provider the tool did not configure: a confidential client's refresh or
 * revocation then fails, and the person signs in again.
 */
export function configuredResolver(providers: ReadonlyMap<string, ToolProvider>): ProviderResolver {
  return (ref, client) => {
    const own = configuredPreset(providers, ref, client);
    if (own) return own;
    // The very configured client object (not an equal stored secret: the record's own secret already went to
    // the places its sealed reference names, at sign-in).
    const configured = [...providers.values()].some((entry) => entry.client === client);
    return resolveProvider(ref, configured ? { clientId: client.clientId } : client);
  };
}

function configuredPreset(
  providers: ReadonlyMap<string, ToolProvider>,
  ref: ProviderRef,
  client: OAuthClient,
): Provider | undefined {
  for (const { preset } of providers.values()) {
    if (preset && preset.client.clientId === client.clientId && sameProviderRef(preset.ref, ref)) {
      return preset;
    }
  }
  return undefined;
}

function sameIssuer(a: string, b: string): boolean {
  return a.replace(/\/+$/, "") === b.replace(/\/+$/, "");
}
