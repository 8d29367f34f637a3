/**
 * An instance's presence in the database: a session-level advisory lock on a random key of its own, held on a
 * connection of its own for the life of the process. Rows an instance owns (a call it runs, a message it is
 * delivering) name its key; another instance learns that the owner is gone from the database alone: the server drops
 * the lock when the owner's session ends (kill -9, a crash, a machine lost and noticed by TCP keepalive), and
 * `pg_locks` no longer lists it. No instance's clock is consulted (issue 22 §6, §8).
 *
 * A database restart ends every session, the live instances' too: each takes its lock again on a new session as soon
 * as the server answers (it checks its session every `checkMs`). Until they have, every key looks gone, so a judgement
 * that would end a live owner's work (`gone` below) also waits until the server has been up for `graceMs`, measured by
 * the server's clock (`pg_postmaster_start_time()`).
 *
 * @example
 * const presence = await startPresence(db, { logger });
 * await db.query(`UPDATE t SET owner = NULL WHERE ${gone("owner", "$1")}`, [DEFAULT_GRACE_MS]);
 */

import { randomBytes } from "node:crypto";
import { type Logger, silentLogger } from "../core/log.ts";
import type { Database, Session } from "./database.ts";

/** How long after the server (re)started an absent lock still does not mean "gone": time for owners to reconnect. */
export const DEFAULT_GRACE_MS = 10_000;
const DEFAULT_CHECK_MS = 1_000;

/**
 * The keys of every instance present in this database: bigint advisory locks held right now (pg_locks splits a
 * bigint key into classid, the high 32 bits, and objid, the low 32 bits, with objsubid = 1).
 */
export const PRESENT_KEYS_SQL = `SELECT (l.classid::bigint << 32) | l.objid::bigint AS key
  FROM pg_locks l
 WHERE l.locktype = 'advisory' AND l.objsubid = 1 AND l.granted
   AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database())`;

/**
 * SQL that is true when the owner named by `column` (a bigint presence key) is gone: its lock is held by no session,
 * and the server has been up longer than the grace period (`graceParam`, milliseconds) so that a live owner had time
 * to take its lock again after a restart.
 */
export function gone(column: string, graceParam: string): string {
  return `(${column} NOT IN (${PRESENT_KEYS_SQL})
    AND now() - pg_postmaster_start_time() > ${graceParam} * interval '1 millisecond')`;
}

/** SQL true when the owner in `column` holds no lock right now (no grace: for work that may safely be redone). */
export function absent(column: string): string {
  return `${column} NOT IN (${PRESENT_KEYS_SQL})`;
}

export interface Presence {
  /** This instance's key (a signed 64-bit integer, as a decimal string, the way pg binds a bigint). */
  readonly key: string;
  /** Called each time the lock is held again after its session was lost (the database restarted, say). */
  onRegained(listener: () => void): void;
  /** Lets the lock go (the others may then take over this instance's work at once) and closes the session. */
  stop(): Promise<void>;
}

export interface PresenceOptions {
  logger?: Logger;
  /** How often the session is checked, and a lost one replaced. Default 1 s. */
  checkMs?: number;
}

/** Takes a fresh key's lock on a session of its own; throws a DatabaseError when the database cannot be reached. */
export async function startPresence(
  db: Database,
  options: PresenceOptions = {},
): Promise<Presence> {
  const logger = options.logger ?? silentLogger;
  const checkMs = options.checkMs ?? DEFAULT_CHECK_MS;
  // 63 random bits, sign included: collisions with another instance's key or another lock are negligible.
  const key = randomBytes(8).readBigInt64BE(0).toString();
  const listeners: (() => void)[] = [];
  let session: Session | undefined = await hold(db, key);
  if (!session) throw new Error("a fresh presence key was already locked");
  let stopped = false;
  let checking = false;

  const check = async () => {
    if (checking || stopped) return;
    checking = true;
    try {
      if (session) {
        try {
          await withTimeout(session.query("SELECT 1"), checkMs * 5);
          return;
        } catch {
          session.release(true);
          session = undefined;
          logger.warn("db.presence.lost", { why: "its session ended; taking the lock again" });
        }
      }
      // A new session; the lock stays with the old one until the server notices it is gone (half-open connection).
      session = await hold(db, key).catch(() => undefined);
      if (session && !stopped) {
        logger.info("db.presence.regained", {});
        for (const listener of listeners) listener();
      }
    } finally {
      checking = false;
    }
  };
  const timer = setInterval(() => void check(), checkMs);
  timer.unref();

  return {
    key,
    onRegained: (listener) => void listeners.push(listener),
    async stop() {
      if (stopped) return;
      stopped = true;
      clearInterval(timer);
      const held = session;
      session = undefined;
      if (!held) return;
      // Closing the connection drops the lock too; the explicit unlock just says it sooner.
      await held.query("SELECT pg_advisory_unlock($1)", [key]).catch(() => {});
      held.release(true);
    },
  };
}

/** A session holding `key`'s lock, or undefined when another session still holds it. */
async function hold(db: Database, key: string): Promise<Session | undefined> {
  const session = await db.session();
  try {
    const [row] = await session.query<{ held: boolean }>(
      "SELECT pg_try_advisory_lock($1) AS held",
      [key],
    );
    if (row?.held === true) return session;
  } catch (error) {
    session.release(true);
    throw error;
  }
  session.release(true);
  return undefined;
}

function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error("no answer")), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}
