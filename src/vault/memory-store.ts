/** An in-memory CredentialStore with the same semantics as the SQLite one (minus persistence and encryption): for tests. */

import { isLeaseOwnerGone } from "./lease-owner.ts";
import {
  assertCredentialKey,
  compareKeys,
  copyRecord,
  credentialId,
  encodeKey,
  keyOf,
  matches,
  summarize,
  validateInput,
  validateLease,
} from "./record.ts";
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

export interface MemoryCredentialStoreOptions {
  /** The clock for timestamps and lease expiry; tests pass a fake one. */
  now?: () => number;
}

export class MemoryCredentialStore implements CredentialStore {
  readonly #records = new Map<string, CredentialRecord>();
  readonly #leases = new Map<string, LeaseInfo>();
  readonly #now: () => number;

  constructor(options: MemoryCredentialStoreOptions = {}) {
    this.#now = options.now ?? Date.now;
  }

  async get(key: CredentialKey): Promise<CredentialRecord | undefined> {
    assertCredentialKey(key);
    const record = this.#records.get(encodeKey(key));
    return record && copyRecord(record);
  }

  async getById(id: string): Promise<CredentialRecord | undefined> {
    for (const record of this.#records.values()) if (record.id === id) return copyRecord(record);
    return undefined;
  }

  async list(filter?: CredentialFilter): Promise<CredentialSummary[]> {
    return [...this.#records.values()]
      .filter((record) => matches(record, filter))
      .sort(compareKeys)
      .map(summarize);
  }

  /** Memory rows cannot be damaged: nothing is ever unreadable here. */
  async listReport(filter?: CredentialFilter): Promise<CredentialListing> {
    return { credentials: await this.list(filter), unreadable: [] };
  }

  async put(input: CredentialInput): Promise<CredentialRecord> {
    validateInput(input);
    return this.#write(input, this.#records.get(encodeKey(input)));
  }

  async compareAndSwap(
    expectedVersion: number,
    input: CredentialInput,
  ): Promise<CredentialRecord | undefined> {
    validateInput(input);
    const existing = this.#records.get(encodeKey(input));
    if (!existing || existing.version !== expectedVersion) return undefined;
    return this.#write(input, existing);
  }

  async delete(key: CredentialKey): Promise<boolean> {
    return this.#records.delete(encodeKey(key));
  }

  /** Parity with SqliteCredentialStore.deleteById. */
  async deleteById(id: string): Promise<boolean> {
    for (const [key, record] of this.#records)
      if (record.id === id) return this.#records.delete(key);
    return false;
  }

  async acquireLease(name: string, owner: string, ttlMs: number): Promise<boolean> {
    validateLease(name, owner, ttlMs);
    const now = this.#now();
    const lease = this.#leases.get(name);
    if (lease && lease.owner !== owner && lease.expiresAt > now && !isLeaseOwnerGone(lease.owner))
      return false;
    // Like the SQLite store: a takeover keeps the previous holder's note.
    this.#leases.set(name, { ...lease, owner, expiresAt: now + ttlMs });
    return true;
  }

  async releaseLease(name: string, owner: string): Promise<void> {
    if (this.#leases.get(name)?.owner === owner) this.#leases.delete(name);
  }

  async getLease(name: string): Promise<LeaseInfo | undefined> {
    const lease = this.#leases.get(name);
    return lease && { ...lease };
  }

  async setLeaseNote(name: string, owner: string, note: string): Promise<boolean> {
    const lease = this.#leases.get(name);
    if (lease?.owner !== owner) return false;
    lease.note = note;
    return true;
  }

  async close(): Promise<void> {}

  // Synchronous from read to write, so no other call can interleave: the in-process equivalent of one SQL statement.
  #write(input: CredentialInput, existing: CredentialRecord | undefined): CredentialRecord {
    const now = this.#now();
    const record = copyRecord({
      ...input,
      ...keyOf(input),
      id: credentialId(input),
      version: (existing?.version ?? 0) + 1,
      createdAt: existing?.createdAt ?? now,
      updatedAt: now,
    });
    this.#records.set(encodeKey(input), record);
    return copyRecord(record);
  }
}
