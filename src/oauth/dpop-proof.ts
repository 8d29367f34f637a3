/**
 * The resource server's side of RFC 9449 beyond what oauth4webapi's `validateJwtAccessToken` checks (the proof's
 * signature, `typ`, `htm`, `htu`, `ath`, `iat` within 5 minutes, and `cnf.jkt` binding it to the token):
 * - a proof is accepted once (§11.1): its `jti` is remembered, per key thumbprint, for as long as its `iat` is
 *   acceptable, in a bounded map (the oldest entry goes first when it is full);
 * - a server nonce (§9), when asked for: an HMAC of the current minute under a per-process secret, so it needs no
 *   storage and changes on its own; the current and the previous minute's are accepted, so a client holding one
 *   does not fail at each boundary.
 */

import { createHmac, randomBytes } from "node:crypto";

/** How long after its `iat` a proof is acceptable (oauth4webapi's window) plus the clock skew allowed. */
export const DPOP_PROOF_WINDOW_SECONDS = 300;
const DEFAULT_MAX_ENTRIES = 100_000;

export class DpopReplayCache {
  readonly #seen = new Map<string, number>();
  readonly #max: number;

  constructor(max = DEFAULT_MAX_ENTRIES) {
    this.#max = max;
  }

  /** True the first time `key` (thumbprint and jti) is offered before `until` (ms); false for a replay. */
  first(key: string, until: number, now = Date.now()): boolean {
    const known = this.#seen.get(key);
    if (known !== undefined && known > now) return false;
    if (this.#seen.size >= this.#max) this.#sweep(now);
    this.#seen.delete(key);
    this.#seen.set(key, until);
    return true;
  }

  get size(): number {
    return this.#seen.size;
  }

  #sweep(now: number): void {
    for (const [key, until] of this.#seen) {
      if (until <= now) this.#seen.delete(key);
    }
    // Still full: drop the oldest remembered proofs (insertion order), keeping the map bounded.
    while (this.#seen.size >= this.#max)
      this.#seen.delete(this.#seen.keys().next().value as string);
  }
}

export interface DpopNonces {
  /** The nonce to hand out now (a `DPoP-Nonce` header). */
  current(): string;
  /** Whether a proof's `nonce` claim is one this server handed out recently. */
  accepts(nonce: unknown): boolean;
}

export function dpopNonces(
  options: { secret?: Buffer; windowSeconds?: number; now?: () => number } = {},
): DpopNonces {
  const secret = options.secret ?? randomBytes(32);
  const windowMs = (options.windowSeconds ?? 60) * 1000;
  const now = options.now ?? Date.now;
  const nonceOf = (window: number) =>
    createHmac("sha256", secret).update(String(window)).digest("base64url").slice(0, 32);
  return {
    current: () => nonceOf(Math.floor(now() / windowMs)),
    accepts(nonce) {
      if (typeof nonce !== "string") return false;
      const window = Math.floor(now() / windowMs);
      return nonce === nonceOf(window) || nonce === nonceOf(window - 1);
    },
  };
}
