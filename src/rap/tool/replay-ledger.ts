/**
 * Where a tool remembers the HMAC-signed invocations it accepted, so that the same signed request is refused as
 * `replayed` for as long as its timestamp is inside the window (issue 20 §1.3). In memory that holds only for one
 * process: a request captured before a restart, or sent to another instance, ran again. The durable ledgers keep it
 * where the tool's other state is: a SQLite file on one machine (`openSqliteReplayLedger`, what `rap tool serve`
 * and the demo use), PostgreSQL when several instances share state (`openPostgresToolState(...).replay`).
 */

import { type AcceptedSignature, createReplayCache } from "../invocation-auth.ts";

export type { AcceptedSignature };

export interface ReplayLedger {
  /**
   * Records an accepted signature until its window has passed. `replayed` when it was already recorded; `stale` when
   * a bounded ledger can no longer tell (the memory one, past its capacity). Throws when the storage does not answer:
   * the tool then refuses the request with a 503, and the runtime retries it.
   */
  remember(accepted: AcceptedSignature): Promise<"ok" | "replayed" | "stale">;
  /** True when what it records outlives this process (a file or a database). */
  readonly durable: boolean;
  /** Where it lives, without secrets (for logs). */
  readonly label: string;
  close(): Promise<void>;
}

/** The in-memory ledger: one process only, lost on restart (the bounded cache of invocation-auth.ts). */
export function memoryReplayLedger(maxEntries?: number): ReplayLedger {
  const cache = createReplayCache(maxEntries === undefined ? {} : { maxEntries });
  return {
    remember: async (a) => cache.remember(a.signature, a.timestamp, a.nowSeconds, a.windowSeconds),
    durable: false,
    label: "memory",
    close: async () => {},
  };
}

/**
 * How long past its window a record is kept before it is swept: a margin for instances (or the database) whose
 * clocks differ a little; a request is refused as stale by the window check long before its record goes.
 */
export const REPLAY_SWEEP_MARGIN_SECONDS = 300;
