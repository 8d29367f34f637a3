/**
 * A writer's half of the record caches (the other half is cache-listener.ts): after a change to a credential returned
 * from the database, and before the store's call returns, make sure no other instance can still serve what it
 * replaced.
 *
 * When any other instance has a live registration, the writer takes a barrier number from a sequence (so after its
 * change committed), notifies it on the channel, and waits until every registration live in the database has
 * acknowledged that number or a later one, or has expired. The channel delivers in commit order, so an instance that
 * acknowledges the barrier has handled the change's notification first. An instance that hangs or died costs the
 * writer at most its registration's lifetime (CACHE_LEASE_MS); one that lost its connection deletes its registration
 * as soon as it can, which ends the wait sooner.
 *
 * With nobody else caching this is one read-only statement. A database that stops answering meanwhile is retried
 * with a fresh barrier until `timeoutMs`; past it the call fails with `database_unavailable` saying the change itself
 * was committed.
 */

import { setTimeout as sleep } from "node:timers/promises";
import { type Database, DatabaseError } from "../../db/index.ts";
import { CACHE_SQL } from "./sql.ts";

/** How long a writer keeps trying to confirm, database failures included, before it reports them. */
export const BARRIER_TIMEOUT_MS = 30_000;
const POLL_FIRST_MS = 1;
const POLL_MAX_MS = 20;

export interface BarrierOptions {
  /** This instance's own registration, which its writes do not wait for (the store dropped its entry itself). */
  self: string | undefined;
  timeoutMs?: number;
}

export async function waitForCaches(db: Database, options: BarrierOptions): Promise<void> {
  const self = options.self ?? "";
  const deadline = Date.now() + (options.timeoutMs ?? BARRIER_TIMEOUT_MS);
  let barrier: string | undefined;
  let pause = POLL_FIRST_MS;
  for (;;) {
    try {
      let waiting: number;
      if (barrier === undefined) {
        const row = (await db.query(CACHE_SQL.barrier, [self]))[0];
        if (!row) return; // nobody else caches
        barrier = String(row.s);
        waiting = Number(row.waiting);
      } else {
        waiting = Number((await db.query(CACHE_SQL.waiting, [self, barrier]))[0]?.waiting);
      }
      if (waiting === 0) return;
    } catch (error) {
      if (!(error instanceof DatabaseError && error.code === "database_unavailable")) throw error;
      if (Date.now() > deadline) throw unconfirmed(db, error);
      // After a crash the notification may be lost: a new barrier, notified after the database came back.
      barrier = undefined;
      pause = POLL_MAX_MS * 5;
    }
    if (Date.now() > deadline) throw unconfirmed(db);
    await sleep(pause);
    pause = Math.min(pause * 2, POLL_MAX_MS);
  }
}

function unconfirmed(db: Database, cause?: DatabaseError): DatabaseError {
  return new DatabaseError(
    "database_unavailable",
    `The change to the vault on ${db.label} was committed, but this process could not confirm that the other ` +
      "instances' caches dropped the previous version" +
      (cause
        ? ` (${cause.message})`
        : ": an instance neither acknowledged it nor let its registration expire") +
      ". Their registrations expire within seconds once they cannot renew them; retry the read then.",
    { cause },
  );
}
