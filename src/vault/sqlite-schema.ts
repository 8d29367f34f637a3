/** Opening the vault's SQLite file: permissions, pragmas for multi-process use, and the schema. */

import { closeSync, openSync } from "node:fs";
import { DatabaseSync } from "node:sqlite";
import { AgentAuthError } from "../core/errors.ts";
import { VaultIoError } from "./errors.ts";

const SCHEMA_VERSION = 1;

/** Long enough to ride out another process's write (a few ms) and a WAL checkpoint, short enough to fail visibly. */
export const BUSY_TIMEOUT_MS = 5000;

// Content columns are nullable on purpose: the row reader validates every column and reports a bad one as
// vault_record_corrupt, which names the record so it can be deleted; a constraint would only move the failure.
const SCHEMA = `
CREATE TABLE credentials (
  subject     TEXT    NOT NULL,
  issuer      TEXT    NOT NULL,
  resource    TEXT    NOT NULL,
  id          TEXT    NOT NULL UNIQUE,
  client_id   TEXT,
  status      TEXT,
  expires_at  INTEGER,
  scopes      TEXT,
  account     TEXT,
  has_access  INTEGER,
  has_refresh INTEGER,
  has_id      INTEGER,
  kid         TEXT,
  nonce       TEXT,
  ciphertext  TEXT,
  version     INTEGER NOT NULL,
  created_at  INTEGER NOT NULL,
  updated_at  INTEGER NOT NULL,
  PRIMARY KEY (subject, issuer, resource)
);
CREATE TABLE leases (
  name       TEXT    PRIMARY KEY,
  owner      TEXT    NOT NULL,
  expires_at INTEGER NOT NULL
);
`;

/** Opens (creating if needed) a vault database; every failure becomes a VaultIoError naming the path. */
export function openVaultDatabase(path: string): DatabaseSync {
  let db: DatabaseSync | undefined;
  try {
    // SQLite gives the -wal and -shm files the main file's permissions, so owner-only here covers all three.
    if (path !== ":memory:") closeSync(openSync(path, "a", 0o600));
    db = new DatabaseSync(path, { timeout: BUSY_TIMEOUT_MS });
    // WAL lets readers run while one process writes; the busy timeout makes writers queue instead of failing.
    db.exec(`PRAGMA busy_timeout = ${BUSY_TIMEOUT_MS}`);
    const mode = db.prepare("PRAGMA journal_mode = WAL").get()?.journal_mode;
    if (path !== ":memory:" && mode !== "wal")
      throw new Error(`journal_mode is ${String(mode)}, expected wal`);
    // FULL: a refresh token rotated by the server and then lost to a power cut means a new login; an fsync per
    // commit is cheap next to that, and vault writes are rare (one per token refresh).
    db.exec("PRAGMA synchronous = FULL");
    migrate(db, path);
    return db;
  } catch (error) {
    db?.close();
    if (error instanceof AgentAuthError) throw error;
    throw new VaultIoError(
      "vault_io",
      `Cannot open the credential vault at ${path} (${(error as Error).message}). Check that the path is a ` +
        "writable file and not another program's database, or move it aside to start an empty vault.",
      { cause: error },
    );
  }
}

function migrate(db: DatabaseSync, path: string): void {
  // IMMEDIATE takes the write lock up front, so processes opening a fresh file at once create the schema once.
  db.exec("BEGIN IMMEDIATE");
  try {
    const version = Number(db.prepare("PRAGMA user_version").get()?.user_version ?? 0);
    if (version > SCHEMA_VERSION) {
      throw new VaultIoError(
        "vault_schema_unsupported",
        `The credential vault at ${path} has schema version ${version}, newer than this agentauth understands ` +
          `(${SCHEMA_VERSION}). Upgrade agentauth.`,
      );
    }
    if (version === 0) {
      db.exec(SCHEMA);
      db.exec(`PRAGMA user_version = ${SCHEMA_VERSION}`);
    }
    db.exec("COMMIT");
  } catch (error) {
    if (db.isTransaction) db.exec("ROLLBACK");
    throw error;
  }
}
