/**
 * The official AHP version negotiation, pure (`types/version/registry.ts` @0383429, `docs/specification/
 * versioning.md`): versions are strict `MAJOR.MINOR.PATCH` (no leading zeros, prerelease or build metadata); a
 * host accepts any offered version in the caret range of one of its baselines (npm caret: `^1.0.0` = >=1.0.0
 * <2.0.0, `^0.9.0` = >=0.9.0 <0.10.0, `^0.0.3` = 0.0.3 only) and picks the highest, whatever the offer order.
 * Malformed offers are an explicit error (the official helper throws), here a value the host maps to `-32602`.
 */

/** `SUPPORTED_PROTOCOL_VERSIONS` at 0383429: the released compatibility baselines, most preferred first. */
export const OFFICIAL_SUPPORTED_PROTOCOL_VERSIONS: readonly string[] = Object.freeze([
  "1.0.0",
  "0.9.0",
]);

/** `PROTOCOL_VERSION` at 0383429: what new official code speaks (a client offers it first). */
export const OFFICIAL_PROTOCOL_VERSION = "1.1.0";

export type ProtocolVersion = readonly [number, number, number];

export type NegotiationOutcome =
  | { ok: true; version: string }
  | { ok: false; reason: "none" }
  | { ok: false; reason: "malformed"; index: number };

const SEMVER = /^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)$/;

/** The three components, or undefined when `value` is not a strict `MAJOR.MINOR.PATCH` of safe integers. */
export function parseProtocolVersion(value: unknown): ProtocolVersion | undefined {
  // Longer than any sane version: refuse before running the regex over attacker-sized input.
  if (typeof value !== "string" || value.length > 64) return undefined;
  const match = SEMVER.exec(value);
  if (!match) return undefined;
  const parts = [Number(match[1]), Number(match[2]), Number(match[3])] as const;
  return parts.every(Number.isSafeInteger) ? parts : undefined;
}

function parseOrThrow(value: string): ProtocolVersion {
  const parsed = parseProtocolVersion(value);
  if (!parsed) throw new TypeError(`'${value.slice(0, 64)}' is not a MAJOR.MINOR.PATCH version`);
  return parsed;
}

function compare(a: ProtocolVersion, b: ProtocolVersion): number {
  return a[0] - b[0] || a[1] - b[1] || a[2] - b[2];
}

/** Negative, zero or positive as `a` is below, equal to or above `b`. Throws on malformed input. */
export function compareProtocolVersions(a: string, b: string): number {
  return compare(parseOrThrow(a), parseOrThrow(b));
}

/** npm caret, as the official helper spells it: same major; below 1.0.0 same minor; below 0.1.0 same patch. */
function inCaretRange(v: ProtocolVersion, base: ProtocolVersion): boolean {
  return (
    v[0] === base[0] &&
    (v[0] > 0 || v[1] === base[1]) &&
    (v[0] > 0 || v[1] > 0 || v[2] === base[2]) &&
    compare(v, base) >= 0
  );
}

/** Validates a host's configured baselines once (a typo there must fail at startup, not per connection). */
export function parseBaselines(baselines: readonly string[]): ProtocolVersion[] {
  if (baselines.length === 0)
    throw new TypeError("an AHP host needs at least one protocol version");
  return baselines.map(parseOrThrow);
}

/**
 * The offered entry (verbatim) to answer with, `none` when no offer fits a baseline, or `malformed` with the
 * index of the first entry that is not a strict version (checked before choosing, as the official helper does).
 */
export function negotiateProtocolVersion(
  offered: readonly unknown[],
  baselines: readonly string[] | readonly ProtocolVersion[],
): NegotiationOutcome {
  const bases = baselines.map((b) => (typeof b === "string" ? parseOrThrow(b) : b));
  let best: { text: string; v: ProtocolVersion } | undefined;
  for (let index = 0; index < offered.length; index++) {
    const text = offered[index];
    const v = parseProtocolVersion(text);
    if (!v) return { ok: false, reason: "malformed", index };
    if (!bases.some((b) => inCaretRange(v, b))) continue;
    if (!best || compare(v, best.v) > 0) best = { text: text as string, v };
  }
  return best ? { ok: true, version: best.text } : { ok: false, reason: "none" };
}
