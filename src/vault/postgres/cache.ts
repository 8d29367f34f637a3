/**
 * The PostgreSQL store's in-process cache of credential rows: what `get`/`getById` read, kept as the database returned
 * it (sealed: the tokens are opened per read, through the store's OpenedTokens), served only while the cache's lease
 * says this process hears every change (cache-listener.ts). Pure bookkeeping, no I/O.
 *
 * Three rules make a hit as good as a read:
 * - Served only before `until` (a local monotonic deadline, set from the listener's last successful lease renewal and
 *   always earlier than the lease's expiry in the database). Past it, or once the listener stops, every entry is
 *   dropped and reads go to the database.
 * - An entry is dropped when a notification names its record id (`invalidate`), or all of them (`invalidateAll`).
 * - A read fills the cache only if nothing was invalidated between its start and its end (`ticket`/`fill`): a row
 *   read before a change committed and returned after its notification was handled would otherwise stay.
 * Only rows that were found and read cleanly are kept: an absence is not cached (an insert that bypassed a key's id,
 * by hand, could otherwise hide), nor a row that failed to read.
 */

import type { Row } from "../sqlite-rows.ts";

/** Entries kept; past it the oldest filled is dropped. */
export const CACHE_MAX_ENTRIES = 10_000;

interface Entry {
  id: string;
  row: Row;
}

/** Taken before a database read; `fill` refuses the row if anything was invalidated since. */
export interface CacheTicket {
  readonly changes: number;
}

export class RecordCache {
  readonly #entries = new Map<string, Entry>();
  readonly #byId = new Map<string, Set<string>>();
  readonly #max: number;
  readonly #clock: () => number;
  /** Bumped by every invalidation and by every start or stop of serving. */
  #changes = 0;
  /** performance.now() before which entries may be served; 0 when not serving. */
  #until = 0;
  /** Reads answered from memory, and reads that went to the database: for tests and diagnostics. */
  hits = 0;
  misses = 0;

  constructor(options: { max?: number; clock?: () => number } = {}) {
    this.#max = options.max ?? CACHE_MAX_ENTRIES;
    this.#clock = options.clock ?? (() => performance.now());
  }

  /** Whether entries may be served now. */
  get serving(): boolean {
    if (this.#until === 0) return false;
    if (this.#clock() < this.#until) return true;
    // The lease ran out before it was renewed: nothing kept can be vouched for any more.
    this.stop();
    return false;
  }

  get size(): number {
    return this.#entries.size;
  }

  /** The row kept under `key` (a credential key's encoding, or `#<id>`), when serving. */
  lookup(key: string): Row | undefined {
    const entry = this.serving ? this.#entries.get(key) : undefined;
    if (entry) this.hits++;
    else this.misses++;
    return entry?.row;
  }

  ticket(): CacheTicket {
    return { changes: this.#changes };
  }

  /** Keeps `row` (the record `id`'s) under `key`, unless something was invalidated since `ticket` or not serving. */
  fill(ticket: CacheTicket, key: string, id: string, row: Row): void {
    if (ticket.changes !== this.#changes || !this.serving) return;
    if (!this.#entries.has(key) && this.#entries.size >= this.#max) {
      const oldest = this.#entries.keys().next().value;
      if (oldest !== undefined) this.#drop(oldest);
    }
    this.#drop(key);
    this.#entries.set(key, { id, row });
    let keys = this.#byId.get(id);
    if (!keys) {
      keys = new Set();
      this.#byId.set(id, keys);
    }
    keys.add(key);
  }

  /** A change to record `id` committed (or is about to be known to have): drop what is kept for it. */
  invalidate(id: string): void {
    this.#changes++;
    const keys = this.#byId.get(id);
    if (!keys) return;
    this.#byId.delete(id);
    for (const key of keys) this.#entries.delete(key);
  }

  invalidateAll(): void {
    this.#changes++;
    this.#entries.clear();
    this.#byId.clear();
  }

  /**
   * Starts (or restarts) serving, empty, until `until`. Called when a registration completed: only rows read from
   * then on are kept, so a change missed before it cannot be served.
   */
  start(until: number): void {
    this.invalidateAll();
    this.#until = until;
  }

  /** Moves the deadline of the current serving period (a renewal); never starts one. */
  extend(until: number): void {
    if (this.#until !== 0) this.#until = until;
  }

  /** Stops serving and drops everything. */
  stop(): void {
    this.#until = 0;
    this.invalidateAll();
  }

  #drop(key: string): void {
    const entry = this.#entries.get(key);
    if (!entry) return;
    this.#entries.delete(key);
    const keys = this.#byId.get(entry.id);
    keys?.delete(key);
    if (keys?.size === 0) this.#byId.delete(entry.id);
  }
}
