/**
 * Picks the dialect from `initialize` params and negotiates the seed's numeric `protocolVersion`. The official
 * dialect's SemVer negotiation lives in `../version.ts` (shared with the client). Pure.
 */

import { SEED_PROTOCOL_VERSIONS } from "../wire.ts";

export type Dialect = "official" | "seed";

/** `protocolVersions: string[]` means official; a numeric `protocolVersion` means the seed; anything else is neither. */
export function detectDialect(params: unknown): Dialect | undefined {
  if (params === null || typeof params !== "object") return undefined;
  const p = params as Record<string, unknown>;
  const hasOfficial = "protocolVersions" in p;
  const hasSeed = typeof p.protocolVersion === "number";
  if (hasOfficial && !hasSeed) return "official";
  if (hasSeed && !hasOfficial) return "seed";
  return undefined;
}

/** `data.supportedVersions` for `-32005`: the official host sends its baselines (`SUPPORTED_PROTOCOL_VERSIONS`). */
export function supportedVersions(
  dialect: Dialect,
  baselines: readonly string[],
): Array<string | number> {
  return dialect === "seed" ? [...SEED_PROTOCOL_VERSIONS] : [...baselines];
}

export function negotiateSeed(version: number): number | undefined {
  return (SEED_PROTOCOL_VERSIONS as readonly number[]).includes(version) ? version : undefined;
}
