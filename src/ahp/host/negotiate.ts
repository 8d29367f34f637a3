/**
 * Picks the dialect from `initialize` params and negotiates the version. official: the highest offered SemVer that is
 * caret-compatible with a baseline (`docs/specification/versioning.md`); the seed: its numeric `protocolVersion`.
 * Pure.
 */

import { AHP_PROTOCOL_VERSION, AHP_VERSION_BASELINES, SEED_PROTOCOL_VERSIONS } from "../wire.ts";

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

type SemVer = [number, number, number];

export function parseSemVer(value: string): SemVer | undefined {
  const match = /^(0|[1-9]\d{0,8})\.(0|[1-9]\d{0,8})\.(0|[1-9]\d{0,8})$/.exec(value);
  return match ? [Number(match[1]), Number(match[2]), Number(match[3])] : undefined;
}

function compare(a: SemVer, b: SemVer): number {
  return a[0] - b[0] || a[1] - b[1] || a[2] - b[2];
}

/** npm's caret: same major (and same minor below 1.0.0), not below the baseline. */
function caretCompatible(version: SemVer, baseline: SemVer): boolean {
  if (compare(version, baseline) < 0 || version[0] !== baseline[0]) return false;
  return baseline[0] !== 0 || version[1] === baseline[1];
}

/** The chosen version (one of the offered strings, verbatim), or undefined when none fits. */
export function negotiateOfficial(
  offered: readonly string[],
  baselines: readonly string[] = AHP_VERSION_BASELINES,
): string | undefined {
  const bases = baselines.map(parseSemVer).filter((b): b is SemVer => b !== undefined);
  let best: { text: string; v: SemVer } | undefined;
  for (const text of offered) {
    const v = parseSemVer(text);
    if (!v || !bases.some((b) => caretCompatible(v, b))) continue;
    if (!best || compare(v, best.v) > 0) best = { text, v };
  }
  return best?.text;
}

/** `data.supportedVersions` for `-32005`, per dialect. */
export function supportedVersions(dialect: Dialect): Array<string | number> {
  return dialect === "seed"
    ? [...SEED_PROTOCOL_VERSIONS]
    : [...new Set<string>([AHP_PROTOCOL_VERSION, ...AHP_VERSION_BASELINES])];
}

export function negotiateSeed(version: number): number | undefined {
  return (SEED_PROTOCOL_VERSIONS as readonly number[]).includes(version) ? version : undefined;
}
