/**
 * What the console calls things: providers and resources by their names ("GitHub", "Demo authorization server",
 * "Demo API"), not raw issuer URLs. Names come from whoever starts the console (the demo knows its servers, the CLI
 * passes the presets' display names); an issuer nobody named is shown by its host. The URLs stay in the details.
 */

import type { CredentialSummary } from "../vault/types.ts";

export interface ConsoleNames {
  /** Issuer URL → name ("http://127.0.0.1:4444" → "Demo authorization server"). */
  issuers?: Record<string, string>;
  /** RFC 8707 resource → name ("https://alpha.example.test/" → "Alpha API"). */
  resources?: Record<string, string>;
  /** Preset name → display name ("github" → "GitHub"). */
  presets?: Record<string, string>;
}

/** "GitHub", "GitHub (github.example.com)" for a self-hosted preset, an issuer's given name, else its host. */
export function providerName(
  summary: Pick<CredentialSummary, "provider" | "issuer">,
  names: ConsoleNames = {},
): string {
  const ref = summary.provider;
  if (ref && ref.name !== "generic") {
    const name = names.presets?.[ref.name] ?? ref.name;
    const given = ref.options?.host;
    const host = given ? (URL.parse(given)?.host ?? given) : undefined;
    return host ? `${name} (${host})` : name;
  }
  return names.issuers?.[summary.issuer] ?? URL.parse(summary.issuer)?.host ?? summary.issuer;
}

/** A resource's given name, else the resource itself ("" when the credential has none). */
export function resourceName(resource: string, names: ConsoleNames = {}): string {
  return names.resources?.[resource] ?? resource;
}

/** Where a credential lives, in words: "Demo authorization server (for Demo API)". */
export function whereText(
  summary: Pick<CredentialSummary, "provider" | "issuer" | "resource">,
  names: ConsoleNames = {},
): string {
  const at = providerName(summary, names);
  return summary.resource ? `${at} (for ${resourceName(summary.resource, names)})` : at;
}
