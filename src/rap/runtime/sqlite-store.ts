/**
 * The default RuntimeStore: one SQLite file (node:sqlite), WAL, `synchronous=FULL`, a busy timeout, owner-only.
 * A callback is answered 200 only after its transition is committed here, so a result the tool saw accepted
 * survives kill -9 and power loss; a crash before the commit makes the tool retry (RAP: retry on 5xx/timeouts).
 * Writes go through a group commit (`group-commit.ts`): those arriving together share one transaction and one fsync,
 * and each resolves only once that transaction is committed.
 */

import { randomUUID } from "node:crypto";
import type { DatabaseSync, StatementSync } from "node:sqlite";
import { AgentAuthError } from "../../core/errors.ts";
import { openSqliteDatabase } from "../../core/sqlite.ts";
import { callFromRow, jsonColumn } from "./call-row.ts";
import { callExists, RuntimeStoreError } from "./errors.ts";
import { GroupCommit } from "./group-commit.ts";
import type {
  CallRecord,
  NewCall,
  NewThreadEntry,
  RuntimeStore,
  SubscriptionState,
  ThreadEntry,
  Transition,
} from "./store.ts";

const SCHEMA_VERSION = 1;

const SCHEMA = `
CREATE TABLE calls (
  group_id      TEXT    NOT NULL,
  id            TEXT    NOT NULL,
  call_id       TEXT,
  operation     TEXT    NOT NULL,
  arguments     TEXT    NOT NULL,
  user_id       TEXT,
  toolset       TEXT    NOT NULL,
  base_url      TEXT    NOT NULL,
  requires_auth TEXT,
  status        TEXT    NOT NULL,
  subscription  TEXT    NOT NULL,
  result        TEXT,
  created_at    INTEGER NOT NULL,
  updated_at    INTEGER NOT NULL,
  deadline      INTEGER NOT NULL,
  PRIMARY KEY (group_id, id)
);
CREATE INDEX calls_open_deadline ON calls (deadline) WHERE status IN ('pending', 'authorizing');
CREATE TABLE entries (
  seq      INTEGER PRIMARY KEY AUTOINCREMENT,
  group_id TEXT    NOT NULL,
  at       INTEGER NOT NULL,
  body     TEXT    NOT NULL
);
CREATE INDEX entries_by_group ON entries (group_id, seq);
CREATE TABLE views (
  group_id   TEXT    NOT NULL,
  view_type  TEXT    NOT NULL,
  content    TEXT    NOT NULL,
  updated_at INTEGER NOT NULL,
  PRIMARY KEY (group_id, view_type)
);
`;

// Added after schema 1 shipped: created on every open if missing (an older agentauth ignores the extra table), so
// files from before it need no version step.
const DELIVERIES = `CREATE TABLE IF NOT EXISTS deliveries (
  group_id TEXT    NOT NULL,
  key      TEXT    NOT NULL,
  at       INTEGER NOT NULL,
  PRIMARY KEY (group_id, key)
)`;

// Added after schema 1 too (issue 22 §7): `sent` is 1 once the tool acknowledged the call (rows from before count as
// sent); `sender` names the process (a random id per open) that stored it and sends it. One process uses the file, so
// an unsent call with another sender was left by a process that died between storing and sending.
const SENT_COLUMNS = [
  "ALTER TABLE calls ADD COLUMN sent INTEGER NOT NULL DEFAULT 1",
  "ALTER TABLE calls ADD COLUMN sender TEXT",
  "CREATE INDEX calls_unsent ON calls (created_at) WHERE sent = 0",
];

const OPEN = "status IN ('pending', 'authorizing')";

const SQL = {
  create: `INSERT INTO calls (group_id, id, call_id, operation, arguments, user_id, toolset, base_url,
      requires_auth, status, subscription, result, created_at, updated_at, deadline, sent, sender)
    VALUES ($group_id, $id, $call_id, $operation, $arguments, $user_id, $toolset, $base_url, $requires_auth,
      'pending', 'none', NULL, $created_at, $created_at, $deadline, 0, $sender)
    ON CONFLICT DO NOTHING RETURNING *`,
  get: "SELECT * FROM calls WHERE group_id = $group_id AND id = $id",
  markSent: "UPDATE calls SET sent = 1 WHERE group_id = $group_id AND id = $id",
  // One process per file: every unsent open call is this process's or a dead one's.
  claimUnsent: `UPDATE calls SET sender = $sender
    WHERE rowid IN (SELECT rowid FROM calls WHERE sent = 0 AND ${OPEN} ORDER BY created_at, rowid LIMIT $limit)
    RETURNING *`,
  // The status test and the write are one statement: a duplicate delivery, a timeout and a result racing
  // (even from two processes) can only ever apply one transition.
  transition: `UPDATE calls SET status = $to, result = COALESCE($result, result),
      subscription = COALESCE($subscription, subscription), updated_at = $at
    WHERE group_id = $group_id AND id = $id AND status IN (SELECT value FROM json_each($from))
    RETURNING *`,
  setSubscription: `UPDATE calls SET subscription = $to, updated_at = $at
    WHERE group_id = $group_id AND id = $id AND subscription = $from`,
  list: "SELECT * FROM calls WHERE group_id = $group_id ORDER BY created_at, rowid",
  overdue: `SELECT * FROM calls WHERE ${OPEN} AND deadline <= $now ORDER BY deadline LIMIT $limit`,
  nextDeadline: `SELECT MIN(deadline) AS deadline FROM calls WHERE ${OPEN}`,
  appendEntry:
    "INSERT INTO entries (group_id, at, body) VALUES ($group_id, $at, $body) RETURNING seq",
  recordDelivery:
    "INSERT INTO deliveries (group_id, key, at) VALUES ($group_id, $key, $at) ON CONFLICT DO NOTHING",
  hasDelivery: "SELECT 1 AS seen FROM deliveries WHERE group_id = $group_id AND key = $key",
  listEntries: "SELECT seq, body FROM entries WHERE group_id = $group_id ORDER BY seq",
  putView: `INSERT INTO views (group_id, view_type, content, updated_at) VALUES ($group_id, $view_type, $content, $at)
    ON CONFLICT (group_id, view_type) DO UPDATE SET content = excluded.content, updated_at = excluded.updated_at`,
  listViews: "SELECT view_type, content FROM views WHERE group_id = $group_id ORDER BY view_type",
} as const;

type Row = Record<string, unknown>;

export class SqliteRuntimeStore implements RuntimeStore {
  readonly path: string;
  readonly #db: DatabaseSync;
  readonly #sql: { [K in keyof typeof SQL]: StatementSync };
  readonly #batch: GroupCommit;
  /** This process's sender id: unsent calls with another one were left by a process that died. */
  readonly #sender = randomUUID();

  constructor(path: string) {
    this.path = path;
    this.#db = openRuntimeDatabase(path);
    try {
      this.#db.exec(DELIVERIES);
      const columns = new Set(
        this.#db
          .prepare("SELECT name FROM pragma_table_info('calls')")
          .all()
          .map((r) => String(r.name)),
      );
      if (!columns.has("sent")) for (const sql of SENT_COLUMNS) this.#db.exec(sql);
      this.#sql = Object.fromEntries(
        Object.entries(SQL).map(([name, sql]) => [name, this.#db.prepare(sql)]),
      ) as { [K in keyof typeof SQL]: StatementSync };
      this.#batch = new GroupCommit(this.#db);
    } catch (error) {
      this.#db.close();
      throw new RuntimeStoreError(
        "rap_store_io",
        `The file at ${path} is not an agentauth RAP runtime database (${(error as Error).message}). Move it ` +
          "aside to start an empty one.",
        { cause: error },
      );
    }
  }

  async createCall(call: NewCall): Promise<CallRecord> {
    const row = await this.#write(() =>
      this.#sql.create.get({
        group_id: call.groupId,
        id: call.id,
        call_id: call.callId,
        operation: call.operation,
        arguments: JSON.stringify(call.arguments),
        user_id: call.userId,
        toolset: call.toolset,
        base_url: call.baseUrl,
        requires_auth: call.requiresAuth,
        created_at: call.createdAt,
        deadline: call.deadline,
        sender: this.#sender,
      }),
    );
    if (!row) throw callExists(call.groupId, call.id);
    return this.#record(row);
  }

  async markSent(groupId: string, id: string): Promise<void> {
    await this.#write(() => this.#sql.markSent.run({ group_id: groupId, id }));
  }

  async claimUnsent(limit: number): Promise<CallRecord[]> {
    return (await this.#write(() => this.#sql.claimUnsent.all({ sender: this.#sender, limit })))
      .map((r) => this.#record(r))
      .sort((a, b) => a.createdAt - b.createdAt);
  }

  async getCall(groupId: string, id: string): Promise<CallRecord | undefined> {
    const row = this.#io(() => this.#sql.get.get({ group_id: groupId, id }));
    return row ? this.#record(row) : undefined;
  }

  async transition(groupId: string, id: string, change: Transition) {
    const apply = () =>
      this.#sql.transition.get({
        group_id: groupId,
        id,
        from: JSON.stringify(change.from),
        to: change.to,
        result: change.result ? JSON.stringify(change.result) : null,
        subscription: change.subscription ?? null,
        at: change.at,
      });
    const { deliveryKey } = change;
    // One write (one savepoint): the change and its delivery key are committed together or not at all.
    const row = await this.#write(() => {
      const changed = apply();
      if (changed && deliveryKey !== undefined) {
        this.#sql.recordDelivery.run({ group_id: groupId, key: deliveryKey, at: change.at });
      }
      return changed;
    });
    return row ? this.#record(row) : undefined;
  }

  async setSubscription(
    groupId: string,
    id: string,
    from: SubscriptionState,
    to: SubscriptionState,
    at: number,
  ): Promise<boolean> {
    const info = await this.#write(() =>
      this.#sql.setSubscription.run({ group_id: groupId, id, from, to, at }),
    );
    return Number(info.changes) === 1;
  }

  async listCalls(groupId: string): Promise<CallRecord[]> {
    return this.#io(() => this.#sql.list.all({ group_id: groupId })).map((r) => this.#record(r));
  }

  async overdueCalls(now: number, limit = 100): Promise<CallRecord[]> {
    return this.#io(() => this.#sql.overdue.all({ now, limit })).map((r) => this.#record(r));
  }

  async nextDeadline(): Promise<number | undefined> {
    const value = this.#io(() => this.#sql.nextDeadline.get())?.deadline;
    return typeof value === "number" ? value : undefined;
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
    // One write (one savepoint): the key and the entry are committed together or not at all.
    const row = await this.#write(() => {
      if (deliveryKey === undefined) return this.#insertEntry(groupId, entry);
      const fresh = this.#sql.recordDelivery.run({
        group_id: groupId,
        key: deliveryKey,
        at: entry.at,
      });
      return Number(fresh.changes) === 1 ? this.#insertEntry(groupId, entry) : undefined;
    });
    return row ? ({ ...entry, seq: Number(row.seq) } as ThreadEntry) : undefined;
  }

  async hasDelivery(groupId: string, deliveryKey: string): Promise<boolean> {
    return !!this.#io(() => this.#sql.hasDelivery.get({ group_id: groupId, key: deliveryKey }));
  }

  async recordDelivery(groupId: string, deliveryKey: string, at: number): Promise<boolean> {
    const info = await this.#write(() =>
      this.#sql.recordDelivery.run({ group_id: groupId, key: deliveryKey, at }),
    );
    return Number(info.changes) === 1;
  }

  #insertEntry(groupId: string, entry: NewThreadEntry): Row | undefined {
    return this.#sql.appendEntry.get({
      group_id: groupId,
      at: entry.at,
      body: JSON.stringify(entry),
    });
  }

  async listEntries(groupId: string): Promise<ThreadEntry[]> {
    return this.#io(() => this.#sql.listEntries.all({ group_id: groupId })).map(
      (row) =>
        ({ ...(this.#json(row.body, "entry") as object), seq: Number(row.seq) }) as ThreadEntry,
    );
  }

  async putView(groupId: string, viewType: string, content: unknown, at: number): Promise<void> {
    await this.#write(() =>
      this.#sql.putView.run({
        group_id: groupId,
        view_type: viewType,
        content: JSON.stringify(content ?? null),
        at,
      }),
    );
  }

  async listViews(groupId: string): Promise<Record<string, unknown>> {
    const rows = this.#io(() => this.#sql.listViews.all({ group_id: groupId }));
    return Object.fromEntries(
      rows.map((r) => [String(r.view_type), this.#json(r.content, "view")]),
    );
  }

  async close(): Promise<void> {
    if (!this.#db.isOpen) return;
    this.#batch.flush(); // what is queued is committed (and answered) before the file closes
    this.#db.close();
  }

  #record(row: Row): CallRecord {
    return callFromRow(row, {
      num: (v) => {
        if (typeof v !== "number") throw this.#corrupt("a numeric column is not a number");
        return v;
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
      `The RAP runtime database at ${this.path} has a bad row (${why}). Restore it from a backup or move it aside.`,
      { cause },
    );
  }

  /** A read: runs at once and sees committed state only. */
  #io<T>(run: () => T): T {
    try {
      return run();
    } catch (error) {
      throw this.#ioError(error);
    }
  }

  /** A write: joins the next group commit and resolves once it is on disk. */
  async #write<T>(run: () => T): Promise<T> {
    try {
      return await this.#batch.write(run);
    } catch (error) {
      throw this.#ioError(error);
    }
  }

  #ioError(error: unknown): Error {
    if (error instanceof AgentAuthError) return error;
    return new RuntimeStoreError(
      "rap_store_io",
      `The RAP runtime database at ${this.path} failed (${(error as Error).message}). Check the disk and ` +
        "that no other program holds the file.",
      { cause: error },
    );
  }
}

/** Opens (creating owner-only if needed) a runtime database with the same pragmas as the vault. */
function openRuntimeDatabase(path: string): DatabaseSync {
  // FULL sync (in openSqliteDatabase): a result acknowledged with 200 is never sent again by the tool; losing it
  // to a power cut would lose the call's outcome for good.
  return openSqliteDatabase(
    path,
    { version: SCHEMA_VERSION, sql: SCHEMA },
    {
      io: (file, reason, cause) =>
        new RuntimeStoreError(
          "rap_store_io",
          `Cannot open the RAP runtime database at ${file} (${reason}). Check that the path is a writable file ` +
            "and not another program's database.",
          { cause },
        ),
      newerSchema: (file, version, supported) =>
        new RuntimeStoreError(
          "rap_store_schema_unsupported",
          `The RAP runtime database at ${file} has schema version ${version}, newer than this agentauth understands ` +
            `(${supported}). Upgrade agentauth.`,
        ),
    },
  );
}
