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
import type { CredentialRecord } from "../../vault/index.ts";
import type { ToolProvider } from "./providers.ts";

/** The engine's `clientFor`: the configured client the tokens were issued to, else the stored registration. */
export function configuredClient(
  providers: ReadonlyMap<string, ToolProvider>,
  record: CredentialRecord,
): OAuthClient {
  for (const entry of providers.values()) {
    if (entry.client.clientId === record.clientId && sameIssuer(entry.issuer, record.issuer))
      return entry.client;
  }
  return clientOf(record);
}

/** The engine's `ProviderResolver`: the configured preset with the same name, options and client, else the catalog. */
export function configuredResolver(providers: ReadonlyMap<string, ToolProvider>): ProviderResolver {
  return (ref, client) => configuredPreset(providers, ref, client) ?? resolveProvider(ref, client);
}

function configuredPreset(
  providers: ReadonlyMap<string, ToolProvider>,
  ref: ProviderRef,
  client: OAuthClient,
): Provider | undefined {
  for (const { preset } of providers.values()) {
    if (
      preset &&
      preset.ref.name === ref.name &&
      preset.client.clientId === client.clientId &&
      sameOptions(preset.ref.options, ref.options)
    ) {
      return preset;
    }
  }
  return undefined;
}

function sameOptions(
  a: Record<string, string> | undefined,
  b: Record<string, string> | undefined,
): boolean {
  const left = Object.entries(a ?? {});
  return left.length === Object.keys(b ?? {}).length && left.every(([k, v]) => b?.[k] === v);
}

function sameIssuer(a: string, b: string): boolean {
  return a.replace(/\/+$/, "") === b.replace(/\/+$/, "");
}
