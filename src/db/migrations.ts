/**
 * Versioned schema migrations, one list per component, applied on open. Several instances starting at once are
 * serialised by a transaction-level advisory lock: the first applies each missing step, the others then find it
 * applied. A database from a newer agentauth (a version above what this one knows) is refused, not guessed at.
 */

import { DatabaseError } from "./errors.ts";

export interface Migration {
  /** 1, 2, 3 …: applied in order, each once. */
  version: number;
  /** What it does, for the table (and a reader of it). */
  description: string;
  sql: string;
}

interface Runner {
  readonly label: string;
  transaction<T>(
    fn: (client: {
      query(sql: string, params?: readonly unknown[]): Promise<Record<string, unknown>[]>;
    }) => Promise<T>,
  ): Promise<T>;
}

/** The one lock every agentauth migration takes (an arbitrary constant: "agentauth" in ASCII, as a bigint). */
export const MIGRATION_LOCK = 0x6167656e74617574n;

export async function applyMigrations(
  db: Runner,
  component: string,
  migrations: readonly Migration[],
): Promise<{ applied: number[] }> {
  checkList(component, migrations);
  // Fast path, with no lock and no DDL: an instance whose schema is current needs only SELECT on the table (a role
  // without CREATE can run it), and does not queue behind another instance's migration.
  const current = await db.transaction(async (client) => {
    const exists = await client.query("SELECT to_regclass('agentauth_schema') IS NOT NULL AS yes");
    if (exists[0]?.yes !== true) return undefined;
    const rows = await client.query("SELECT version FROM agentauth_schema WHERE component = $1", [
      component,
    ]);
    return new Set(rows.map((r) => Number(r.version)));
  });
  if (current) {
    refuseNewer(db.label, component, current, migrations);
    if (migrations.every((m) => current.has(m.version))) return { applied: [] };
  }
  return db.transaction(async (client) => {
    // Bounded: an instance stuck mid-migration must not hang every other instance's start for ever.
    await client.query("SET LOCAL lock_timeout = '60s'");
    await client.query("SELECT pg_advisory_xact_lock($1)", [MIGRATION_LOCK.toString()]);
    await client.query(`CREATE TABLE IF NOT EXISTS agentauth_schema (
      component   text        NOT NULL,
      version     integer     NOT NULL,
      description text        NOT NULL,
      applied_at  timestamptz NOT NULL DEFAULT now(),
      PRIMARY KEY (component, version)
    )`);
    const rows = await client.query("SELECT version FROM agentauth_schema WHERE component = $1", [
      component,
    ]);
    const done = new Set(rows.map((r) => Number(r.version)));
    refuseNewer(db.label, component, done, migrations);
    const applied: number[] = [];
    for (const migration of migrations) {
      if (done.has(migration.version)) continue;
      await client.query(migration.sql);
      await client.query(
        "INSERT INTO agentauth_schema (component, version, description) VALUES ($1, $2, $3)",
        [component, migration.version, migration.description],
      );
      applied.push(migration.version);
    }
    return { applied };
  });
}

function refuseNewer(
  label: string,
  component: string,
  done: ReadonlySet<number>,
  migrations: readonly Migration[],
): void {
  const newest = Math.max(0, ...done);
  const known = Math.max(0, ...migrations.map((m) => m.version));
  if (newest > known) {
    throw new DatabaseError(
      "database_schema_unsupported",
      `The PostgreSQL database at ${label} holds the ${component} schema version ${newest}, newer than this ` +
        `agentauth understands (${known}). Upgrade agentauth on every instance before starting this one.`,
    );
  }
}

/** A programming error, caught on first open: versions 1..n, in order, no gaps. */
function checkList(component: string, migrations: readonly Migration[]): void {
  migrations.forEach((m, i) => {
    if (m.version !== i + 1) {
      throw new Error(
        `${component} migrations must be numbered 1..n in order; found ${m.version} at ${i}`,
      );
    }
  });
}
