/**
 * Vault leases on PostgreSQL: each held lease is a session-level advisory lock on a connection of its own, so a
 * holder that dies (kill -9, a crashed machine, a dropped network) loses the lock when the server drops its
 * connection, at once and without waiting for a TTL. The `vault_leases` row beside the lock says who holds it,
 * until when (the TTL, written and compared by the database's clock, so instances with skewed clocks agree), which
 * backend holds the lock, and the holder's note.
 *
 * acquire(name, owner, ttl), serialised per name within a store:
 *  - held by this store for `owner`: the row's expiry is extended (on the holder's own session, so a session the
 *    server dropped is noticed: the entry is forgotten and the lease taken afresh);
 *  - held by this store for another owner: refused while the row's expiry is ahead of the clock; once it passed,
 *    ownership moves to `owner` on the same session (the note stays). This is the contract's "an expired lease
 *    can be taken over", within one store;
 *  - not held here: pg_try_advisory_lock on a session of its own; if granted, the row is upserted (owner, expiry,
 *    holder_pid) keeping any note a dead predecessor left, which the refresher reads to explain an interrupted
 *    refresh;
 *  - held by another connection: refused, unless its row's expiry has passed (a hung holder, alive but stuck past
 *    its TTL): then that holder's backend is terminated (only if pg_locks shows it holding this very lock) and
 *    the lock is tried again for a short while.
 * release(name, owner) by the holder deletes the row and unlocks; by anyone else it does nothing. A release that
 * cannot reach the server closes the session instead, which releases the lock all the same.
 *
 * What the TTL still does: it bounds how long a live but stuck holder keeps others out; a dead one never does.
 */

import { setTimeout as sleep } from "node:timers/promises";
import { advisoryKey, type Database, type Session } from "../../db/index.ts";
import type { LeaseInfo } from "../types.ts";
import { LEASE_SQL } from "./sql.ts";

const LOCK_NAMESPACE = "vault-lease";
/** After terminating a hung holder, how often and how long to retry the lock while its backend exits. */
const TAKEOVER_RETRY_MS = 25;
const TAKEOVER_ATTEMPTS = 80;

interface Held {
  session: Session;
  owner: string;
  key: string;
}

export class PostgresLeases {
  readonly #db: () => Promise<Database>;
  /** The lease clock: undefined for the database's (see LEASE_SQL); a function only in tests that move time. */
  readonly #clock: (() => number) | undefined;
  readonly #held = new Map<string, Held>();
  readonly #queues = new Map<string, Promise<unknown>>();
  #closing = false;

  constructor(db: () => Promise<Database>, clock?: () => number) {
    this.#db = db;
    this.#clock = clock;
  }

  /** The lease clock's reading to pass to LEASE_SQL: null means the database's own clock. */
  #now(): number | null {
    return this.#clock ? this.#clock() : null;
  }

  acquire(name: string, owner: string, ttlMs: number): Promise<boolean> {
    return this.#serial(name, () => this.#acquire(name, owner, ttlMs));
  }

  release(name: string, owner: string): Promise<void> {
    return this.#serial(name, async () => {
      const mine = this.#held.get(name);
      if (!mine || mine.owner !== owner) return;
      this.#held.delete(name);
      try {
        await mine.session.query(LEASE_SQL.release, [name, owner]);
        await mine.session.query(LEASE_SQL.unlock, [mine.key]);
        mine.session.release();
      } catch {
        // The server is unreachable or dropped the session: closing the connection releases the lock anyway.
        mine.session.release(true);
      }
    });
  }

  async get(name: string): Promise<LeaseInfo | undefined> {
    const db = await this.#db();
    const row = (await db.query(LEASE_SQL.get, [name, this.#now()]))[0];
    if (!row) return undefined;
    const lease: LeaseInfo = { owner: String(row.owner), expiresAt: Number(row.expires_at) };
    if (typeof row.note === "string") lease.note = row.note;
    return lease;
  }

  setNote(name: string, owner: string, note: string): Promise<boolean> {
    return this.#serial(name, async () => {
      const mine = this.#held.get(name);
      if (!mine || mine.owner !== owner) return false;
      const rows = await mine.session.query(LEASE_SQL.setNote, [
        name,
        owner,
        note,
        mine.session.backendPid,
      ]);
      return rows.length === 1;
    });
  }

  /**
   * Lets every operation in flight finish (an acquire that is taking a lock ends up in #held), then drops every
   * session this store holds: the server releases their locks. Acquires that start meanwhile refuse. Without the
   * wait, an acquire finishing after the sweep kept its session checked out and the pool's end() waited for ever.
   */
  async close(): Promise<void> {
    this.#closing = true;
    await Promise.all([...this.#queues.values()]);
    for (const held of this.#held.values()) held.session.release(true);
    this.#held.clear();
  }

  async #acquire(name: string, owner: string, ttlMs: number): Promise<boolean> {
    if (this.#closing) return false;
    const db = await this.#db();
    const mine = this.#held.get(name);
    if (mine) {
      try {
        if (mine.owner !== owner) {
          const row = (await mine.session.query(LEASE_SQL.get, [name, this.#now()]))[0];
          if (row?.live === true) return false;
        }
        const rows = await mine.session.query(LEASE_SQL.extend, [
          name,
          owner,
          this.#now(),
          ttlMs,
          mine.session.backendPid,
        ]);
        if (rows.length === 1) {
          mine.owner = owner;
          return true;
        }
      } catch {
        // The session is gone (the server dropped it, or a contender ended it as hung): so is the lock.
      }
      this.#held.delete(name);
      mine.session.release(true);
    }
    return this.#take(db, name, owner, ttlMs);
  }

  async #take(db: Database, name: string, owner: string, ttlMs: number): Promise<boolean> {
    const key = advisoryKey(LOCK_NAMESPACE, name);
    const session = await db.session();
    let locked = false;
    try {
      locked = (await tryLock(session, key)) || (await this.#takeFromHung(db, session, name, key));
      if (!locked) {
        session.release();
        return false;
      }
      await session.query(LEASE_SQL.claim, [name, owner, this.#now(), ttlMs, session.backendPid]);
      this.#held.set(name, { session, owner, key });
      return true;
    } catch (error) {
      // Destroyed, not returned to the pool: a connection still holding the lock must not be reused.
      session.release(true);
      throw error;
    }
  }

  /**
   * The holder is another connection: if its row says its TTL passed (by the database's clock, the one it was written
   * with), end that connection and retry the lock.
   */
  async #takeFromHung(db: Database, session: Session, name: string, key: string): Promise<boolean> {
    const row = (await db.query(LEASE_SQL.get, [name, this.#now()]))[0];
    if (row?.live !== false || typeof row.holder_pid !== "number") return false;
    let terminated: Record<string, unknown>[];
    try {
      terminated = await db.query(LEASE_SQL.terminateHolder, [key, row.holder_pid]);
    } catch {
      // Not allowed to signal that backend (another role without pg_signal_backend): wait for its TTL like SQLite.
      return false;
    }
    if (!terminated.some((r) => r.terminated === true)) return false;
    for (let attempt = 0; attempt < TAKEOVER_ATTEMPTS; attempt++) {
      if (await tryLock(session, key)) return true;
      await sleep(TAKEOVER_RETRY_MS);
    }
    return false;
  }

  /** One operation per lease name at a time in this store, so two calls never race for the same entry. */
  #serial<T>(name: string, fn: () => Promise<T>): Promise<T> {
    const previous = this.#queues.get(name) ?? Promise.resolve();
    const run = previous.then(fn, fn);
    const settled = run.then(
      () => {},
      () => {},
    );
    this.#queues.set(name, settled);
    settled.then(() => {
      if (this.#queues.get(name) === settled) this.#queues.delete(name);
    });
    return run;
  }
}

async function tryLock(session: Session, key: string): Promise<boolean> {
  const rows = await session.query(LEASE_SQL.tryLock, [key]);
  return rows[0]?.got === true;
}
