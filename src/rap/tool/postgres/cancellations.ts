/**
 * Cancellations on PostgreSQL, so every instance acts on them: a call cancelled by the runtime (or a thread closed)
 * at any instance is not resumed by a sign-in redirect wherever it lands, and its undelivered messages are dropped.
 * Remembered for as long as a pending sign-in of the call could still come back (`keepMs`). (Which instance runs a
 * call is the call ledger's business: calls.ts.)
 */

import { advisoryKey, type Database, type Queryable } from "../../../db/index.ts";
import type { CallCancellations } from "../state.ts";

export class PostgresCancellations implements CallCancellations {
  readonly #db: Database;

  constructor(db: Database) {
    this.#db = db;
  }

  async cancel(groupId: string, callId: string | undefined, keepMs: number): Promise<void> {
    const id = callId ?? "";
    await this.#sweep();
    // Under the thread's outbox lock (the one `add` takes), in one transaction: a write either commits before the
    // mark (and this DELETE, a later statement, sees and removes it) or starts after it (and sees the mark). Without
    // the lock a write whose snapshot predates the mark could commit after the DELETE and be sent anyway.
    await this.#db.transaction(async (tx) => {
      await tx.query("SELECT pg_advisory_xact_lock($1)", [advisoryKey("rap_tool_outbox", groupId)]);
      await this.#mark(tx, groupId, id, "cancelled", keepMs);
      await tx.query(
        "DELETE FROM rap_tool_outbox WHERE group_id = $1 AND ($2 = '' OR call_id = $2)",
        [groupId, id],
      );
    });
  }

  async isCancelled(groupId: string, callId: string): Promise<boolean> {
    return this.#has(groupId, callId, "cancelled", true);
  }

  /** Outside any transaction: expired rows are shared by every thread, and locking them under a lock could deadlock. */
  async #sweep(): Promise<void> {
    await this.#db.query("DELETE FROM rap_tool_call_marks WHERE expires_at < now()");
  }

  async #mark(
    db: Queryable,
    groupId: string,
    callId: string,
    kind: string,
    keepMs: number,
  ): Promise<void> {
    await db.query(
      `INSERT INTO rap_tool_call_marks (group_id, call_id, kind, expires_at)
       VALUES ($1, $2, $3, now() + $4 * interval '1 millisecond')
       ON CONFLICT (group_id, call_id, kind) DO UPDATE SET expires_at = EXCLUDED.expires_at`,
      [groupId, callId, kind, Math.max(1, Math.round(keepMs))],
    );
  }

  async #has(groupId: string, callId: string, kind: string, thread: boolean): Promise<boolean> {
    const rows = await this.#db.query(
      `SELECT 1 FROM rap_tool_call_marks
        WHERE group_id = $1 AND (call_id = $2 OR ($4 AND call_id = '')) AND kind = $3
          AND expires_at > now() LIMIT 1`,
      [groupId, callId, kind, thread],
    );
    return rows.length > 0;
  }
}
