/**
 * The call ledger on PostgreSQL (`rap_tool_calls`): one row per accepted call, so that each runs at most once and
 * ends with one final message, whichever instance receives its invocation (again), its sign-in links or its
 * instance's death (issue 22 §1, §6). Every change is a compare-and-set on the row:
 *
 * - `begin`: INSERT … ON CONFLICT DO NOTHING; a redelivered invocation finds the row and does not run.
 * - `authorizing`: running here → waiting for a sign-in of this attempt, with a deadline by the database's clock.
 * - `resume`: waiting for this attempt → running at the instance that received the sign-in. A link whose call was
 *   resumed by another sign-in, ended or timed out finds nothing to resume: it is stale, refused, and nothing runs.
 * - `finish`: held here → done, and the final message written to the outbox in the same transaction (under the
 *   thread's outbox lock, so a thread's results are queued in the order they were finished).
 * - `takeOver`: a call whose owner the database says is gone (src/db/presence.ts) is ended by whichever instance
 *   sees it first, with an error result; a sign-in wait past its deadline, with its timeout text.
 *
 * The callback URL (a capability), `call_id` and the texts are sealed under the vault keyring; in clear are the ids,
 * the SHA-256 of the callback URL (`target`, so that two runtimes using the same thread and call ids never collide),
 * the state, the owner's presence key and times. Ended rows are kept a day (a late redelivery, a stale link), then
 * swept by the database's clock.
 */

import { createHash } from "node:crypto";
import { type Database, gone } from "../../../db/index.ts";
import { type Keyring, openJson, type Sealed, sealJson } from "../../../vault/index.ts";
import type { CallLedger, LedgerCall } from "../state.ts";
import { lockGroup, type PostgresOutbox } from "./outbox.ts";

/** How long an ended call is remembered: longer than any redelivery or sign-in link can come back. */
export const DONE_RETENTION_MS = 24 * 3_600_000;
/** Calls taken over per sweep. */
const TAKEOVER_BATCH = 32;

interface SealedCall {
  callbackUrl: string;
  callId: string | null;
  operation: string;
  /** The result if the sign-in wait times out after its owner is gone. */
  timeoutText?: string;
}

export class PostgresCallLedger implements CallLedger {
  readonly owner: string;
  readonly #db: Database;
  readonly #keyring: Keyring;
  readonly #outbox: PostgresOutbox;

  constructor(db: Database, keyring: Keyring, outbox: PostgresOutbox, owner: string) {
    this.#db = db;
    this.#keyring = keyring;
    this.#outbox = outbox;
    this.owner = owner;
  }

  async begin(call: LedgerCall): Promise<boolean> {
    // The same attempt finding its own row is this instance's earlier insert whose answer was lost: still fresh.
    const rows = await this.#db.query(
      `INSERT INTO rap_tool_calls (group_id, call_id, target, attempt, status, owner, sealed, expires_at)
       VALUES ($1, $2, $3, $4, 'running', $5, $6, now() + $7 * interval '1 millisecond')
       ON CONFLICT (group_id, call_id, target) DO UPDATE SET owner = rap_tool_calls.owner
        WHERE rap_tool_calls.attempt = EXCLUDED.attempt
       RETURNING 1`,
      [
        call.groupId,
        call.id,
        target(call),
        call.attempt,
        this.owner,
        this.#seal(call, {}),
        DONE_RETENTION_MS,
      ],
    );
    return rows.length > 0;
  }

  async authorizing(call: LedgerCall, timeoutMs: number, timeoutText: string): Promise<boolean> {
    const rows = await this.#db.query(
      `UPDATE rap_tool_calls
          SET status = 'authorizing', deadline = now() + $5 * interval '1 millisecond', sealed = $6
        WHERE group_id = $1 AND call_id = $2 AND target = $3 AND owner = $4 AND status = 'running'
       RETURNING 1`,
      [
        call.groupId,
        call.id,
        target(call),
        this.owner,
        Math.max(1, Math.round(timeoutMs)),
        this.#seal(call, { timeoutText }),
      ],
    );
    return rows.length > 0;
  }

  async resume(call: LedgerCall): Promise<"resumed" | "stale"> {
    const resumed = await this.#db.query(
      `UPDATE rap_tool_calls SET status = 'running', owner = $4, deadline = NULL
        WHERE group_id = $1 AND call_id = $2 AND target = $3 AND attempt = $5 AND status = 'authorizing'
       RETURNING 1`,
      [call.groupId, call.id, target(call), this.owner, call.attempt],
    );
    if (resumed.length > 0) return "resumed";
    // No row at all: a sign-in started by an instance from before the ledger (an upgrade under way). It runs here,
    // once: the row written now refuses every other instance and every other link.
    const adopted = await this.#db.query(
      `INSERT INTO rap_tool_calls (group_id, call_id, target, attempt, status, owner, sealed, expires_at)
       VALUES ($1, $2, $3, $4, 'running', $5, $6, now() + $7 * interval '1 millisecond')
       ON CONFLICT DO NOTHING RETURNING 1`,
      [
        call.groupId,
        call.id,
        target(call),
        call.attempt,
        this.owner,
        this.#seal(call, {}),
        DONE_RETENTION_MS,
      ],
    );
    return adopted.length > 0 ? "resumed" : "stale";
  }

  async isAwaiting(groupId: string, id: string, attempt: string): Promise<boolean> {
    const rows = await this.#db.query(
      `SELECT 1 FROM rap_tool_calls
        WHERE group_id = $1 AND call_id = $2 AND attempt = $3 AND status = 'authorizing' LIMIT 1`,
      [groupId, id, attempt],
    );
    return rows.length > 0;
  }

  async finish(
    call: LedgerCall,
    message: { id: string; body: unknown },
  ): Promise<"queued" | "superseded" | "cancelled"> {
    return this.#db.transaction(async (tx) => {
      await lockGroup(tx, call.groupId);
      const ended = await tx.query(
        `UPDATE rap_tool_calls
            SET status = 'done', deadline = NULL, expires_at = now() + $5 * interval '1 millisecond'
          WHERE group_id = $1 AND call_id = $2 AND target = $3 AND owner = $4 AND status <> 'done'
         RETURNING 1`,
        [call.groupId, call.id, target(call), this.owner, DONE_RETENTION_MS],
      );
      if (ended.length === 0) return "superseded";
      const id = await this.#outbox.insert(tx, {
        id: message.id,
        groupId: call.groupId,
        callId: call.id,
        callbackUrl: call.callbackUrl,
        body: message.body,
      });
      return id === undefined ? "cancelled" : "queued";
    });
  }

  async takeOver(
    graceMs: number,
    result: (call: LedgerCall, timeoutText?: string) => unknown,
  ): Promise<number> {
    const grace = Math.max(0, Math.round(graceMs));
    await this.#db.query("DELETE FROM rap_tool_calls WHERE status = 'done' AND expires_at < now()");
    // Candidates first, without locks; each is then ended in a transaction of its own that checks again.
    const candidates = await this.#db.query<{
      group_id: string;
      call_id: string;
      target: Buffer;
      owner: string;
      status: string;
    }>(
      `SELECT group_id, call_id, target, owner::text AS owner, status FROM rap_tool_calls
        WHERE status <> 'done' AND owner <> $1
          AND (status = 'running' OR deadline < now())
          AND ${gone("owner", "$2")}
        LIMIT ${TAKEOVER_BATCH}`,
      [this.owner, grace],
    );
    let count = 0;
    for (const row of candidates) {
      const ended = await this.#db.transaction(async (tx) => {
        await lockGroup(tx, row.group_id);
        const [taken] = await tx.query<{ sealed: Sealed }>(
          `UPDATE rap_tool_calls SET status = 'done', owner = $4, deadline = NULL,
                  expires_at = now() + $8 * interval '1 millisecond'
            WHERE group_id = $1 AND call_id = $2 AND target = $3 AND owner = $5 AND status = $6
              AND (status = 'running' OR deadline < now()) AND ${gone("owner", "$7")}
           RETURNING sealed`,
          [
            row.group_id,
            row.call_id,
            row.target,
            this.owner,
            row.owner,
            row.status,
            grace,
            DONE_RETENTION_MS,
          ],
        );
        if (!taken) return false;
        const opened = this.#open(row.group_id, row.call_id, row.target, taken.sealed);
        const call: LedgerCall = {
          groupId: row.group_id,
          id: row.call_id,
          attempt: "",
          callbackUrl: opened.callbackUrl,
          callId: opened.callId,
          operation: opened.operation,
        };
        const body = result(call, row.status === "authorizing" ? opened.timeoutText : undefined);
        await this.#outbox.insert(tx, {
          groupId: row.group_id,
          callId: row.call_id,
          callbackUrl: opened.callbackUrl,
          body,
        });
        return true;
      });
      if (ended) count++;
    }
    return count;
  }

  #seal(call: LedgerCall, extra: { timeoutText?: string }): string {
    const value: SealedCall = {
      callbackUrl: call.callbackUrl,
      callId: call.callId,
      operation: call.operation,
      ...extra,
    };
    return JSON.stringify(
      sealJson(this.#keyring, purpose(call.groupId, call.id, target(call)), value),
    );
  }

  #open(groupId: string, id: string, digest: Buffer, sealed: Sealed): SealedCall {
    return openJson(
      this.#keyring,
      purpose(groupId, id, digest),
      sealed,
      "A tool call's record",
    ) as SealedCall;
  }
}

/** The SHA-256 of the callback URL: which runtime's call this is, without keeping the capability in clear. */
function target(call: { callbackUrl: string }): Buffer {
  return createHash("sha256").update(call.callbackUrl).digest();
}

/** The sealing purpose binds the ciphertext to its row: a value copied under another call does not open. */
function purpose(groupId: string, id: string, digest: Buffer): string {
  const row = createHash("sha256")
    .update(JSON.stringify([groupId, id]))
    .digest("hex");
  return `rap_tool_call:${row}:${digest.toString("hex")}`;
}
