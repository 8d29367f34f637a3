/** Pure helpers both stores share: record ids, input validation, summaries and copies, so the backends cannot drift. */

import { createHash } from "node:crypto";
import { Secret } from "../core/secret.ts";
import { VaultInputError } from "./errors.ts";
import type {
  AccountInfo,
  CredentialFilter,
  CredentialInput,
  CredentialKey,
  CredentialRecord,
  CredentialStatus,
  CredentialSummary,
  CredentialTokens,
  ProviderRef,
} from "./types.ts";

const STATUSES: readonly CredentialStatus[] = ["active", "login_required"];
const ACCOUNT_FIELDS = ["label", "name", "email", "organization", "login", "avatarUrl"] as const;

/**
 * An unambiguous encoding of the key: JSON array, so ("a|b", "c") and ("a", "b|c") never collide. Used for the record
 * id, map keys and the AEAD associated data.
 */
export function encodeKey(key: CredentialKey): string {
  return JSON.stringify([key.subject, key.issuer, key.resource]);
}

/**
 * 12 base64url characters (72 bits) of SHA-256 over the key: short enough to type in `agentauth vault revoke <id>`,
 * stable across stores and processes, and reveals nothing readable about the key.
 */
export function credentialId(key: CredentialKey): string {
  const encoded = encodeKey(key);
  let id = idCache.get(encoded);
  if (id === undefined) {
    id = createHash("sha256").update(encoded).digest("base64url").slice(0, 12);
    // Every read checks the stored id against the key (a hash per read was a tenth of a read's CPU); a process
    // touches few keys, and the cache is simply emptied if it ever holds more than ID_CACHE_MAX.
    if (idCache.size >= ID_CACHE_MAX) idCache.clear();
    idCache.set(encoded, id);
  }
  return id;
}

const ID_CACHE_MAX = 4096;
const idCache = new Map<string, string>();

export function keyOf(value: CredentialKey): CredentialKey {
  return { subject: value.subject, issuer: value.issuer, resource: value.resource };
}

/** Runtime guard for JavaScript callers and data crossing process boundaries: the types alone do not hold at runtime. */
export function validateInput(input: CredentialInput): void {
  const fail = (what: string) => {
    throw new VaultInputError(`Credential input is invalid: ${what}. Fix the caller and retry.`);
  };
  if (typeof input !== "object" || input === null) fail("expected an object");
  if (typeof input.subject !== "string" || input.subject === "")
    fail("subject must be a non-empty string");
  if (typeof input.issuer !== "string" || input.issuer === "")
    fail("issuer must be a non-empty string");
  if (typeof input.resource !== "string") fail('resource must be a string ("" when unbound)');
  if (typeof input.clientId !== "string") fail("clientId must be a string");
  if (!STATUSES.includes(input.status)) fail(`status must be one of ${STATUSES.join(", ")}`);
  if (!Array.isArray(input.scopes) || !input.scopes.every((s) => typeof s === "string")) {
    fail("scopes must be an array of strings");
  }
  if (input.expiresAt !== undefined && !Number.isFinite(input.expiresAt)) {
    fail("expiresAt must be a finite number of ms since the epoch, or undefined");
  }
  if (typeof input.account !== "object" || input.account === null)
    fail("account must be an object");
  for (const field of ACCOUNT_FIELDS) {
    const value = input.account[field];
    if (value !== undefined && typeof value !== "string") fail(`account.${field} must be a string`);
  }
  const tokens = input.tokens;
  if (typeof tokens !== "object" || tokens === null) fail("tokens must be an object");
  for (const field of [
    "accessToken",
    "refreshToken",
    "idToken",
    "clientSecret",
    "dpopKey",
  ] as const) {
    const value = tokens[field];
    // A plain string here would be stored fine but printed in the clear by whoever holds the record.
    if (value !== undefined && !(value instanceof Secret)) fail(`tokens.${field} must be a Secret`);
  }
  if (tokens.tokenType !== undefined && typeof tokens.tokenType !== "string") {
    fail("tokens.tokenType must be a string");
  }
  if (input.provider !== undefined && !isProviderRef(input.provider)) {
    fail("provider must be { name: non-empty string, options?: Record<string, string> }");
  }
}

/** Runtime check of a stored or given provider reference (plaintext JSON in the stores). */
export function isProviderRef(value: unknown): value is ProviderRef {
  if (typeof value !== "object" || value === null || Array.isArray(value)) return false;
  const { name, options, ...rest } = value as Record<string, unknown>;
  if (Object.keys(rest).length > 0 || typeof name !== "string" || name === "") return false;
  if (options === undefined) return true;
  if (typeof options !== "object" || options === null || Array.isArray(options)) return false;
  return Object.values(options).every((v) => typeof v === "string");
}

/** Whether two provider references name the same preset with the same options, whatever their order. */
export function sameProviderRef(a: ProviderRef, b: ProviderRef): boolean {
  const left = Object.entries(a.options ?? {});
  return (
    a.name === b.name &&
    left.length === Object.keys(b.options ?? {}).length &&
    left.every(([name, value]) => b.options?.[name] === value)
  );
}

export function copyProviderRef(ref: ProviderRef): ProviderRef {
  return ref.options ? { name: ref.name, options: { ...ref.options } } : { name: ref.name };
}

export function validateLease(name: string, owner: string, ttlMs: number): void {
  if (typeof name !== "string" || name === "")
    throw new VaultInputError("Lease name must be a non-empty string.");
  if (typeof owner !== "string" || owner === "") {
    throw new VaultInputError("Lease owner must be a non-empty string.");
  }
  if (!Number.isFinite(ttlMs) || ttlMs <= 0)
    throw new VaultInputError("Lease ttlMs must be a positive number.");
}

export function matches(key: CredentialKey, filter: CredentialFilter | undefined): boolean {
  if (!filter) return true;
  return (
    (filter.subject === undefined || filter.subject === key.subject) &&
    (filter.issuer === undefined || filter.issuer === key.issuer) &&
    (filter.resource === undefined || filter.resource === key.resource)
  );
}

/** Drops undefined fields so a record read back deep-equals one built from the same input, whatever the backend. */
export function cleanAccount(account: AccountInfo): AccountInfo {
  const out: AccountInfo = {};
  for (const field of ACCOUNT_FIELDS) {
    const value = account[field];
    if (value !== undefined) out[field] = value;
  }
  return out;
}

export function cleanTokens(tokens: CredentialTokens): CredentialTokens {
  const out: CredentialTokens = {};
  if (tokens.accessToken) out.accessToken = tokens.accessToken;
  if (tokens.refreshToken) out.refreshToken = tokens.refreshToken;
  if (tokens.idToken) out.idToken = tokens.idToken;
  if (tokens.tokenType !== undefined) out.tokenType = tokens.tokenType;
  if (tokens.clientSecret) out.clientSecret = tokens.clientSecret;
  if (tokens.dpopKey) out.dpopKey = tokens.dpopKey;
  return out;
}

/** A fresh copy (Secrets are immutable and shared) so callers cannot mutate what a store holds. */
export function copyRecord(record: CredentialRecord): CredentialRecord {
  const copy: CredentialRecord = {
    id: record.id,
    subject: record.subject,
    issuer: record.issuer,
    resource: record.resource,
    clientId: record.clientId,
    tokens: cleanTokens(record.tokens),
    scopes: [...record.scopes],
    account: cleanAccount(record.account),
    status: record.status,
    version: record.version,
    createdAt: record.createdAt,
    updatedAt: record.updatedAt,
  };
  if (record.expiresAt !== undefined) copy.expiresAt = record.expiresAt;
  if (record.provider !== undefined) copy.provider = copyProviderRef(record.provider);
  return copy;
}

export function summarize(record: CredentialRecord): CredentialSummary {
  const { tokens, ...rest } = copyRecord(record);
  return {
    ...rest,
    has: {
      accessToken: tokens.accessToken !== undefined,
      refreshToken: tokens.refreshToken !== undefined,
      idToken: tokens.idToken !== undefined,
    },
  };
}

/** Listing order for every backend: by key, compared as UTF-8 bytes because that is how SQLite's BINARY collation sorts. */
export function compareKeys(a: CredentialKey, b: CredentialKey): number {
  return (
    Buffer.compare(Buffer.from(a.subject), Buffer.from(b.subject)) ||
    Buffer.compare(Buffer.from(a.issuer), Buffer.from(b.issuer)) ||
    Buffer.compare(Buffer.from(a.resource), Buffer.from(b.resource))
  );
}

/**
 * `get` takes a key; an id string (what `vault list` prints) used to reach SQLite and come back as a disk failure.
 * Said as the caller's mistake, with the method that takes an id.
 */
export function assertCredentialKey(key: unknown): asserts key is CredentialKey {
  const k = key as Partial<CredentialKey> | null;
  if (
    typeof k === "object" &&
    k !== null &&
    typeof k.subject === "string" &&
    typeof k.issuer === "string" &&
    typeof k.resource === "string"
  ) {
    return;
  }
  const got = typeof key === "string" ? "a string" : key === null ? "null" : `a ${typeof key}`;
  throw new VaultInputError(
    `get() takes a credential key {subject, issuer, resource}, and got ${got}. To look a credential up by its ` +
      "id (what 'agentauth vault list' prints), call getById(id).",
  );
}
