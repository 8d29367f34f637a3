/**
 * oidc-provider's storage for the embedded server: in memory, one store per server instance, expiring entries.
 * oidc-provider's own development adapter is a process-global 1,000-entry LRU, which silently evicts live refresh
 * tokens under load and shares state between servers in one process; tests and benchmarks need neither.
 */

import type { Adapter, AdapterPayload } from "oidc-provider";

interface Entry {
  payload: AdapterPayload;
  expiresAt: number;
}

export class MemoryStorage {
  readonly entries = new Map<string, Entry>();
  readonly grants = new Map<string, Set<string>>();
  readonly userCodes = new Map<string, string>();
  readonly uids = new Map<string, string>();

  sweep(now = Date.now()): void {
    for (const [key, entry] of this.entries) if (entry.expiresAt <= now) this.entries.delete(key);
  }
}

export function memoryAdapterFactory(storage: MemoryStorage): new (name: string) => Adapter {
  let writes = 0;
  return class MemoryAdapter implements Adapter {
    readonly #model: string;

    constructor(model: string) {
      this.#model = model;
    }

    #key(id: string): string {
      return `${this.#model}:${id}`;
    }

    async upsert(id: string, payload: AdapterPayload, expiresIn: number): Promise<void> {
      const key = this.#key(id);
      if (++writes % 1000 === 0) storage.sweep();
      storage.entries.set(key, {
        payload,
        expiresAt: expiresIn ? Date.now() + expiresIn * 1000 : Number.POSITIVE_INFINITY,
      });
      if (payload.grantId) {
        const members = storage.grants.get(payload.grantId) ?? new Set<string>();
        members.add(key);
        storage.grants.set(payload.grantId, members);
      }
      if (payload.userCode) storage.userCodes.set(payload.userCode, id);
      if (payload.uid) storage.uids.set(payload.uid, id);
    }

    async find(id: string): Promise<AdapterPayload | undefined> {
      const entry = storage.entries.get(this.#key(id));
      if (!entry) return undefined;
      if (entry.expiresAt <= Date.now()) {
        storage.entries.delete(this.#key(id));
        return undefined;
      }
      return entry.payload;
    }

    async findByUserCode(userCode: string): Promise<AdapterPayload | undefined> {
      const id = storage.userCodes.get(userCode);
      return id === undefined ? undefined : this.find(id);
    }

    async findByUid(uid: string): Promise<AdapterPayload | undefined> {
      const id = storage.uids.get(uid);
      return id === undefined ? undefined : this.find(id);
    }

    async consume(id: string): Promise<void> {
      const entry = storage.entries.get(this.#key(id));
      if (entry) entry.payload.consumed = Math.floor(Date.now() / 1000);
    }

    async destroy(id: string): Promise<void> {
      storage.entries.delete(this.#key(id));
    }

    async revokeByGrantId(grantId: string): Promise<void> {
      for (const key of storage.grants.get(grantId) ?? []) storage.entries.delete(key);
      storage.grants.delete(grantId);
    }
  };
}
