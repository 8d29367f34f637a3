/**
 * The outbox of undelivered callbacks on PostgreSQL, shared by every instance of a tool. A message is written before
 * its first delivery attempt and deleted once delivered (or refused for good), so a result survives the process that
 * produced it. Instances claim due rows with `FOR UPDATE SKIP LOCKED`: one instance at a time delivers a message. A
 * claim names the instance's presence key (src/db/presence.ts) and is released as soon as the database says that
 * instance is gone (`releaseGone`), or by the instance itself when it lost track of it (`releaseOwn`, after the
 * database failed under it); its expiry (`claimMs`) remains only as the backstop for an instance that hangs without
 * dying. Only the oldest undelivered message of a group is ever due, so a thread's messages reach the runtime in the
 * order they were written.
 *
 * A row this instance cannot open (sealed under a key it lacks, or damaged) is handled alone: released for
 * `claimMs` so that an instance with the key can take it, counted in `unreadable` (not in `attempts`, which is the
 * delivery budget), and deleted once UNREADABLE_CLAIMS claims found it unreadable, so it cannot block its thread for
 * ever. Deleted rather than moved to a dead-letter table: nothing could ever read it there either, and the log line
 * (by id) is what an operator needs to find the instance with the wrong key.
 */

import { randomUUID } from "node:crypto";
import { advisoryKey, type Database, gone, type Queryable } from "../../../db/index.ts";
import { type Keyring, openJson, type Sealed, sealJson } from "../../../vault/index.ts";
import type { CallbackOutbox, OutboxMessage, UnreadableOutboxRow } from "../state.ts";

/** Claims that found a row unreadable before it is deleted. */
export const UNREADABLE_CLAIMS = 5;

type ClaimedRow = {
  id: string;
  group_id: string;
  sealed: Sealed;
  attempts: number;
  created_ms: string;
};

export class PostgresOutbox implements CallbackOutbox {
  readonly #db: Database;
  readonly #keyring: Keyring;
  /** This instance's presence key: its claims name it, so they are released when the database says it is gone. */
  readonly #owner: string;

  constructor(db: Database, keyring: Keyring, owner: string) {
    this.#db = db;
    this.#keyring = keyring;
    this.#owner = owner;
  }

  async add(message: {
    id?: string;
    groupId: string;
    callId: string;
    callbackUrl: string;
    body: unknown;
  }): Promise<string | undefined> {
    // Writes to one group are serialised until commit: otherwise a row could take a lower `seq` yet commit after a
    // higher one, and a claim in between would hand out the later message first (sequence order is not commit
    // order). Other groups do not wait. A call cancelled at any instance gets nothing more written.
    return this.#db.transaction(async (tx) => {
      await lockGroup(tx, message.groupId);
      return this.insert(tx, message);
    });
  }

  /**
   * The outbox row for `message`, written with `tx` (whose transaction holds the group's lock, `lockGroup`): its id,
   * or undefined when the call or its thread was cancelled. For writers that change more in the same transaction.
   */
  async insert(
    tx: Queryable,
    message: { id?: string; groupId: string; callId: string; callbackUrl: string; body: unknown },
  ): Promise<string | undefined> {
    const id = message.id ?? randomUUID();
    // The callback URL is a capability, so it is sealed with the body, never stored in clear.
    const sealed = sealJson(this.#keyring, purpose(id), {
      callbackUrl: message.callbackUrl,
      body: message.body,
    });
    const written = await tx.query(
      `INSERT INTO rap_tool_outbox (id, group_id, call_id, sealed)
       SELECT $1, $2, $3, $4
        WHERE NOT EXISTS (
          SELECT 1 FROM rap_tool_call_marks
           WHERE group_id = $2 AND call_id IN ($3, '') AND kind = 'cancelled' AND expires_at > now())
       RETURNING id`,
      [id, message.groupId, message.callId, JSON.stringify(sealed)],
    );
    return written.length > 0 ? id : undefined;
  }

  async claim(
    limit: number,
    claimMs: number,
    onUnreadable?: (row: UnreadableOutboxRow) => void,
  ): Promise<OutboxMessage[]> {
    const rows = await this.#db.query<ClaimedRow>(
      `WITH due AS (
         SELECT o.seq FROM rap_tool_outbox o
          WHERE o.next_at <= now()
            AND (o.claimed_until IS NULL OR o.claimed_until < now())
            AND NOT EXISTS (
              SELECT 1 FROM rap_tool_outbox older WHERE older.group_id = o.group_id AND older.seq < o.seq)
          ORDER BY o.seq
          LIMIT $1
          FOR UPDATE OF o SKIP LOCKED)
       UPDATE rap_tool_outbox t
          SET claimed_until = now() + $2 * interval '1 millisecond', claimed_by = $3,
              attempts = t.attempts + 1
         FROM due WHERE t.seq = due.seq
       RETURNING t.id, t.group_id, t.sealed, t.attempts,
                 (extract(epoch FROM t.created_at) * 1000)::bigint::text AS created_ms`,
      [Math.max(1, limit), Math.max(1, Math.round(claimMs)), this.#owner],
    );
    const claimed: OutboxMessage[] = [];
    for (const row of rows) {
      let opened: { callbackUrl?: unknown; body?: unknown };
      try {
        opened = openJson(
          this.#keyring,
          purpose(row.id),
          row.sealed,
          "An undelivered callback",
        ) as {
          callbackUrl?: unknown;
          body?: unknown;
        };
      } catch (error) {
        // One unreadable row must not cost the others their pass: set it aside and go on.
        onUnreadable?.(await this.#setAside(row, claimMs, error));
        continue;
      }
      if (typeof opened?.callbackUrl !== "string") {
        await this.remove(row.id);
        continue;
      }
      claimed.push({
        id: row.id,
        groupId: row.group_id,
        callbackUrl: opened.callbackUrl,
        body: opened.body,
        attempts: Number(row.attempts),
        createdAt: Number(row.created_ms),
      });
    }
    return claimed;
  }

  /** Releases an unreadable row for `claimMs` (an instance with the key may take it), or deletes it at the bound. */
  async #setAside(row: ClaimedRow, claimMs: number, error: unknown): Promise<UnreadableOutboxRow> {
    const code = String((error as { code?: unknown })?.code ?? "unreadable");
    // This claim was no delivery attempt: give it back to the delivery budget.
    const [counted] = await this.#db.query<{ unreadable: number }>(
      `UPDATE rap_tool_outbox
          SET unreadable = unreadable + 1, attempts = greatest(attempts - 1, 0), claimed_until = NULL,
              claimed_by = NULL,
              next_at = now() + $2 * interval '1 millisecond'
        WHERE id = $1
       RETURNING unreadable`,
      [row.id, Math.max(1, Math.round(claimMs))],
    );
    const unreadable = Number(counted?.unreadable ?? UNREADABLE_CLAIMS);
    const dropped = unreadable >= UNREADABLE_CLAIMS;
    if (dropped) await this.remove(row.id);
    return { id: row.id, groupId: row.group_id, unreadable, dropped, code };
  }

  async remove(id: string): Promise<void> {
    await this.#db.query("DELETE FROM rap_tool_outbox WHERE id = $1", [id]);
  }

  async retryLater(id: string, delayMs: number): Promise<void> {
    await this.#db.query(
      `UPDATE rap_tool_outbox
          SET claimed_until = NULL, claimed_by = NULL, next_at = now() + $2 * interval '1 millisecond'
        WHERE id = $1`,
      [id, Math.max(0, Math.round(delayMs))],
    );
  }

  async releaseGone(graceMs: number): Promise<number> {
    const rows = await this.#db.query(
      `UPDATE rap_tool_outbox SET claimed_until = NULL, claimed_by = NULL
        WHERE claimed_by IS NOT NULL AND ${gone("claimed_by", "$1")}
       RETURNING 1`,
      [Math.max(0, Math.round(graceMs))],
    );
    return rows.length;
  }

  async releaseOwn(keep: readonly string[]): Promise<number> {
    const rows = await this.#db.query(
      `UPDATE rap_tool_outbox SET claimed_until = NULL, claimed_by = NULL
        WHERE claimed_by = $1 AND NOT (id = ANY($2::uuid[]))
       RETURNING 1`,
      [this.#owner, [...keep]],
    );
    return rows.length;
  }
}

/** The lock every write to a group's outbox takes, in its transaction, so a group's rows commit in `seq` order. */
export async function lockGroup(tx: Queryable, groupId: string): Promise<void> {
  await tx.query("SELECT pg_advisory_xact_lock($1)", [advisoryKey("rap_tool_outbox", groupId)]);
}

function purpose(id: string): string {
  return `rap_tool_outbox:${id}`;
}
