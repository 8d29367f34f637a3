/**
 * The RuntimeStore on PostgreSQL, for several runtime instances sharing one database (issue 11). Same semantics as
 * the SQLite store: `transition` is one conditional `UPDATE … WHERE status = ANY($from) RETURNING` (a duplicate,
 * a timeout and a result racing, from any instance, apply one change); entries take a sequence; views keep the
 * latest per (thread, view_type). Opened with the async `PostgresRuntimeStore.open(url)`, which applies the schema.
 *
 * Across instances: `lockGroup` holds a session-level advisory lock per thread on a connection of its own, so a
 * process killed while holding it loses the connection and the server frees the lock (no TTL to wait out). The
 * wait for it is bounded (`lockWaitMs`): a thread held elsewhere fails fast with `rap_thread_busy` (a callback is
 * answered 503 + Retry-After) rather than parking every instance's receiver on it, each with a connection held.
 * Failures are DatabaseErrors naming the redacted URL; a 500 from the receiver then makes the tool retry.
 */

import {
  advisoryKey,
  type Database,
  DatabaseError,
  DEFAULT_GRACE_MS,
  gone,
  openDatabase,
  type Presence,
  type Row,
  startPresence,
} from "../../db/index.ts";
import { callFromRow, jsonColumn } from "./call-row.ts";
import { callExists, RuntimeStoreError, ThreadBusyError } from "./errors.ts";
import { RUNTIME_COMPONENT, RUNTIME_MIGRATIONS } from "./postgres-schema.ts";
import type {
  CallRecord,
  NewCall,
  NewThreadEntry,
  RuntimeStore,
  SubscriptionState,
  ThreadEntry,
  Transition,
} from "./store.ts";

const OPEN = "status IN ('pending', 'authorizing')";

const SQL = {
  create: `INSERT INTO rap_calls (group_id, id, call_id, operation, arguments, user_id, toolset, base_url,
      requires_auth, status, subscription, result, created_at, updated_at, deadline, sent, sender)
    VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, 'pending', 'none', NULL, $10, $10, $11, false, $12)
    ON CONFLICT DO NOTHING RETURNING *`,
  get: "SELECT * FROM rap_calls WHERE group_id = $1 AND id = $2",
  markSent: "UPDATE rap_calls SET sent = true WHERE group_id = $1 AND id = $2",
  // Unsent open calls of this instance, or of one the database says is gone (src/db/presence.ts), taken over.
  claimUnsent: `UPDATE rap_calls c SET sender = $1
    FROM (SELECT group_id, id FROM rap_calls
           WHERE NOT sent AND ${OPEN} AND (sender IS NULL OR sender = $1 OR ${gone("sender", "$2")})
           ORDER BY ord LIMIT $3 FOR UPDATE SKIP LOCKED) u
    WHERE c.group_id = u.group_id AND c.id = u.id
    RETURNING c.*`,
  // Test and write in one statement: only one of several racing transitions (from any instance) matches.
  transition: `UPDATE rap_calls SET status = $3, result = COALESCE($4, result),
      subscription = COALESCE($5, subscription), updated_at = $6
    WHERE group_id = $1 AND id = $2 AND status = ANY($7::text[]) RETURNING *`,
  // The change and its delivery key in one statement: both are committed or neither (a key only if it changed).
  transitionKeyed: `WITH done AS (
      UPDATE rap_calls SET status = $3, result = COALESCE($4, result),
        subscription = COALESCE($5, subscription), updated_at = $6::bigint
      WHERE group_id = $1 AND id = $2 AND status = ANY($7::text[]) RETURNING *
    ), recorded AS (
      INSERT INTO rap_deliveries (group_id, key, at) SELECT group_id, $8::text, $6::bigint FROM done
      ON CONFLICT DO NOTHING
    )
    SELECT * FROM done`,
  setSubscription: `UPDATE rap_calls SET subscription = $4, updated_at = $5
    WHERE group_id = $1 AND id = $2 AND subscription = $3 RETURNING 1`,
  list: "SELECT * FROM rap_calls WHERE group_id = $1 ORDER BY created_at, ord",
  overdue: `SELECT * FROM rap_calls WHERE ${OPEN} AND deadline <= $1 ORDER BY deadline LIMIT $2`,
  nextDeadline: `SELECT MIN(deadline) AS deadline FROM rap_calls WHERE ${OPEN}`,
  appendEntry: "INSERT INTO rap_entries (group_id, at, body) VALUES ($1, $2, $3) RETURNING seq",
  // The key and the entry in one statement: either both are committed or neither (a seen key inserts nothing).
  appendKeyed: `WITH fresh AS (
      INSERT INTO rap_deliveries (group_id, key, at) VALUES ($1, $4, $2) ON CONFLICT DO NOTHING RETURNING 1
    )
    INSERT INTO rap_entries (group_id, at, body) SELECT $1, $2, $3 FROM fresh RETURNING seq`,
  listEntries: "SELECT seq, body FROM rap_entries WHERE group_id = $1 ORDER BY seq",
  putView: `INSERT INTO rap_views (group_id, view_type, content, updated_at) VALUES ($1, $2, $3, $4)
    ON CONFLICT (group_id, view_type) DO UPDATE SET content = excluded.content, updated_at = excluded.updated_at`,
  listViews: "SELECT view_type, content FROM rap_views WHERE group_id = $1 ORDER BY view_type",
  recordDelivery: `INSERT INTO rap_deliveries (group_id, key, at) VALUES ($1, $2, $3)
    ON CONFLICT DO NOTHING RETURNING 1`,
  hasDelivery: "SELECT 1 FROM rap_deliveries WHERE group_id = $1 AND key = $2",
  // The first instance records its fingerprint; every later one reads the recorded value back.
  bindKey: `WITH ins AS (
      INSERT INTO rap_runtime_meta (name, value) VALUES ('callback_key', $1) ON CONFLICT DO NOTHING RETURNING value
    )
    SELECT value FROM ins UNION ALL SELECT value FROM rap_runtime_meta WHERE name = 'callback_key'`,
  readKey: "SELECT value FROM rap_runtime_meta WHERE name = 'callback_key'",
} as const;

/** How long a task waits for its thread's lock before giving up with `rap_thread_busy` (default). */
export const DEFAULT_LOCK_WAIT_MS = 10_000;

/** PostgreSQL's SQLSTATE for a lock wait that ran past `lock_timeout`. */
const LOCK_NOT_AVAILABLE = "55P03";

export interface PostgresRuntimeStoreOptions {
  /** Connections for statements (default 10) and for thread locks (default 16) in this process. */
  poolSize?: number;
  lockPoolSize?: number;
  /**
   * How long a task waits for its thread's lock (default 10 s). Past it the task fails with `rap_thread_busy` and
   * nothing is applied (a callback is answered 503 + Retry-After), instead of a slow hook on one instance stopping
   * the thread everywhere, each waiter holding a lock connection.
   */
  lockWaitMs?: number;
}

export class PostgresRuntimeStore implements RuntimeStore {
  /** The database URL without its password, for messages and logs. */
  readonly label: string;
  readonly #db: Database;
  readonly #lockWaitMs: number;
  /** This instance's presence: the calls it stores name its key, so another sends them if it dies first. */
  readonly #presence: Presence;

  private constructor(db: Database, lockWaitMs: number, presence: Presence) {
    this.#db = db;
    this.label = db.label;
    this.#lockWaitMs = lockWaitMs;
    this.#presence = presence;
  }

  /** Connects and brings the schema up to date (safe when several instances start at once). */
  static async open(
    url: string,
    options: PostgresRuntimeStoreOptions = {},
  ): Promise<PostgresRuntimeStore> {
    const db = await openDatabase(url, {
      component: RUNTIME_COMPONENT,
      migrations: RUNTIME_MIGRATIONS,
      ...(options.poolSize ? { poolSize: options.poolSize } : {}),
      ...(options.lockPoolSize ? { sessionPoolSize: options.lockPoolSize } : {}),
    });
    const wait = options.lockWaitMs ?? DEFAULT_LOCK_WAIT_MS;
    if (!Number.isSafeInteger(wait) || wait < 1) {
      await db.close();
      throw new RangeError("lockWaitMs must be a whole number of milliseconds, at least 1");
    }
    let presence: Presence;
    try {
      presence = await startPresence(db);
    } catch (error) {
      await db.close();
      throw error;
    }
    return new PostgresRuntimeStore(db, wait, presence);
  }

  async createCall(call: NewCall): Promise<CallRecord> {
    const [row] = await this.#db.query(SQL.create, [
      call.groupId,
      call.id,
      call.callId,
      call.operation,
      JSON.stringify(call.arguments),
      call.userId,
      call.toolset,
      call.baseUrl,
      call.requiresAuth,
      call.createdAt,
      call.deadline,
      this.#presence.key,
    ]);
    if (!row) throw callExists(call.groupId, call.id);
    return this.#record(row);
  }

  async markSent(groupId: string, id: string): Promise<void> {
    await this.#db.query(SQL.markSent, [groupId, id]);
  }

  async claimUnsent(limit: number): Promise<CallRecord[]> {
    const rows = await this.#db.query(SQL.claimUnsent, [
      this.#presence.key,
      DEFAULT_GRACE_MS,
      limit,
    ]);
    return rows.map((r) => this.#record(r)).sort((a, b) => a.createdAt - b.createdAt);
  }

  async getCall(groupId: string, id: string): Promise<CallRecord | undefined> {
    const [row] = await this.#db.query(SQL.get, [groupId, id]);
    return row ? this.#record(row) : undefined;
  }

  async transition(groupId: string, id: string, change: Transition) {
    const params = [
      groupId,
      id,
      change.to,
      change.result ? JSON.stringify(change.result) : null,
      change.subscription ?? null,
      change.at,
      [...change.from],
    ];
    const [row] =
      change.deliveryKey === undefined
        ? await this.#db.query(SQL.transition, params)
        : await this.#db.query(SQL.transitionKeyed, [...params, change.deliveryKey]);
    return row ? this.#record(row) : undefined;
  }

  async setSubscription(
    groupId: string,
    id: string,
    from: SubscriptionState,
    to: SubscriptionState,
    at: number,
  ): Promise<boolean> {
    return (await this.#db.query(SQL.setSubscription, [groupId, id, from, to, at])).length === 1;
  }

  async listCalls(groupId: string): Promise<CallRecord[]> {
    return (await this.#db.query(SQL.list, [groupId])).map((r) => this.#record(r));
  }

  async overdueCalls(now: number, limit = 100): Promise<CallRecord[]> {
    return (await this.#db.query(SQL.overdue, [now, limit])).map((r) => this.#record(r));
  }

  async nextDeadline(): Promise<number | undefined> {
    const [row] = await this.#db.query(SQL.nextDeadline);
    return row?.deadline == null ? undefined : Number(row.deadline);
  }

  appendEntry(groupId: string, entry: NewThreadEntry): Promise<ThreadEntry>;
  appendEntry(
    groupId: string,
    entry: NewThreadEntry,
    deliveryKey: string,
  ): Promise<ThreadEntry | undefined>;
  async appendEntry(
    groupId: string,
    entry: NewThreadEntry,
    deliveryKey?: string,
  ): Promise<ThreadEntry | undefined> {
    const body = JSON.stringify(entry);
    const [row] =
      deliveryKey === undefined
        ? await this.#db.query(SQL.appendEntry, [groupId, entry.at, body])
        : await this.#db.query(SQL.appendKeyed, [groupId, entry.at, body, deliveryKey]);
    return row ? ({ ...entry, seq: Number(row.seq) } as ThreadEntry) : undefined;
  }

  async listEntries(groupId: string): Promise<ThreadEntry[]> {
    return (await this.#db.query(SQL.listEntries, [groupId])).map(
      (row) =>
        ({ ...(this.#json(row.body, "entry") as object), seq: Number(row.seq) }) as ThreadEntry,
    );
  }

  async putView(groupId: string, viewType: string, content: unknown, at: number): Promise<void> {
    await this.#db.query(SQL.putView, [groupId, viewType, JSON.stringify(content ?? null), at]);
  }

  async listViews(groupId: string): Promise<Record<string, unknown>> {
    const rows = await this.#db.query(SQL.listViews, [groupId]);
    return Object.fromEntries(
      rows.map((r) => [String(r.view_type), this.#json(r.content, "view")]),
    );
  }

  async hasDelivery(groupId: string, deliveryKey: string): Promise<boolean> {
    return (await this.#db.query(SQL.hasDelivery, [groupId, deliveryKey])).length > 0;
  }

  async recordDelivery(groupId: string, deliveryKey: string, at: number): Promise<boolean> {
    return (await this.#db.query(SQL.recordDelivery, [groupId, deliveryKey, at])).length === 1;
  }

  async lockGroup<T>(groupId: string, fn: () => Promise<T>): Promise<T> {
    const key = advisoryKey("rap-group", groupId);
    const session = await this.#db.session();
    let destroy = false;
    try {
      // A bounded wait: lock_timeout covers advisory locks too. Set per acquire (one round trip) since the lock
      // sessions are pooled; only lockGroup uses them.
      await session.query("SELECT set_config('lock_timeout', $1, false)", [
        `${this.#lockWaitMs}ms`,
      ]);
      try {
        await session.query("SELECT pg_advisory_lock($1)", [key]);
      } catch (error) {
        if (!(error instanceof DatabaseError && error.sqlState === LOCK_NOT_AVAILABLE)) throw error;
        throw new ThreadBusyError(
          "rap_thread_busy",
          `Thread ${JSON.stringify(groupId)} stayed busy on another runtime instance for ${this.#lockWaitMs} ms ` +
            "(a slow hook or task holds its lock); nothing was applied. Retry in a moment.",
          { cause: error },
        );
      }
      try {
        return await fn();
      } finally {
        // If the unlock cannot be sent, closing the connection frees the lock all the same.
        await session.query("SELECT pg_advisory_unlock($1)", [key]).catch(() => {
          destroy = true;
        });
      }
    } catch (error) {
      if (!(error instanceof ThreadBusyError)) destroy = true;
      throw error;
    } finally {
      session.release(destroy);
    }
  }

  async bindCallbackKey(fingerprint: string): Promise<boolean> {
    let rows = await this.#db.query(SQL.bindKey, [fingerprint]);
    // Nothing back: another instance's insert committed after this statement's snapshot was taken (the conflict
    // check sees it, the SELECT does not). A new statement takes a new snapshot and reads it.
    if (rows.length === 0) rows = await this.#db.query(SQL.readKey);
    return rows.length > 0 && rows.every((r) => r.value === fingerprint);
  }

  async close(): Promise<void> {
    await this.#presence.stop();
    await this.#db.close();
  }

  #record(row: Row): CallRecord {
    return callFromRow(row, {
      // bigint columns arrive as strings (pg keeps 64-bit values exact); ours are ms timestamps, safe as numbers.
      num: (v) => {
        const n = Number(v);
        if (v === null || !Number.isSafeInteger(n))
          throw this.#corrupt("a numeric column is not a number");
        return n;
      },
      corrupt: (why, cause) => this.#corrupt(why, cause),
    });
  }

  #json(value: unknown, what: string): unknown {
    return jsonColumn(value, what, { corrupt: (why, cause) => this.#corrupt(why, cause) });
  }

  #corrupt(why: string, cause?: unknown): RuntimeStoreError {
    return new RuntimeStoreError(
      "rap_store_corrupt",
      `The RAP runtime database at ${this.label} has a bad row (${why}). Restore it from a backup.`,
      { cause },
    );
  }
}
