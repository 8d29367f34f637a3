/** The default vault: one SQLite file shared by every agentauth process on the machine, tokens sealed with AES-256-GCM. */

import type { DatabaseSync, StatementSync } from "node:sqlite";
import { AgentAuthError } from "../core/errors.ts";
import { VaultCorruptError, VaultIoError } from "./errors.ts";
import type { Keyring } from "./keyring.ts";
import { isLeaseOwnerGone } from "./lease-owner.ts";
import { OpenedTokens } from "./opened-tokens.ts";
import { assertCredentialKey, credentialId, validateInput, validateLease } from "./record.ts";
import { sealTokens } from "./seal.ts";
import {
  inputParams,
  type Row,
  rowToRecordReloading,
  rowToSummary,
  stored,
  unreadable,
} from "./sqlite-rows.ts";
import { openVaultDatabase } from "./sqlite-schema.ts";
import { SQL } from "./sqlite-sql.ts";
import type {
  CredentialFilter,
  CredentialInput,
  CredentialKey,
  CredentialListing,
  CredentialRecord,
  CredentialStore,
  CredentialSummary,
  LeaseInfo,
} from "./types.ts";

export interface SqliteCredentialStoreOptions {
  /** The database file; created (owner-only) if missing. */
  path: string;
  /** The keys; a function is called on first use, so a store that only lists never needs (or creates) a key. */
  keyring: Keyring | (() => Keyring);
  /**
   * Open an existing file read-only (SQLite's read-only mode: no schema set-up, no writes). For commands that only
   * look; every write fails with vault_io.
   */
  readOnly?: boolean;
  /**
   * Called once when a row names a key id the keyring lacks: another process may have rotated the key file since
   * this one started. Without it, such rows fail with `vault_key_unknown`.
   */
  reloadKeyring?: () => Keyring;
  /** The clock for timestamps and lease expiry; tests pass a fake one. */
  now?: () => number;
}

export class SqliteCredentialStore implements CredentialStore {
  readonly path: string;
  readonly #db: DatabaseSync;
  readonly #statements: Partial<Record<keyof typeof SQL, StatementSync>> = {};
  readonly #reloadKeyring: (() => Keyring) | undefined;
  readonly #now: () => number;
  /** Tokens already opened, reused while a row's sealed bytes stay the same (see opened-tokens.ts). */
  readonly #opened = new OpenedTokens();
  #keyring: Keyring | (() => Keyring);

  constructor(options: SqliteCredentialStoreOptions) {
    this.path = options.path;
    this.#keyring = options.keyring;
    this.#reloadKeyring = options.reloadKeyring;
    this.#now = options.now ?? Date.now;
    this.#db = openVaultDatabase(options.path, { readOnly: options.readOnly ?? false });
    try {
      // Read-only stores prepare the rest on first use (an older file may lack a column only writes touch).
      const names = options.readOnly
        ? (["list"] as const)
        : (Object.keys(SQL) as (keyof typeof SQL)[]);
      for (const name of names) this.#statement(name);
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
  }

  /** Where the vault is (the same as `path`; the PostgreSQL store's is its URL without the password). */
  get location(): string {
    return this.path;
  }

  /** The key id new writes are sealed with. */
  get currentKid(): string {
    return this.#keys().currentKid;
  }

  async get(key: CredentialKey): Promise<CredentialRecord | undefined> {
    assertCredentialKey(key);
    return this.#io(() =>
      this.#read(this.#statement("get").get(key.subject, key.issuer, key.resource)),
    );
  }

  async getById(id: string): Promise<CredentialRecord | undefined> {
    return this.#io(() => this.#read(this.#statement("getById").get({ id })));
  }

  /** Every row that reads; a row whose columns are damaged is left out (see `listReport`, which names it). */
  async list(filter: CredentialFilter = {}): Promise<CredentialSummary[]> {
    return (await this.listReport(filter)).credentials;
  }

  async listReport(filter: CredentialFilter = {}): Promise<CredentialListing> {
    return this.#io(() => {
      const rows = this.#statement("list").all({
        subject: filter.subject ?? null,
        issuer: filter.issuer ?? null,
        resource: filter.resource ?? null,
      });
      const listing: CredentialListing = { credentials: [], unreadable: [] };
      for (const row of rows) {
        try {
          listing.credentials.push(rowToSummary(row as Row));
        } catch (error) {
          if (!(error instanceof VaultCorruptError)) throw error;
          listing.unreadable.push(unreadable(row as Row, error));
        }
      }
      return listing;
    });
  }

  async put(input: CredentialInput): Promise<CredentialRecord> {
    validateInput(input);
    this.#opened.forget(credentialId(input));
    return this.#io(() => {
      const row = this.#statement("put").get(inputParams(this.#keys(), input, this.#now()));
      return stored(input, row as Row);
    });
  }

  async compareAndSwap(
    expectedVersion: number,
    input: CredentialInput,
  ): Promise<CredentialRecord | undefined> {
    validateInput(input);
    this.#opened.forget(credentialId(input));
    return this.#io(() => {
      // The id is fixed by the key, so the swap leaves it (and its unique index) untouched.
      const { id: _id, ...params } = inputParams(this.#keys(), input, this.#now());
      const row = this.#statement("compareAndSwap").get({ ...params, expected: expectedVersion });
      return row ? stored(input, row as Row) : undefined;
    });
  }

  async delete(key: CredentialKey): Promise<boolean> {
    this.#opened.forget(credentialId(key));
    return this.#io(() => Number(this.#statement("delete").run(keyParams(key)).changes) > 0);
  }

  /** Deletes by id without reading the row, so a record that no longer decodes can be removed. */
  async deleteById(id: string): Promise<boolean> {
    this.#opened.forget(id);
    return this.#io(() => Number(this.#statement("deleteById").run({ id }).changes) > 0);
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
      if (Number(this.#statement("acquireLease").run({ ...params, now }).changes) === 1)
        return true;
      const holder = this.#statement("getLease").get({ name })?.owner;
      if (typeof holder !== "string" || !isLeaseOwnerGone(holder)) return false;
      return Number(this.#statement("takeLease").run({ ...params, dead: holder }).changes) === 1;
    });
  }

  async releaseLease(name: string, owner: string): Promise<void> {
    this.#io(() => this.#statement("releaseLease").run({ name, owner }));
  }

  async getLease(name: string): Promise<LeaseInfo | undefined> {
    return this.#io(() => {
      const row = this.#statement("getLease").get({ name });
      if (!row) return undefined;
      const lease: LeaseInfo = { owner: String(row.owner), expiresAt: Number(row.expires_at) };
      if (typeof row.note === "string") lease.note = row.note;
      return lease;
    });
  }

  async setLeaseNote(name: string, owner: string, note: string): Promise<boolean> {
    return this.#io(
      () => Number(this.#statement("setLeaseNote").run({ name, owner, note }).changes) === 1,
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
        const { kid } = this.#keys().current;
        const rows = this.#statement("staleRows").all({ kid }) as Row[];
        for (const row of rows) {
          const record = this.#read(row)!;
          this.#statement("reseal").run({
            ...keyParams(record),
            ...sealTokens(this.#keys(), record, record.tokens),
          });
        }
        this.#db.exec("COMMIT");
        this.#opened.clear();
        return { rewritten: rows.length };
      } catch (error) {
        if (this.#db.isTransaction) this.#db.exec("ROLLBACK");
        throw error;
      }
    });
  }

  async close(): Promise<void> {
    this.#opened.clear();
    if (this.#db.isOpen) this.#db.close();
  }

  #read(row: unknown): CredentialRecord | undefined {
    if (row === undefined) return undefined;
    const reload = this.#reloadKeyring;
    return rowToRecordReloading(
      () => this.#keys(),
      row as Row,
      this.#opened,
      reload &&
        (() => {
          this.#keyring = reload();
        }),
    );
  }

  #keys(): Keyring {
    if (typeof this.#keyring === "function") this.#keyring = this.#keyring();
    return this.#keyring;
  }

  #statement(name: keyof typeof SQL): StatementSync {
    let statement = this.#statements[name];
    if (!statement) {
      statement = this.#db.prepare(SQL[name]);
      this.#statements[name] = statement;
    }
    return statement;
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
