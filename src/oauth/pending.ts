/**
 * Pending authorization requests, found by their `state`: at least 256 random bits from oauth4webapi, kept only
 * as a SHA-256 digest, compared in constant time, single use, and expiring. A replayed, altered or stale `state`
 * finds nothing, and nothing else happens.
 */

import { createHash, timingSafeEqual } from "node:crypto";
import { generateRandomState } from "oauth4webapi";
import { AuthorizationResponseError } from "./errors.ts";

export const DEFAULT_PENDING_TTL_MS = 10 * 60_000;

/**
 * May be synchronous (memory) or asynchronous (a database shared by several instances: the RAP tool on
 * PostgreSQL); callers await every method.
 */
export interface PendingStore<T> {
  /** Stores `value` and returns the fresh `state` that will find it exactly once. */
  create(value: T, ttlMs?: number): string | Promise<string>;
  /** Finds and removes the value for `state`; throws `state_invalid` when unknown, used or expired. */
  consume(state: string | null | undefined): T | Promise<T>;
  /** How many are waiting (expired ones are swept first). */
  size(): number | Promise<number>;
}

interface Entry<T> {
  digest: Buffer;
  value: T;
  expiresAt: number;
}

export class MemoryPendingStore<T> implements PendingStore<T> {
  readonly #entries = new Map<string, Entry<T>>();
  readonly #ttlMs: number;
  readonly #max: number;

  constructor(options: { ttlMs?: number; maxEntries?: number } = {}) {
    this.#ttlMs = options.ttlMs ?? DEFAULT_PENDING_TTL_MS;
    this.#max = options.maxEntries ?? 10_000;
  }

  create(value: T, ttlMs = this.#ttlMs): string {
    this.#sweep();
    if (this.#entries.size >= this.#max) {
      throw new AuthorizationResponseError(
        "too_many_pending",
        "Too many authorizations are in progress; try again later.",
      );
    }
    const state = generateRandomState();
    const digest = sha256(state);
    this.#entries.set(digest.toString("hex"), { digest, value, expiresAt: Date.now() + ttlMs });
    return state;
  }

  consume(state: string | null | undefined): T {
    const refused = new AuthorizationResponseError(
      "state_invalid",
      "The authorization response's state is unknown, already used or expired; start the sign-in again.",
    );
    if (typeof state !== "string" || state.length === 0 || state.length > 512) throw refused;
    const digest = sha256(state);
    const entry = this.#entries.get(digest.toString("hex"));
    // The map lookup is on a digest, which leaks nothing about the state; the final comparison is constant-time.
    if (!entry || !timingSafeEqual(entry.digest, digest)) throw refused;
    this.#entries.delete(digest.toString("hex"));
    if (entry.expiresAt <= Date.now()) throw refused;
    return entry.value;
  }

  size(): number {
    this.#sweep();
    return this.#entries.size;
  }

  #sweep(): void {
    const now = Date.now();
    for (const [key, entry] of this.#entries) if (entry.expiresAt <= now) this.#entries.delete(key);
  }
}

function sha256(value: string): Buffer {
  return createHash("sha256").update(value).digest();
}
