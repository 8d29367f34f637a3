/**
 * agentauth's PostgreSQL plumbing, shared by every PostgreSQL store (vault, RAP runtime, RAP tool): a pool with
 * typed errors and a redacted URL, dedicated sessions for advisory locks, versioned migrations applied under a
 * lock so that several instances can start at once, and each instance's presence (a lock the server drops when the
 * instance is gone).
 */

export {
  type Database,
  type DatabaseOptions,
  type Listener,
  openDatabase,
  type Queryable,
  type Row,
  type Session,
} from "./database.ts";
export { DatabaseError, type DatabaseErrorCode, isTemporarilyUnavailable } from "./errors.ts";
export { advisoryKey } from "./locks.ts";
export { applyMigrations, type Migration } from "./migrations.ts";
export {
  absent,
  DEFAULT_GRACE_MS,
  gone,
  PRESENT_KEYS_SQL,
  type Presence,
  type PresenceOptions,
  startPresence,
} from "./presence.ts";
export { DATABASE_URL_ENV, databaseUrlFromEnv, isPostgresUrl, redactDatabaseUrl } from "./url.ts";
