/**
 * The replay ledger in a SQLite file (replay-ledger.ts): accepted invocation signatures survive a restart of the tool,
 * and every tool process on the machine that opens the same file shares them. One table of (signature, expiry);
 * recording is one `INSERT … ON CONFLICT DO NOTHING`, so of two processes accepting the same request at once exactly
 * one inserts it and the other sees a replay. Rows past their window are swept now and then.
 *
 * @example
 * const tool = createToolServer({ ...options, invocationAuth, replay: openSqliteReplayLedger(`${home}/rap-tool-replay.db`) });
 */

import type { DatabaseSync, StatementSync } from "node:sqlite";
import { AgentAuthError } from "../../core/errors.ts";
import { openSqliteDatabase } from "../../core/sqlite.ts";
import { REPLAY_SWEEP_MARGIN_SECONDS, type ReplayLedger } from "./replay-ledger.ts";

export const DEFAULT_REPLAY_LEDGER_FILE = "rap-tool-replay.db";

const SCHEMA = {
  version: 1,
  sql: `CREATE TABLE accepted (
  signature  TEXT    PRIMARY KEY,
  expires_at INTEGER NOT NULL
) WITHOUT ROWID;
CREATE INDEX accepted_expires ON accepted (expires_at);`,
};

/** Sweep after this many records (and on the first one): cheap, and the table stays about one window's worth. */
const SWEEP_EVERY = 500;

/** The replay ledger's file could not be opened, or failed. */
export class ReplayLedgerError extends AgentAuthError {}

/** Opens (creating owner-only if needed) the ledger at `path`; throws `ReplayLedgerError` when it cannot. */
export function openSqliteReplayLedger(path: string): ReplayLedger {
  const db = openSqliteDatabase(path, SCHEMA, {
    io: (file, reason, cause) =>
      new ReplayLedgerError(
        "rap_replay_store_io",
        `Cannot open the RAP tool's replay ledger at ${file} (${reason}). Check that the path is a writable file ` +
          "and not another program's database.",
        { cause },
      ),
    newerSchema: (file, version, supported) =>
      new ReplayLedgerError(
        "rap_replay_store_schema_unsupported",
        `The RAP tool's replay ledger at ${file} has schema version ${version}, newer than this agentauth ` +
          `understands (${supported}). Upgrade agentauth, or delete the file (it holds only the last minutes).`,
      ),
  });
  return new SqliteReplayLedger(db, path);
}

class SqliteReplayLedger implements ReplayLedger {
  readonly durable = true;
  readonly label: string;
  readonly #db: DatabaseSync;
  readonly #insert: StatementSync;
  readonly #sweep: StatementSync;
  #sinceSweep = SWEEP_EVERY;
  #closed = false;

  constructor(db: DatabaseSync, path: string) {
    this.#db = db;
    this.label = path;
    this.#insert = db.prepare(
      "INSERT INTO accepted (signature, expires_at) VALUES ($signature, $expires_at) ON CONFLICT DO NOTHING",
    );
    this.#sweep = db.prepare("DELETE FROM accepted WHERE expires_at < $before");
  }

  async remember(accepted: {
    signature: string;
    timestamp: number;
    nowSeconds: number;
    windowSeconds: number;
  }): Promise<"ok" | "replayed"> {
    try {
      if (++this.#sinceSweep >= SWEEP_EVERY) {
        this.#sinceSweep = 0;
        this.#sweep.run({ before: accepted.nowSeconds - REPLAY_SWEEP_MARGIN_SECONDS });
      }
      const inserted = this.#insert.run({
        signature: accepted.signature,
        expires_at: accepted.timestamp + accepted.windowSeconds,
      });
      return Number(inserted.changes) === 1 ? "ok" : "replayed";
    } catch (error) {
      throw new ReplayLedgerError(
        "rap_replay_store_io",
        `The RAP tool's replay ledger at ${this.label} failed (${(error as Error).message}). Check the disk and ` +
          "that no other program holds the file.",
        { cause: error },
      );
    }
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    this.#db.close();
  }
}
