/**
 * PostgreSQL rows in and out of the shared row mapper (sqlite-rows.ts), so both backends check a row the same way.
 * pg returns bigint columns as strings (they may exceed 2^53); the mapper wants numbers, so integral strings become
 * numbers when they are safe integers and stay strings otherwise, which the mapper then reports as corrupt.
 */

import type { Keyring } from "../keyring.ts";
import { inputParams, type Row } from "../sqlite-rows.ts";
import type { CredentialInput } from "../types.ts";

const BIGINT_COLUMNS = ["version", "created_at", "updated_at"] as const;

/** The row with its bigint columns as numbers (a copy: the driver's object is left alone). */
export function fromPg(row: Row): Row {
  const out: Row = { ...row };
  for (const column of BIGINT_COLUMNS) {
    const value = out[column];
    if (typeof value === "string" && /^-?\d+$/.test(value)) {
      const n = Number(value);
      if (Number.isSafeInteger(n)) out[column] = n;
    }
  }
  return out;
}

/** The write parameters in the order sql.ts binds them ($1 … $16, then $17 = now). */
export function writeParams(keyring: Keyring, input: CredentialInput, now: number): unknown[] {
  const p = inputParams(keyring, input, now);
  return [
    p.subject,
    p.issuer,
    p.resource,
    p.id,
    p.client_id,
    p.status,
    p.expires_at,
    p.scopes,
    p.account,
    p.provider,
    p.has_access,
    p.has_refresh,
    p.has_id,
    p.kid,
    p.nonce,
    p.ciphertext,
    now,
  ];
}
