/** The default vault: one SQLite file shared by every agentauth process on the machine, tokens sealed with AES-256-GCM. */

import type { DatabaseSync, StatementSync } from "node:sqlite";
import { AgentAuthError } from "../core/errors.ts";
import { VaultIoError, VaultKeyError } from "./errors.ts";
import type { Keyring } from "./keyring.ts";
import { isLeaseOwnerGone } from "./lease-owner.ts";
import { copyRecord, credentialId, validateInput, validateLease } from "./record.ts";
import { sealTokens } from "./seal.ts";
import { inputParams, type Row, rowToRecord, rowToSummary } from "./sqlite-rows.ts";
import { openVaultDatabase } from "./sqlite-schema.ts";
import type {
  CredentialFilter,
  CredentialInput,
  CredentialKey,
  CredentialRecord,
  CredentialStore,
  CredentialSummary,
  LeaseInfo,
} from "./types.ts";

export interface SqliteCredentialStoreOptions {
  /** The database file; created (owner-only) if missing. */
  path: string;
  keyring: Keyring;
  /**
   * Called once when a row names a key id the keyring lacks: another process may have rotated the key file since
   * this one started. Without it, such rows fail with `vault_key_unknown`.
   */
  reloadKeyring?: () => Keyring;
  /** The clock for timestamps and lease expiry; tests pass a fake one. */
  now?: () => number;
}

const WRITE_COLUMNS = `client_id = $client_id, status = $status, expires_at = $expires_at, scopes = $scopes,
  account = $account, has_access = $has_access, has_refresh = $has_refresh, has_id = $has_id, kid = $kid,
  nonce = $nonce, ciphertext = $ciphertext`;
const SUMMARY_COLUMNS = `subject, issuer, resource, id, client_id, status, expires_at, scopes, account, has_access,
  has_refresh, has_id, version, created_at, updated_at`;
const BY_KEY = "subject = $subject AND issuer = $issuer AND resource = $resource";

const SQL = {
  get: `SELECT * FROM credentials WHERE ${BY_KEY}`,
  getById: "SELECT * FROM credentials WHERE id = $id",
  list: `SELECT ${SUMMARY_COLUMNS} FROM credentials
    WHERE ($subject IS NULL OR subject = $subject) AND ($issuer IS NULL OR issuer = $issuer)
      AND ($resource IS NULL OR resource = $resource)
    ORDER BY subject, issuer, resource`,
  // One statement, so atomic without an explicit transaction: insert at version 1 or bump the existing row.
  put: `INSERT INTO credentials (subject, issuer, resource, id, client_id, status, expires_at, scopes, account,
      has_access, has_refresh, has_id, kid, nonce, ciphertext, version, created_at, updated_at)
    VALUES ($subject, $issuer, $resource, $id, $client_id, $status, $expires_at, $scopes, $account, $has_access,
      $has_refresh, $has_id, $kid, $nonce, $ciphertext, 1, $now, $now)
    ON CONFLICT (subject, issuer, resource) DO UPDATE SET ${WRITE_COLUMNS},
      version = credentials.version + 1, updated_at = $now
    RETURNING version, created_at, updated_at`,
  // The version test and the write are one statement: no other process can slip in between.
  compareAndSwap: `UPDATE credentials SET ${WRITE_COLUMNS}, version = version + 1, updated_at = $now
    WHERE ${BY_KEY} AND version = $expected
    RETURNING version, created_at, updated_at`,
  delete: `DELETE FROM credentials WHERE ${BY_KEY}`,
  deleteById: "DELETE FROM credentials WHERE id = $id",
  // Take the lease if it is free, expired, or already ours (which extends it); otherwise change nothing.
  acquireLease: `INSERT INTO leases (name, owner, expires_at) VALUES ($name, $owner, $expires_at)
    ON CONFLICT (name) DO UPDATE SET owner = excluded.owner, expires_at = excluded.expires_at
    WHERE leases.owner = excluded.owner OR leases.expires_at <= $now`,
  releaseLease: "DELETE FROM leases WHERE name = $name AND owner = $owner",
  getLease: "SELECT owner, expires_at, note FROM leases WHERE name = $name",
  // Compare-and-swap on the dead holder's id: of several contenders that saw the same dead owner, one wins.
  takeLease: `UPDATE leases SET owner = $owner, expires_at = $expires_at
    WHERE name = $name AND owner = $dead`,
  setLeaseNote: "UPDATE leases SET note = $note WHERE name = $name AND owner = $owner",
  staleRows: "SELECT * FROM credentials WHERE kid IS NOT $kid",
  reseal: `UPDATE credentials SET kid = $kid, nonce = $nonce, ciphertext = $ciphertext WHERE ${BY_KEY}`,
} as const;

export class SqliteCredentialStore implements CredentialStore {
  readonly path: string;
  readonly #db: DatabaseSync;
  readonly #statements: { [K in keyof typeof SQL]: StatementSync };
  readonly #reloadKeyring: (() => Keyring) | undefined;
  readonly #now: () => number;
  #keyring: Keyring;

  constructor(options: SqliteCredentialStoreOptions) {
    this.path = options.path;
    this.#keyring = options.keyring;
    this.#reloadKeyring = options.reloadKeyring;
    this.#now = options.now ?? Date.now;
    this.#db = openVaultDatabase(options.path);
    const statements: Partial<Record<keyof typeof SQL, StatementSync>> = {};
    try {
      for (const [name, sql] of Object.entries(SQL)) {
        statements[name as keyof typeof SQL] = this.#db.prepare(sql);
      }
    } catch (error) {
      // Our schema version but other tables: someone else's database, or a bad hand edit.
      this.#db.close();
      throw new VaultIoError(
        "vault_io",
        `The file at ${this.path} is not an agentauth vault (${(error as Error).message}). Move it ` +
          "aside to start an empty vault.",
        { cause: error },
      );
    }
    this.#statements = statements as { [K in keyof typeof SQL]: StatementSync };
  }

  /** The key id new writes are sealed with. */
  get currentKid(): string {
    return this.#keyring.currentKid;
  }

  async get(key: CredentialKey): Promise<CredentialRecord | undefined> {
    return this.#io(() => this.#read(this.#statements.get.get(keyParams(key))));
  }

  async getById(id: string): Promise<CredentialRecord | undefined> {
    return this.#io(() => this.#read(this.#statements.getById.get({ id })));
  }

  async list(filter: CredentialFilter = {}): Promise<CredentialSummary[]> {
    return this.#io(() => {
      const rows = this.#statements.list.all({
        subject: filter.subject ?? null,
        issuer: filter.issuer ?? null,
        resource: filter.resource ?? null,
      });
      return rows.map((row) => rowToSummary(row as Row));
    });
  }

  async put(input: CredentialInput): Promise<CredentialRecord> {
    validateInput(input);
    return this.#io(() => {
      const row = this.#statements.put.get(inputParams(this.#keyring, input, this.#now()));
      return stored(input, row as Row);
    });
  }

  async compareAndSwap(
    expectedVersion: number,
    input: CredentialInput,
  ): Promise<CredentialRecord | undefined> {
    validateInput(input);
    return this.#io(() => {
      // The id is fixed by the key, so the swap leaves it (and its unique index) untouched.
      const { id: _id, ...params } = inputParams(this.#keyring, input, this.#now());
      const row = this.#statements.compareAndSwap.get({ ...params, expected: expectedVersion });
      return row ? stored(input, row as Row) : undefined;
    });
  }

  async delete(key: CredentialKey): Promise<boolean> {
    return this.#io(() => Number(this.#statements.delete.run(keyParams(key)).changes) > 0);
  }

  /**
   * Not in the CredentialStore contract: deletes by id without reading the row, so `vault revoke <id>` can
   * remove a record that no longer decodes (the id is in every vault_record_corrupt error).
   */
  async deleteById(id: string): Promise<boolean> {
    return this.#io(() => Number(this.#statements.deleteById.run({ id }).changes) > 0);
  }

  /**
   * Free, expired or ours: taken at once. Held by a process on this host that no longer runs (killed mid-refresh):
   * taken at once too, by compare-and-swap on the dead holder's id (see lease-owner.ts), instead of waiting out the
   * TTL. The row's note survives a takeover, so the new holder can see what the dead one was doing.
   */
  async acquireLease(name: string, owner: string, ttlMs: number): Promise<boolean> {
    validateLease(name, owner, ttlMs);
    return this.#io(() => {
      const now = this.#now();
      const params = { name, owner, expires_at: now + ttlMs };
      if (Number(this.#statements.acquireLease.run({ ...params, now }).changes) === 1) return true;
      const holder = this.#statements.getLease.get({ name })?.owner;
      if (typeof holder !== "string" || !isLeaseOwnerGone(holder)) return false;
      return Number(this.#statements.takeLease.run({ ...params, dead: holder }).changes) === 1;
    });
  }

  async releaseLease(name: string, owner: string): Promise<void> {
    this.#io(() => this.#statements.releaseLease.run({ name, owner }));
  }

  async getLease(name: string): Promise<LeaseInfo | undefined> {
    return this.#io(() => {
      const row = this.#statements.getLease.get({ name });
      if (!row) return undefined;
      const lease: LeaseInfo = { owner: String(row.owner), expiresAt: Number(row.expires_at) };
      if (typeof row.note === "string") lease.note = row.note;
      return lease;
    });
  }

  async setLeaseNote(name: string, owner: string, note: string): Promise<boolean> {
    return this.#io(
      () => Number(this.#statements.setLeaseNote.run({ name, owner, note }).changes) === 1,
    );
  }

  /**
   * Re-seals every row not under the current key, in one transaction (all or nothing). Run after `rotateVaultKey`;
   * once it returns, the older keys are no longer needed by this file. Versions do not change: the content is the same.
   */
  async reencrypt(): Promise<{ rewritten: number }> {
    return this.#io(() => {
      this.#db.exec("BEGIN IMMEDIATE");
      try {
        const { kid } = this.#keyring.current;
        const rows = this.#statements.staleRows.all({ kid }) as Row[];
        for (const row of rows) {
          const record = this.#read(row)!;
          this.#statements.reseal.run({
            ...keyParams(record),
            ...sealTokens(this.#keyring, record, record.tokens),
          });
        }
        this.#db.exec("COMMIT");
        return { rewritten: rows.length };
      } catch (error) {
        if (this.#db.isTransaction) this.#db.exec("ROLLBACK");
        throw error;
      }
    });
  }

  async close(): Promise<void> {
    if (this.#db.isOpen) this.#db.close();
  }

  #read(row: unknown): CredentialRecord | undefined {
    if (row === undefined) return undefined;
    try {
      return rowToRecord(this.#keyring, row as Row);
    } catch (error) {
      if (
        !(
          error instanceof VaultKeyError &&
          error.code === "vault_key_unknown" &&
          this.#reloadKeyring
        )
      )
        throw error;
      this.#keyring = this.#reloadKeyring();
      return rowToRecord(this.#keyring, row as Row);
    }
  }

  /** Our own errors pass through; anything SQLite throws (locked past the timeout, disk full, closed) is vault_io. */
  #io<T>(fn: () => T): T {
    try {
      return fn();
    } catch (error) {
      if (error instanceof AgentAuthError) throw error;
      throw new VaultIoError(
        "vault_io",
        `The credential vault at ${this.path} failed (${(error as Error).message}). Retry; if it persists, check ` +
          "the disk and that no other program holds the file locked.",
        { cause: error },
      );
    }
  }
}

function keyParams(key: CredentialKey): { subject: string; issuer: string; resource: string } {
  return { subject: key.subject, issuer: key.issuer, resource: key.resource };
}

/** The record as written: built from the input and the row's new version, no decryption round trip. */
function stored(input: CredentialInput, row: Row): CredentialRecord {
  return copyRecord({
    ...input,
    id: credentialId(input),
    version: Number(row.version),
    createdAt: Number(row.created_at),
    updatedAt: Number(row.updated_at),
  });
}
