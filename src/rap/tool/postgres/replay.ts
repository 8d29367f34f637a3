/**
 * The replay ledger on PostgreSQL (replay-ledger.ts), shared by every instance of a tool: a signed invocation
 * accepted at one instance is refused as `replayed` at every other, and after any restart, while its window lasts.
 * Recording is one `INSERT … ON CONFLICT DO NOTHING RETURNING`: of two instances accepting the same request at once,
 * exactly one inserts it. Only the signature (an HMAC of the request, no secret) and its expiry are stored. Rows are
 * swept by the database's clock, a margin past their window, so instances with slightly skewed clocks agree.
 */

import type { Queryable } from "../../../db/index.ts";
import { REPLAY_SWEEP_MARGIN_SECONDS, type ReplayLedger } from "../replay-ledger.ts";

/** Sweep after this many records (and on the first one). */
const SWEEP_EVERY = 500;

export class PostgresReplayLedger implements ReplayLedger {
  readonly durable = true;
  readonly label: string;
  readonly #db: Queryable;
  #sinceSweep = SWEEP_EVERY;

  constructor(db: Queryable, label: string) {
    this.#db = db;
    this.label = label;
  }

  async remember(accepted: {
    signature: string;
    timestamp: number;
    windowSeconds: number;
  }): Promise<"ok" | "replayed"> {
    if (++this.#sinceSweep >= SWEEP_EVERY) {
      this.#sinceSweep = 0;
      await this.#db.query(
        "DELETE FROM rap_tool_replay WHERE expires_at < now() - $1 * interval '1 second'",
        [REPLAY_SWEEP_MARGIN_SECONDS],
      );
    }
    const rows = await this.#db.query(
      `INSERT INTO rap_tool_replay (signature, expires_at) VALUES (decode($1, 'hex'), to_timestamp($2))
       ON CONFLICT DO NOTHING RETURNING 1`,
      [accepted.signature, accepted.timestamp + accepted.windowSeconds],
    );
    return rows.length === 1 ? "ok" : "replayed";
  }

  /** The database is the state's: closed with it. */
  async close(): Promise<void> {}
}
