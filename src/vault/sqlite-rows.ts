/**
 * Mapping between credential records and table rows. Written for SQLite; the PostgreSQL store reads through the
 * same checks (postgres/rows.ts turns its bigint columns into numbers first), so a row is judged the same way on
 * both backends. Every column read is checked: a bad one is vault_record_corrupt.
 */

import type { SQLInputValue } from "node:sqlite";
import { corruptRecord, type VaultCorruptError, VaultKeyError } from "./errors.ts";
import type { Keyring } from "./keyring.ts";
import type { OpenedTokens } from "./opened-tokens.ts";
import { cleanAccount, copyRecord, credentialId, isProviderRef } from "./record.ts";
import { openTokens, type Sealed, sealTokens } from "./seal.ts";
import type {
  AccountInfo,
  CredentialInput,
  CredentialKey,
  CredentialRecord,
  CredentialSummary,
  UnreadableCredential,
} from "./types.ts";

/** A row as a driver returns it: column name to value (SQLite's values, or PostgreSQL's after postgres/rows.ts). */
export type Row = Record<string, unknown>;

/** The bind parameters for writing `input`, its tokens sealed under the keyring's current key. */
export function inputParams(
  keyring: Keyring,
  input: CredentialInput,
  now: number,
): Record<string, SQLInputValue> {
  const sealed = sealTokens(keyring, input, input.tokens);
  return {
    subject: input.subject,
    issuer: input.issuer,
    resource: input.resource,
    id: credentialId(input),
    client_id: input.clientId,
    status: input.status,
    expires_at: input.expiresAt ?? null,
    scopes: JSON.stringify(input.scopes),
    account: JSON.stringify(cleanAccount(input.account)),
    provider: input.provider ? JSON.stringify(input.provider) : null,
    // Plaintext flags so `list()` can say what a record holds without decrypting anything.
    has_access: input.tokens.accessToken ? 1 : 0,
    has_refresh: input.tokens.refreshToken ? 1 : 0,
    has_id: input.tokens.idToken ? 1 : 0,
    kid: sealed.kid,
    nonce: sealed.nonce,
    ciphertext: sealed.ciphertext,
    now,
  };
}

/** Reads everything but the tokens; never touches the ciphertext. */
export function rowToSummary(row: Row): CredentialSummary {
  const { record, has } = readColumns(row);
  return { ...record, has };
}

/**
 * The full record: the summary's checks, then the tokens decrypted and checked against the `has` flags. With
 * `opened`, a row whose sealed bytes were opened before reuses that result (see opened-tokens.ts).
 */
/**
 * `rowToRecord` with a store's keyring; a row sealed under a key id the keyring does not hold yet (another process
 * or instance rotated the key) is read once more after `reload` (the store's keyring reloaded from its source), when
 * the store can reload. Both stores (SQLite and PostgreSQL) read through this.
 */
export function rowToRecordReloading(
  keys: () => Keyring,
  row: Row,
  opened: OpenedTokens,
  reload: (() => void) | undefined,
): CredentialRecord {
  try {
    return rowToRecord(keys(), row, opened);
  } catch (error) {
    if (!(error instanceof VaultKeyError && error.code === "vault_key_unknown" && reload))
      throw error;
    reload();
    return rowToRecord(keys(), row, opened);
  }
}

export function rowToRecord(keyring: Keyring, row: Row, opened?: OpenedTokens): CredentialRecord {
  const { record, has } = readColumns(row);
  const sealed: Sealed = {
    kid: sealedColumn(row, "kid", record.id),
    nonce: sealedColumn(row, "nonce", record.id),
    ciphertext: sealedColumn(row, "ciphertext", record.id),
  };
  const tokens = opened
    ? opened.open(keyring, record, row.provider ?? null, sealed, record.id)
    : openTokens(keyring, record, sealed, record.id);
  if (
    has.accessToken !== (tokens.accessToken !== undefined) ||
    has.refreshToken !== (tokens.refreshToken !== undefined) ||
    has.idToken !== (tokens.idToken !== undefined)
  ) {
    throw corruptRecord(record.id, "its token flags disagree with its sealed tokens");
  }
  // A fresh object built here, so adding the tokens in place copies nothing (every read runs this).
  (record as CredentialRecord).tokens = tokens;
  return record as CredentialRecord;
}

/**
 * Every column but the sealed ones, each checked. Module-level helpers instead of per-call closures: this runs on
 * every read, and the allocations showed in the read profile.
 */
function readColumns(row: Row): {
  record: Omit<CredentialRecord, "tokens">;
  has: CredentialSummary["has"];
} {
  const id = typeof row.id === "string" ? row.id : "(unknown id)";
  const key: CredentialKey = {
    subject: text(row, "subject", id),
    issuer: text(row, "issuer", id),
    resource: text(row, "resource", id),
  };
  // The id is derived from the key; a mismatch means the row was edited or moved, and `getById` would lie.
  if (text(row, "id", id) !== credentialId(key)) throw corrupt(id, "id");
  const status = text(row, "status", id);
  if (status !== "active" && status !== "login_required") throw corrupt(id, "status");
  const scopes = json(row, "scopes", id);
  if (!Array.isArray(scopes) || !scopes.every((s) => typeof s === "string"))
    throw corrupt(id, "scopes");
  const account = json(row, "account", id);
  if (typeof account !== "object" || account === null || Array.isArray(account))
    throw corrupt(id, "account");
  for (const value of Object.values(account as Record<string, unknown>))
    if (typeof value !== "string") throw corrupt(id, "account");

  const record: Omit<CredentialRecord, "tokens"> = {
    id,
    subject: key.subject,
    issuer: key.issuer,
    resource: key.resource,
    clientId: text(row, "client_id", id),
    scopes,
    account: cleanAccount(account as AccountInfo),
    status,
    version: int(row, "version", id),
    createdAt: int(row, "created_at", id),
    updatedAt: int(row, "updated_at", id),
  };
  const has = {
    accessToken: flag(row, "has_access", id),
    refreshToken: flag(row, "has_refresh", id),
    idToken: flag(row, "has_id", id),
  };
  if (row.provider !== null && row.provider !== undefined) {
    const provider = json(row, "provider", id);
    if (!isProviderRef(provider)) throw corrupt(id, "provider");
    record.provider = provider;
  }
  if (row.expires_at !== null) {
    // A number, not necessarily an integer: callers compute it from `expires_in`, which may be fractional.
    if (typeof row.expires_at !== "number" || !Number.isFinite(row.expires_at))
      throw corrupt(id, "expires_at");
    record.expiresAt = row.expires_at;
  }
  return { record, has };
}

function corrupt(id: string, column: string) {
  return corruptRecord(id, `column ${column} is missing or malformed`);
}

function text(row: Row, column: string, id: string): string {
  const value = row[column];
  if (typeof value !== "string") throw corrupt(id, column);
  return value;
}

function int(row: Row, column: string, id: string): number {
  const value = row[column];
  if (typeof value !== "number" || !Number.isSafeInteger(value)) throw corrupt(id, column);
  return value;
}

function flag(row: Row, column: string, id: string): boolean {
  const value = int(row, column, id);
  if (value !== 0 && value !== 1) throw corrupt(id, column);
  return value === 1;
}

function json(row: Row, column: string, id: string): unknown {
  const value = text(row, column, id);
  try {
    return JSON.parse(value);
  } catch {
    throw corrupt(id, column);
  }
}

function sealedColumn(row: Row, column: string, id: string): string {
  const value = row[column];
  if (typeof value !== "string" || value === "") {
    throw corruptRecord(id, `column ${column} is missing or malformed`);
  }
  return value;
}

/** What can still be said about a damaged row: its key columns when they are text, and why it does not read. */
export function unreadable(row: Row, error: VaultCorruptError): UnreadableCredential {
  const entry: UnreadableCredential = {
    id: error.recordId ?? "(unknown id)",
    code: error.code,
    message: error.message,
  };
  for (const column of ["subject", "issuer", "resource"] as const) {
    const value = row[column];
    if (typeof value === "string") entry[column] = value;
  }
  return entry;
}

/** The record as written: built from the input and the row's new version, no decryption round trip. */
export function stored(input: CredentialInput, row: Row): CredentialRecord {
  return copyRecord({
    ...input,
    id: credentialId(input),
    version: Number(row.version),
    createdAt: Number(row.created_at),
    updatedAt: Number(row.updated_at),
  });
}
