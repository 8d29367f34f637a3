/**
 * Cancelled calls and closed threads on PostgreSQL, so that every instance honours a cancellation one of them
 * received: a sign-in redirect for a cancelled call is refused wherever it lands, and its undelivered messages are
 * dropped. Remembered for as long as a pending sign-in of the call could still come back (the caller's `keepMs`).
 */

import type { Queryable } from "../../db/index.ts";
import type { CallCancellations } from "./state.ts";

export class PostgresCancellations implements CallCancellations {
  readonly #db: Queryable;

  constructor(db: Queryable) {
    this.#db = db;
  }

  async cancel(groupId: string, callId: string | undefined, keepMs: number): Promise<void> {
    const id = callId ?? "";
    await this.#db.query("DELETE FROM rap_tool_cancelled WHERE expires_at < now()");
    await this.#db.query(
      `INSERT INTO rap_tool_cancelled (group_id, call_id, expires_at)
       VALUES ($1, $2, now() + $3 * interval '1 millisecond')
       ON CONFLICT (group_id, call_id) DO UPDATE SET expires_at = EXCLUDED.expires_at`,
      [groupId, id, Math.max(1, Math.round(keepMs))],
    );
    await this.#db.query(
      "DELETE FROM rap_tool_outbox WHERE group_id = $1 AND ($2 = '' OR call_id = $2)",
      [groupId, id],
    );
  }

  async isCancelled(groupId: string, callId: string): Promise<boolean> {
    const rows = await this.#db.query(
      `SELECT 1 FROM rap_tool_cancelled
        WHERE group_id = $1 AND call_id IN ($2, '') AND expires_at > now() LIMIT 1`,
      [groupId, callId],
    );
    return rows.length > 0;
  }
}
