/**
 * What lets a PostgreSQL store serve credential rows from memory without ever serving one that a change which
 * returned to its writer has replaced: a connection of its own that LISTENs for changes, and a lease in
 * `vault_cache_instances` that writers respect.
 *
 * One session, from start to end:
 *  1. LISTEN on the channel (schema.ts: a trigger notifies `c:<id>` inside every transaction that changes a row, so a
 *     notification exists if and only if the change commits, whoever wrote it).
 *  2. Register on that same connection: an id, the barrier number handed out last (`acked`), and an expiry by the
 *     database's clock, TTL ahead. From now on every writer waits, after its change returned from the database, until
 *     this instance has acknowledged a barrier numbered after the change, or until its registration has expired
 *     (cache-barrier.ts).
 *  3. Serve: the cache starts empty (only rows read from now on are kept) with a local deadline of
 *     send time of the registration + TTL − margin, on the monotonic clock. Notifications are handled in order as they
 *     arrive: `c:<id>` drops that record, `b:<n>` is acknowledged (after every notification before it was handled).
 *  4. Renew on the same connection every TTL/3, only if the registration has not lapsed in the database and the
 *     renewal was sent before the local deadline; the deadline moves to send time + TTL − margin. A renewal that
 *     fails, finds the registration lapsed, or cannot be sent in time ends the session.
 * The session ends on any error of the connection (pg_terminate_backend, a server restart, a network failure) or a
 * lapse: the cache stops serving and is emptied at once, the registration is deleted when the database answers
 * (writers then stop waiting for it; otherwise it expires), and a new session starts after a backoff. Until it
 * serves, every read goes to the database.
 *
 * Why no read can be stale once a writer's call returned (the writer's side is cache-barrier.ts):
 *  - The writer returned after every registration it saw live either acknowledged its barrier, or expired. An
 *    acknowledgement is sent only after the change's notification was handled (the channel delivers in commit order,
 *    and the barrier was numbered after the change committed, so its notification comes after the change's): the
 *    entry is gone and a read in flight cannot put it back (it holds a ticket from before; see cache.ts).
 *  - A registration the writer saw expired belongs to an instance whose local deadline passed earlier still (the
 *    deadline is computed from when the renewal was sent, the expiry from when the database ran it, both TTL later,
 *    minus a margin): it serves nothing past it, and starts over empty.
 *  - A registration made after the change committed serves only rows read after it, which include the change.
 *  - A registration made before the change but after the writer's barrier was numbered is not waited for (its
 *    `acked` starts at that number or later) and serves only rows read after it, which include the change.
 * Assumptions: the database's clock does not jump forward by more than the margin while a registration lives, and the
 * local monotonic clock runs at the database clock's rate within the margin over one TTL.
 */

import { randomBytes } from "node:crypto";
import type { Database, Listener } from "../../db/index.ts";
import type { RecordCache } from "./cache.ts";
import { CACHE_CHANNEL } from "./schema.ts";
import { CACHE_SQL } from "./sql.ts";

/** How long a registration lives without renewal: what a writer waits, at most, for an instance that hangs or died. */
export const CACHE_LEASE_MS = 3000;
/** Subtracted from the local deadline: covers clock rates and a renewal's own latency. */
const MARGIN_MS = 300;
const BACKOFF_MIN_MS = 100;
const BACKOFF_MAX_MS = 5000;
/** A session that served this long resets the backoff. */
const HEALTHY_MS = 10_000;

export interface CacheListenerOptions {
  db: () => Promise<Database>;
  cache: RecordCache;
  /** A record changed (its id), or any may have (undefined): the store drops the tokens it opened. */
  onChange?: (id: string | undefined) => void;
  /** Registration lifetime, default CACHE_LEASE_MS; renewed every third of it. */
  leaseMs?: number;
  clock?: () => number;
}

export class CacheListener {
  readonly #options: CacheListenerOptions;
  readonly #leaseMs: number;
  readonly #clock: () => number;
  #running: Promise<void> | undefined;
  #closed = false;
  #wake: (() => void) | undefined;
  #session: Session | undefined;

  constructor(options: CacheListenerOptions) {
    this.#options = options;
    this.#leaseMs = options.leaseMs ?? CACHE_LEASE_MS;
    this.#clock = options.clock ?? (() => performance.now());
  }

  /** Starts listening (once); reads go to the database until the first registration completes. */
  start(): void {
    if (this.#running || this.#closed) return;
    this.#running = this.#loop();
  }

  /** This instance's current registration, which its own writes need not wait for (they invalidate locally). */
  get instanceId(): string | undefined {
    return this.#session?.registered ? this.#session.id : undefined;
  }

  /** Sessions that ended so far (connection lost, lapse): for tests and diagnostics. */
  restarts = 0;

  async close(): Promise<void> {
    this.#closed = true;
    this.#options.cache.stop();
    this.#session?.end();
    this.#wake?.();
    await this.#running;
  }

  async #loop(): Promise<void> {
    let backoff = BACKOFF_MIN_MS;
    while (!this.#closed) {
      const began = this.#clock();
      try {
        await this.#serve();
      } catch {
        // Unreachable database, refused LISTEN, a failed registration: reads go to the database meanwhile.
      }
      this.#options.cache.stop();
      if (this.#closed) return;
      this.restarts++;
      if (this.#clock() - began > HEALTHY_MS) backoff = BACKOFF_MIN_MS;
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, backoff).unref();
        this.#wake = () => {
          clearTimeout(timer);
          resolve();
        };
      });
      this.#wake = undefined;
      backoff = Math.min(backoff * 2, BACKOFF_MAX_MS);
    }
  }

  /** One session: listen, register, serve and renew until the connection ends or the registration lapses. */
  async #serve(): Promise<void> {
    const { cache } = this.#options;
    const db = await this.#options.db();
    const session = new Session(randomBytes(9).toString("base64url"));
    const listener = await db.listen(CACHE_CHANNEL, (payload) => this.#notified(session, payload));
    session.listener = listener;
    void listener.ended.then(() => session.end());
    this.#session = session;
    try {
      if (this.#closed) return;
      const sent = this.#clock();
      await within(listener.query(CACHE_SQL.register, [session.id, this.#leaseMs]), this.#leaseMs);
      session.registered = true;
      if (this.#closed) return;
      session.until = sent + this.#leaseMs - MARGIN_MS;
      cache.start(session.until);
      // Barriers that arrived while registering: acknowledging them is harmless (GREATEST) and unblocks their writers.
      session.flushAcks();
      void listener.query(CACHE_SQL.prune).catch(() => {});
      await this.#renew(session);
    } finally {
      cache.stop();
      session.end();
      if (this.#session === session) this.#session = undefined;
      await within(listener.close(), 1000).catch(() => {});
      // Writers stop waiting for this registration at once rather than at its expiry (also one whose INSERT committed
      // after we gave up waiting for it). Not awaited: with the database gone it would wait out the connect timeout,
      // and the registration expires on its own.
      void db.query(CACHE_SQL.unregister, [session.id]).catch(() => {});
    }
  }

  async #renew(session: Session): Promise<void> {
    const { cache } = this.#options;
    const every = Math.max(1, Math.floor(this.#leaseMs / 3));
    for (;;) {
      const stop = await Promise.race([
        session.ended.then(() => true),
        new Promise<false>((resolve) => setTimeout(() => resolve(false), every).unref()),
      ]);
      if (stop || this.#closed) return;
      const sent = this.#clock();
      // Sent after the deadline: a writer may already have found this registration expired and not waited for it.
      if (sent >= session.until) return;
      const rows = await within(
        (session.listener as Listener).query(CACHE_SQL.renew, [session.id, this.#leaseMs]),
        session.until - sent,
      ).catch(() => undefined);
      if (rows?.length !== 1 || session.done) return;
      session.until = sent + this.#leaseMs - MARGIN_MS;
      cache.extend(session.until);
    }
  }

  #notified(session: Session, payload: string): void {
    const { cache, onChange } = this.#options;
    if (payload.startsWith("c:")) {
      const id = payload.slice(2);
      cache.invalidate(id);
      onChange?.(id);
    } else if (payload.startsWith("b:")) {
      const n = Number(payload.slice(2));
      if (Number.isSafeInteger(n)) session.ack(n);
    } else {
      cache.invalidateAll();
      onChange?.(undefined);
    }
  }
}

/** One listening connection and its registration. Acknowledgements go out one at a time, the highest pending first. */
class Session {
  readonly id: string;
  listener: Listener | undefined;
  registered = false;
  /** Local deadline (the listener's clock) before which the cache may serve. */
  until = 0;
  done = false;
  readonly ended: Promise<void>;
  #end!: () => void;
  #pending = 0;
  #sent = 0;
  #acking = false;

  constructor(id: string) {
    this.id = id;
    this.ended = new Promise<void>((resolve) => {
      this.#end = resolve;
    });
  }

  end(): void {
    this.done = true;
    this.#end();
  }

  /** Barrier `n` was seen after every notification before it was handled: say so. */
  ack(n: number): void {
    if (n > this.#pending) this.#pending = n;
    this.flushAcks();
  }

  flushAcks(): void {
    if (this.#acking || !this.registered || this.done || this.#pending <= this.#sent) return;
    this.#acking = true;
    void (async () => {
      try {
        while (!this.done && this.#pending > this.#sent) {
          const n = this.#pending;
          await (this.listener as Listener).query(CACHE_SQL.ack, [this.id, n]);
          this.#sent = n;
        }
      } catch {
        // A writer would wait for this acknowledgement until the registration expires: end the session instead, so
        // the registration is deleted and a new one starts.
        this.end();
      } finally {
        this.#acking = false;
      }
    })();
  }
}

/** The promise, or a rejection once `ms` passed without it settling. */
function within<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), Math.max(0, ms));
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}
