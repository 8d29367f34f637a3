/** Mapping between credential records and SQLite rows. Every column read is checked: a bad one is vault_record_corrupt. */

import type { SQLInputValue, SQLOutputValue } from "node:sqlite";
import { corruptRecord } from "./errors.ts";
import type { Keyring } from "./keyring.ts";
import { cleanAccount, credentialId } from "./record.ts";
import { openTokens, type Sealed, sealTokens } from "./seal.ts";
import type {
  AccountInfo,
  CredentialInput,
  CredentialKey,
  CredentialRecord,
  CredentialSummary,
} from "./types.ts";

export type Row = Record<string, SQLOutputValue>;

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
  const id = typeof row.id === "string" ? row.id : "(unknown id)";
  const corrupt = (column: string) => corruptRecord(id, `column ${column} is missing or malformed`);
  const text = (column: string): string => {
    const value = row[column];
    if (typeof value !== "string") throw corrupt(column);
    return value;
  };
  const int = (column: string): number => {
    const value = row[column];
    if (typeof value !== "number" || !Number.isSafeInteger(value)) throw corrupt(column);
    return value;
  };
  const flag = (column: string): boolean => {
    const value = int(column);
    if (value !== 0 && value !== 1) throw corrupt(column);
    return value === 1;
  };
  const json = (column: string): unknown => {
    try {
      return JSON.parse(text(column));
    } catch {
      throw corrupt(column);
    }
  };

  const key: CredentialKey = {
    subject: text("subject"),
    issuer: text("issuer"),
    resource: text("resource"),
  };
  // The id is derived from the key; a mismatch means the row was edited or moved, and `getById` would lie.
  if (text("id") !== credentialId(key)) throw corrupt("id");
  const status = text("status");
  if (status !== "active" && status !== "login_required") throw corrupt("status");
  const scopes = json("scopes");
  if (!Array.isArray(scopes) || !scopes.every((s) => typeof s === "string"))
    throw corrupt("scopes");
  const account = json("account");
  if (typeof account !== "object" || account === null || Array.isArray(account))
    throw corrupt("account");
  const accountFields = Object.values(account as Record<string, unknown>);
  if (!accountFields.every((v) => typeof v === "string")) throw corrupt("account");

  const summary: CredentialSummary = {
    id,
    ...key,
    clientId: text("client_id"),
    scopes,
    account: cleanAccount(account as AccountInfo),
    status,
    version: int("version"),
    createdAt: int("created_at"),
    updatedAt: int("updated_at"),
    has: {
      accessToken: flag("has_access"),
      refreshToken: flag("has_refresh"),
      idToken: flag("has_id"),
    },
  };
  if (row.expires_at !== null) {
    // A number, not necessarily an integer: callers compute it from `expires_in`, which may be fractional.
    if (typeof row.expires_at !== "number" || !Number.isFinite(row.expires_at))
      throw corrupt("expires_at");
    summary.expiresAt = row.expires_at;
  }
  return summary;
}

/** The full record: the summary's checks, then the tokens decrypted and checked against the `has` flags. */
export function rowToRecord(keyring: Keyring, row: Row): CredentialRecord {
  const { has, ...summary } = rowToSummary(row);
  const sealed: Sealed = {
    kid: sealedColumn(row, "kid", summary.id),
    nonce: sealedColumn(row, "nonce", summary.id),
    ciphertext: sealedColumn(row, "ciphertext", summary.id),
  };
  const tokens = openTokens(keyring, summary, sealed, summary.id);
  if (
    has.accessToken !== (tokens.accessToken !== undefined) ||
    has.refreshToken !== (tokens.refreshToken !== undefined) ||
    has.idToken !== (tokens.idToken !== undefined)
  ) {
    throw corruptRecord(summary.id, "its token flags disagree with its sealed tokens");
  }
  return { ...summary, tokens };
}

function sealedColumn(row: Row, column: string, id: string): string {
  const value = row[column];
  if (typeof value !== "string" || value === "") {
    throw corruptRecord(id, `column ${column} is missing or malformed`);
  }
  return value;
}
