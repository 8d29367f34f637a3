/**
 * Opening an agentauth SQLite file, shared by every durable store (vault, RAP runtime): owner-only permissions,
 * WAL so readers run while one process writes, a busy timeout so writers queue instead of failing, FULL sync
 * (what these stores hold cannot be fetched again), and a versioned schema created once even when several
 * processes open a fresh file together.
 */

import { closeSync, openSync } from "node:fs";
import type { DatabaseSync } from "node:sqlite";
import { AgentAuthError } from "./errors.ts";
import { loadSqlite } from "./node-version.ts";

/** Long enough to ride out another process's write (a few ms) and a WAL checkpoint, short enough to fail visibly. */
export const BUSY_TIMEOUT_MS = 5000;

export interface SqliteSchema {
  version: number;
  /** Creates every table of `version` on an empty file. */
  sql: string;
}

export interface SqliteErrors {
  /** The file could not be opened or set up: `reason` is SQLite's message, never data. */
  io(path: string, reason: string, cause: unknown): AgentAuthError;
  /** The file was written by a newer agentauth. */
  newerSchema(path: string, version: number, supported: number): AgentAuthError;
}

export function openSqliteDatabase(
  path: string,
  schema: SqliteSchema,
  errors: SqliteErrors,
): DatabaseSync {
  // Before touching the file: on an unsupported Node nothing is created.
  const sqlite = loadSqlite();
  let db: DatabaseSync | undefined;
  try {
    // SQLite gives the -wal and -shm files the main file's permissions, so owner-only here covers all three.
    if (path !== ":memory:") closeSync(openSync(path, "a", 0o600));
    db = new sqlite.DatabaseSync(path, { timeout: BUSY_TIMEOUT_MS });
    db.exec(`PRAGMA busy_timeout = ${BUSY_TIMEOUT_MS}`);
    const mode = db.prepare("PRAGMA journal_mode = WAL").get()?.journal_mode;
    if (path !== ":memory:" && mode !== "wal")
      throw new Error(`journal_mode is ${String(mode)}, expected wal`);
    db.exec("PRAGMA synchronous = FULL");
    migrate(db, path, schema, errors);
    return db;
  } catch (error) {
    db?.close();
    if (error instanceof AgentAuthError) throw error;
    throw errors.io(path, (error as Error).message, error);
  }
}

function migrate(db: DatabaseSync, path: string, schema: SqliteSchema, errors: SqliteErrors): void {
  // IMMEDIATE takes the write lock up front, so processes opening a fresh file at once create the schema once.
  db.exec("BEGIN IMMEDIATE");
  try {
    const version = Number(db.prepare("PRAGMA user_version").get()?.user_version ?? 0);
    if (version > schema.version) throw errors.newerSchema(path, version, schema.version);
    if (version === 0) {
      db.exec(schema.sql);
      db.exec(`PRAGMA user_version = ${schema.version}`);
    }
    db.exec("COMMIT");
  } catch (error) {
    if (db.isTransaction) db.exec("ROLLBACK");
    throw error;
  }
}
