/**
 * Sending a provider's requests somewhere else: a map from the provider's real origins to others (a proxy, a
 * sovereign cloud, or a simulator in tests). Only whole origins are replaced, and the replacement must be HTTPS or
 * loopback HTTP like every OAuth URL (`assertSecureUrl`), so a remap cannot downgrade a real provider to plain
 * HTTP over the network.
 */

import { assertSecureUrl } from "../oauth/index.ts";
import { ProviderConfigError } from "./errors.ts";

export type OriginMap = Readonly<Record<string, string>>;

/** Validates a map given by a caller (or read back from the vault) and normalises it to bare origins. */
export function checkOrigins(origins: OriginMap | undefined): OriginMap | undefined {
  if (!origins) return undefined;
  const out: Record<string, string> = {};
  for (const [from, to] of Object.entries(origins)) {
    const source = URL.parse(from);
    const target = URL.parse(to);
    if (!source || !target || source.protocol !== "https:") {
      throw new ProviderConfigError(
        "provider_origins_invalid",
        `The origin override ${JSON.stringify(from)} → ${JSON.stringify(to)} is not a pair of absolute URLs from an https:// origin.`,
      );
    }
    assertSecureUrl(target, "origin override");
    out[source.origin] = target.origin;
  }
  return out;
}

/** `url` with its origin replaced when the map names it. */
export function rebase(url: string, origins: OriginMap | undefined): string {
  if (!origins) return url;
  const parsed = new URL(url);
  const target = origins[parsed.origin];
  if (!target) return url;
  return `${target}${parsed.pathname}${parsed.search}`;
}

/** The map as a `ProviderRef` option (string values only). */
export function encodeOrigins(origins: OriginMap | undefined): Record<string, string> {
  return origins && Object.keys(origins).length > 0 ? { origins: JSON.stringify(origins) } : {};
}

export function decodeOrigins(value: string | undefined): OriginMap | undefined {
  if (value === undefined) return undefined;
  try {
    return checkOrigins(JSON.parse(value));
  } catch (error) {
    if (error instanceof ProviderConfigError) throw error;
    throw new ProviderConfigError(
      "provider_origins_invalid",
      "The stored origin overrides are not valid JSON.",
    );
  }
}
