/** The SQL the PostgreSQL credential store runs, in one place. Parameters are positional (see rows.ts). */

import { CACHE_CHANNEL } from "./schema.ts";

const COLUMNS = `subject, issuer, resource, id, client_id, status, expires_at, scopes, account, provider,
  has_access, has_refresh, has_id, kid, nonce, ciphertext`;
const WRITE_COLUMNS = `client_id = $5, status = $6, expires_at = $7, scopes = $8, account = $9, provider = $10,
  has_access = $11, has_refresh = $12, has_id = $13, kid = $14, nonce = $15, ciphertext = $16`;
const SUMMARY_COLUMNS = `subject, issuer, resource, id, client_id, status, expires_at, scopes, account, provider,
  has_access, has_refresh, has_id, version, created_at, updated_at`;

export const PG_SQL = {
  keyIds: "SELECT kid FROM vault_keys",
  recordKeyId:
    "INSERT INTO vault_keys (kid, first_used_at) VALUES ($1, $2) ON CONFLICT (kid) DO NOTHING",
  get: "SELECT * FROM vault_credentials WHERE subject = $1 AND issuer = $2 AND resource = $3",
  getById: "SELECT * FROM vault_credentials WHERE id = $1",
  list: `SELECT ${SUMMARY_COLUMNS} FROM vault_credentials
    WHERE ($1::text IS NULL OR subject = $1) AND ($2::text IS NULL OR issuer = $2)
      AND ($3::text IS NULL OR resource = $3)
    ORDER BY subject, issuer, resource`,
  // One statement, so atomic: insert at version 1 or bump the existing row.
  put: `INSERT INTO vault_credentials (${COLUMNS}, version, created_at, updated_at)
    VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, 1, $17, $17)
    ON CONFLICT (subject, issuer, resource) DO UPDATE SET ${WRITE_COLUMNS},
      version = vault_credentials.version + 1, updated_at = $17
    RETURNING version, created_at, updated_at`,
  // The version test and the write are one statement: the row lock makes a concurrent swap wait, then re-check.
  compareAndSwap: `UPDATE vault_credentials SET ${WRITE_COLUMNS}, version = version + 1, updated_at = $17
    WHERE subject = $1 AND issuer = $2 AND resource = $3 AND id = $4 AND version = $18
    RETURNING version, created_at, updated_at`,
  delete: "DELETE FROM vault_credentials WHERE subject = $1 AND issuer = $2 AND resource = $3",
  deleteById: "DELETE FROM vault_credentials WHERE id = $1",
  // FOR UPDATE: a concurrent writer waits for the re-seal rather than being overwritten by it.
  staleRows: "SELECT * FROM vault_credentials WHERE kid IS DISTINCT FROM $1 FOR UPDATE",
  reseal: `UPDATE vault_credentials SET kid = $4, nonce = $5, ciphertext = $6
    WHERE subject = $1 AND issuer = $2 AND resource = $3`,
} as const;

/**
 * Lease expiry is written and compared by one clock for every instance: the database's (milliseconds since the epoch,
 * `clock_timestamp()`), unless a statement is given a clock of its own (`$n` not null: tests that move time by hand).
 * An instance whose clock ran ahead used to find a live holder's lease expired, end its session and refresh with the
 * same refresh token, which trips rotation reuse detection (issue 20 §1.4).
 */
const CLOCK = (param: string) =>
  `COALESCE(${param}::bigint, (extract(epoch FROM clock_timestamp()) * 1000)::bigint)`;

export const LEASE_SQL = {
  // `live`: the lease has not expired by the lease clock ($2).
  get: `SELECT owner, expires_at, note, holder_pid, expires_at > ${CLOCK("$2")} AS live
    FROM vault_leases WHERE name = $1`,
  // Taking the advisory lock makes us the holder; the note a dead predecessor left stays (the refresher reads it).
  claim: `INSERT INTO vault_leases (name, owner, expires_at, holder_pid)
    VALUES ($1, $2, ${CLOCK("$3")} + $4::bigint, $5)
    ON CONFLICT (name) DO UPDATE SET owner = excluded.owner, expires_at = excluded.expires_at,
      holder_pid = excluded.holder_pid`,
  // Run on the holder's own session: fails if the server dropped it, and matches only while the row is still ours.
  extend: `UPDATE vault_leases SET owner = $2, expires_at = ${CLOCK("$3")} + $4::bigint
    WHERE name = $1 AND holder_pid = $5 RETURNING owner`,
  release: "DELETE FROM vault_leases WHERE name = $1 AND owner = $2",
  setNote:
    "UPDATE vault_leases SET note = $3 WHERE name = $1 AND owner = $2 AND holder_pid = $4 RETURNING name",
  tryLock: "SELECT pg_try_advisory_lock($1::bigint) AS got",
  unlock: "SELECT pg_advisory_unlock($1::bigint) AS released",
  /**
   * Ends the backend recorded on the lease row, and only if it really holds this lease's advisory lock (pg_locks
   * splits a bigint key into classid = high 32 bits, objid = low 32 bits, objsubid = 1), in this database, on an
   * agentauth connection: never an unrelated connection that reused the pid, nor another database's agentauth.
   */
  terminateHolder: `SELECT pg_terminate_backend(l.pid) AS terminated FROM pg_locks l
    JOIN pg_stat_activity a ON a.pid = l.pid AND a.application_name = 'agentauth'
    WHERE l.locktype = 'advisory' AND l.granted AND l.pid = $2 AND l.objsubid = 1
      AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database())
      AND l.classid::bigint = (($1::bigint >> 32) & 4294967295)
      AND l.objid::bigint = ($1::bigint & 4294967295)`,
} as const;

/**
 * The record caches' bookkeeping (cache-listener.ts, cache-barrier.ts). Times are the database's clock, in ms, like the
 * leases'. `set_config('synchronous_commit', 'off', true)` in a WHERE makes that one statement's commit asynchronous:
 * used where losing the write in a crash only makes writers wait longer (an acknowledgement, a barrier), never where
 * it would make them wait less (a registration or renewal, which must be durable before it is relied on).
 */
export const CACHE_SQL = {
  // Registered on the listening connection once LISTEN is in effect; `acked` starts at the last barrier handed out
  // (0 before the first), so writers whose barrier came earlier do not wait for an instance that began after them.
  register: `INSERT INTO vault_cache_instances (id, backend_pid, acked, expires_at, started_at)
    SELECT $1, pg_backend_pid(), CASE WHEN is_called THEN last_value ELSE 0 END,
      ${CLOCK("NULL")} + $2::bigint, ${CLOCK("NULL")}
    FROM vault_cache_barrier`,
  // Only a registration that has not lapsed is renewed: one that did was possibly skipped by a writer.
  renew: `UPDATE vault_cache_instances SET expires_at = ${CLOCK("NULL")} + $2::bigint
    WHERE id = $1 AND expires_at > ${CLOCK("NULL")} RETURNING id`,
  ack: `UPDATE vault_cache_instances SET acked = GREATEST(acked, $2::bigint)
    WHERE id = $1 AND set_config('synchronous_commit', 'off', true) IS NOT NULL`,
  unregister: "DELETE FROM vault_cache_instances WHERE id = $1",
  // Rows of instances gone for an hour: nothing waits on them (they expired long ago), they only take space.
  prune: `DELETE FROM vault_cache_instances WHERE expires_at < ${CLOCK("NULL")} - 3600000`,
  // A writer's barrier, after its change returned: only when some other instance caches. Its number comes from a
  // sequence called after the change committed, so every instance that acknowledges it (or a later one) has handled
  // the change's notification, which the channel delivered before the barrier's.
  barrier: `SELECT b.s::text AS s, pg_notify('${CACHE_CHANNEL}', 'b:' || b.s) AS sent,
      (SELECT count(*) FROM vault_cache_instances i
        WHERE i.id <> $1 AND i.acked < b.s AND i.expires_at > ${CLOCK("NULL")})::int AS waiting
    FROM (SELECT nextval('vault_cache_barrier') AS s) b
    WHERE EXISTS (SELECT 1 FROM vault_cache_instances WHERE id <> $1 AND expires_at > ${CLOCK("NULL")})
      AND set_config('synchronous_commit', 'off', true) IS NOT NULL`,
  // Instances still to acknowledge barrier $2 whose registration has not lapsed.
  waiting: `SELECT count(*)::int AS waiting FROM vault_cache_instances
    WHERE id <> $1 AND acked < $2::bigint AND expires_at > ${CLOCK("NULL")}`,
} as const;
