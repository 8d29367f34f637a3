/** Opening the vault's SQLite file: permissions, pragmas for multi-process use, and the schema. */

import type { DatabaseSync } from "node:sqlite";
import { loadSqlite } from "../core/node-version.ts";
import { BUSY_TIMEOUT_MS, openSqliteDatabase } from "../core/sqlite.ts";
import { VaultIoError } from "./errors.ts";

const SCHEMA_VERSION = 1;

export { BUSY_TIMEOUT_MS } from "../core/sqlite.ts";

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
  provider    TEXT,
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
  expires_at INTEGER NOT NULL,
  note       TEXT
);
`;

/**
 * Opens (creating if needed) a vault database; every failure becomes a VaultIoError naming the path. `readOnly`
 * opens an existing file without creating or changing anything (SQLite may still add its -wal/-shm companions,
 * which hold no data of ours).
 */
export function openVaultDatabase(
  path: string,
  options: { readOnly?: boolean } = {},
): DatabaseSync {
  if (options.readOnly) return openReadOnly(path);
  const db = openSqliteDatabase(
    path,
    { version: SCHEMA_VERSION, sql: SCHEMA },
    {
      io: (file, reason, cause) =>
        new VaultIoError(
          "vault_io",
          `Cannot open the credential vault at ${file} (${reason}). Check that the path is a writable file and not ` +
            "another program's database, or move it aside to start an empty vault.",
          { cause },
        ),
      newerSchema: (file, version, supported) =>
        new VaultIoError(
          "vault_schema_unsupported",
          `The credential vault at ${file} has schema version ${version}, newer than this agentauth understands ` +
            `(${supported}). Upgrade agentauth.`,
        ),
    },
  );
  try {
    addColumn(db, "leases", "note");
    addColumn(db, "credentials", "provider");
  } catch (error) {
    db.close();
    throw new VaultIoError(
      "vault_io",
      `Cannot upgrade the credential vault at ${path} (${(error as Error).message}). Check that the file is writable.`,
      { cause: error },
    );
  }
  return db;
}

function openReadOnly(path: string): DatabaseSync {
  const sqlite = loadSqlite();
  let db: DatabaseSync | undefined;
  try {
    db = new sqlite.DatabaseSync(path, { readOnly: true, timeout: BUSY_TIMEOUT_MS });
    const version = Number(db.prepare("PRAGMA user_version").get()?.user_version ?? 0);
    if (version > SCHEMA_VERSION) {
      throw new VaultIoError(
        "vault_schema_unsupported",
        `The credential vault at ${path} has schema version ${version}, newer than this agentauth understands ` +
          `(${SCHEMA_VERSION}). Upgrade agentauth.`,
      );
    }
    return db;
  } catch (error) {
    db?.close();
    if (error instanceof VaultIoError) throw error;
    throw new VaultIoError(
      "vault_io",
      `Cannot open the credential vault at ${path} for reading (${(error as Error).message}). Check that the ` +
        "path is a readable file and not another program's database.",
      { cause: error },
    );
  }
}

/**
 * Files created before lease notes (leases.note) or provider presets (credentials.provider) lack those columns.
 * Adding a nullable column is backward compatible (older agentauth names the columns it reads and writes), so the
 * schema version stays 1. IMMEDIATE serialises processes that open an old file together; the second one finds
 * the column already there.
 */
function addColumn(db: DatabaseSync, table: "leases" | "credentials", column: string): void {
  const has = () =>
    db
      .prepare(`PRAGMA table_info(${table})`)
      .all()
      .some((c) => c.name === column);
  if (has()) return;
  db.exec("BEGIN IMMEDIATE");
  try {
    if (!has()) db.exec(`ALTER TABLE ${table} ADD COLUMN ${column} TEXT`);
    db.exec("COMMIT");
  } catch (error) {
    if (db.isTransaction) db.exec("ROLLBACK");
    throw error;
  }
}
