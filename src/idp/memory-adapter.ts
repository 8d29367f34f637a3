/**
 * oidc-provider's storage for the embedded server: in memory, one store per server instance, expiring entries.
 * oidc-provider's own development adapter is a process-global 1,000-entry LRU, which silently evicts live refresh
 * tokens under load and shares state between servers in one process; tests and benchmarks need neither.
 *
 * Bounded (issue 8 §1.7): expired entries and the index rows pointing at them are swept every 1,000 writes or once a
 * minute; dynamic client registrations expire after a sliding TTL and are capped, least recently used evicted first.
 */

import type { Adapter, AdapterPayload } from "oidc-provider";

interface Entry {
  payload: AdapterPayload;
  expiresAt: number;
}

export interface MemoryStorageOptions {
  /** A dynamically registered client unused this long is forgotten. Default 24 h. */
  registrationTtlSeconds?: number;
  /** At most this many dynamically registered clients; the least recently used goes first. Default 1,000. */
  maxRegistrations?: number;
  /** Called after every write (upsert, consume, destroy, revoke): persistence schedules a snapshot from here. */
  onChange?: () => void;
}

/** One stored entry as persistence sees it: `expiresAt` in ms since the epoch, Infinity for never. */
export interface StoredEntry {
  key: string;
  payload: AdapterPayload;
  expiresAt: number;
}

export const DEFAULT_REGISTRATION_TTL_SECONDS = 24 * 3600;
export const DEFAULT_MAX_REGISTRATIONS = 1_000;
const SWEEP_EVERY_WRITES = 1_000;
const SWEEP_EVERY_MS = 60_000;
const CLIENT_MODEL = "Client";
const REGISTRATION_TOKEN_MODEL = "RegistrationAccessToken";

export class MemoryStorage {
  readonly entries = new Map<string, Entry>();
  /** grantId → entry keys, userCode → entry key, uid → entry key: pruned with the entries they point to. */
  readonly grants = new Map<string, Set<string>>();
  readonly userCodes = new Map<string, string>();
  readonly uids = new Map<string, string>();
  /** Registered client keys in least-recently-used order (a Map iterates in insertion order). */
  readonly clients = new Map<string, true>();
  /** A registered client's RFC 7592 registration access tokens: they go when the client goes. */
  readonly clientTokens = new Map<string, Set<string>>();
  readonly registrationTtlMs: number;
  readonly maxRegistrations: number;
  readonly onChange: () => void;
  #writes = 0;
  #lastSweep = Date.now();

  constructor(options: MemoryStorageOptions = {}) {
    this.registrationTtlMs =
      (options.registrationTtlSeconds ?? DEFAULT_REGISTRATION_TTL_SECONDS) * 1000;
    this.maxRegistrations = options.maxRegistrations ?? DEFAULT_MAX_REGISTRATIONS;
    this.onChange = options.onChange ?? (() => {});
  }

  /** Adds an entry to the lookup indexes its model and payload call for. */
  index(key: string, payload: AdapterPayload): void {
    if (key.startsWith(`${REGISTRATION_TOKEN_MODEL}:`) && typeof payload.clientId === "string") {
      const client = `${CLIENT_MODEL}:${payload.clientId}`;
      const tokens = this.clientTokens.get(client) ?? new Set<string>();
      tokens.add(key);
      this.clientTokens.set(client, tokens);
    }
    if (payload.grantId) {
      const members = this.grants.get(payload.grantId) ?? new Set<string>();
      members.add(key);
      this.grants.set(payload.grantId, members);
    }
    if (payload.userCode) this.userCodes.set(payload.userCode, key);
    if (payload.uid) this.uids.set(payload.uid, key);
  }

  /** The live entries, in insertion order (registered clients oldest-used first), for a snapshot. */
  live(now = Date.now()): StoredEntry[] {
    const out: StoredEntry[] = [];
    for (const [key, entry] of this.entries)
      if (entry.expiresAt > now)
        out.push({ key, payload: entry.payload, expiresAt: entry.expiresAt });
    return out;
  }

  /** Loads a snapshot into an empty storage: entries, indexes and the registrations' use order (TTLs kept). */
  restore(entries: readonly StoredEntry[], now = Date.now()): void {
    for (const { key, payload, expiresAt } of entries) {
      if (expiresAt <= now) continue;
      this.entries.set(key, { payload, expiresAt });
      this.index(key, payload);
      if (key.startsWith(`${CLIENT_MODEL}:`)) this.clients.set(key, true);
    }
    while (this.clients.size > this.maxRegistrations)
      this.remove(this.clients.keys().next().value as string);
  }

  /** Sweeps when enough writes or time have passed since the last sweep. */
  maybeSweep(now = Date.now()): void {
    if (++this.#writes % SWEEP_EVERY_WRITES === 0 || now - this.#lastSweep >= SWEEP_EVERY_MS)
      this.sweep(now);
  }

  sweep(now = Date.now()): void {
    this.#lastSweep = now;
    for (const [key, entry] of this.entries) if (entry.expiresAt <= now) this.remove(key);
    for (const [grantId, members] of this.grants) {
      for (const key of members) if (!this.entries.has(key)) members.delete(key);
      if (members.size === 0) this.grants.delete(grantId);
    }
    for (const index of [this.userCodes, this.uids])
      for (const [code, key] of index) if (!this.entries.has(key)) index.delete(code);
  }

  remove(key: string): void {
    this.entries.delete(key);
    if (!this.clients.delete(key)) return;
    for (const token of this.clientTokens.get(key) ?? []) this.entries.delete(token);
    this.clientTokens.delete(key);
  }

  /** A registered client was written or used: move it to the young end, renew its TTL, evict past the cap. */
  touchClient(key: string, now = Date.now()): void {
    const entry = this.entries.get(key);
    if (entry) entry.expiresAt = now + this.registrationTtlMs;
    this.clients.delete(key);
    this.clients.set(key, true);
    while (this.clients.size > this.maxRegistrations) {
      const oldest = this.clients.keys().next().value as string;
      this.remove(oldest);
    }
  }

  /** Live counts (expired entries are swept first): what tests and operators watch to see the bounds hold. */
  counts(): { entries: number; registrations: number; indexes: number } {
    this.sweep();
    let grantMembers = 0;
    for (const members of this.grants.values()) grantMembers += members.size;
    return {
      entries: this.entries.size,
      registrations: this.clients.size,
      indexes: grantMembers + this.userCodes.size + this.uids.size,
    };
  }
}

export function memoryAdapterFactory(storage: MemoryStorage): new (name: string) => Adapter {
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
      const now = Date.now();
      storage.maybeSweep(now);
      storage.entries.set(key, {
        payload,
        expiresAt: expiresIn ? now + expiresIn * 1000 : Number.POSITIVE_INFINITY,
      });
      // Static clients never come through the adapter; these are RFC 7591 registrations.
      if (this.#model === CLIENT_MODEL) storage.touchClient(key, now);
      storage.index(key, payload);
      storage.onChange();
    }

    async find(id: string): Promise<AdapterPayload | undefined> {
      return this.#findKey(this.#key(id));
    }

    #findKey(key: string): AdapterPayload | undefined {
      const entry = storage.entries.get(key);
      if (!entry) return undefined;
      if (entry.expiresAt <= Date.now()) {
        storage.remove(key);
        return undefined;
      }
      if (this.#model === CLIENT_MODEL) storage.touchClient(key);
      return entry.payload;
    }

    /** Index maps are shared by all models: only follow keys of this adapter's model. */
    #findIndexed(key: string | undefined): AdapterPayload | undefined {
      if (key === undefined || !key.startsWith(`${this.#model}:`)) return undefined;
      return this.#findKey(key);
    }

    async findByUserCode(userCode: string): Promise<AdapterPayload | undefined> {
      return this.#findIndexed(storage.userCodes.get(userCode));
    }

    async findByUid(uid: string): Promise<AdapterPayload | undefined> {
      return this.#findIndexed(storage.uids.get(uid));
    }

    async consume(id: string): Promise<void> {
      const entry = storage.entries.get(this.#key(id));
      if (entry) entry.payload.consumed = Math.floor(Date.now() / 1000);
      storage.onChange();
    }

    async destroy(id: string): Promise<void> {
      storage.remove(this.#key(id));
      storage.onChange();
    }

    async revokeByGrantId(grantId: string): Promise<void> {
      for (const key of storage.grants.get(grantId) ?? []) storage.remove(key);
      storage.grants.delete(grantId);
      storage.onChange();
    }
  };
}
