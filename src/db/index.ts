/**
 * agentauth's PostgreSQL plumbing, shared by every PostgreSQL store (vault, RAP runtime, RAP tool): a pool with
 * typed errors and a redacted URL, dedicated sessions for advisory locks, and versioned migrations applied under a
 * lock so that several instances can start at once.
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
export { DatabaseError, type DatabaseErrorCode } from "./errors.ts";
export { advisoryKey } from "./locks.ts";
export { applyMigrations, type Migration } from "./migrations.ts";
export { DATABASE_URL_ENV, databaseUrlFromEnv, isPostgresUrl, redactDatabaseUrl } from "./url.ts";
