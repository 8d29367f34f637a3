/**
 * The vault on PostgreSQL: every agentauth process on every machine sharing one database shares its credentials.
 * Tokens are sealed by agentauth exactly as in SQLite (AES-256-GCM, a fresh nonce per write, associated data =
 * subject, issuer, resource and key id; the key id stored per row), never left to the database.
 *
 * Construction is synchronous and touches nothing: the pool opens and the "vault" migrations run on the first
 * call (one shared promise; a failed open is retried by the next call). Every write is one statement: `put` an
 * INSERT … ON CONFLICT DO UPDATE, `compareAndSwap` an UPDATE … WHERE version = $expected. Leases are advisory
 * locks the server releases when their holder's connection dies (leases.ts).
 *
 * Errors: our typed vault errors (vault_record_corrupt, vault_key_*, vault_input_invalid) as with SQLite; a
 * database failure is the DatabaseError from src/db (database_unavailable, database_failed,
 * database_schema_unsupported, database_url_invalid), whose message names the URL without its password.
 */

import {
  type Database,
  DatabaseError,
  isPostgresUrl,
  openDatabase,
  redactDatabaseUrl,
} from "../../db/index.ts";
import { VaultCorruptError, VaultKeyError } from "../errors.ts";
import type { Keyring } from "../keyring.ts";
import { OpenedTokens } from "../opened-tokens.ts";
import {
  assertCredentialKey,
  credentialId,
  encodeKey,
  validateInput,
  validateLease,
} from "../record.ts";
import { sealTokens } from "../seal.ts";
import {
  type Row,
  rowToRecordReloading,
  rowToSummary,
  stored,
  unreadable,
} from "../sqlite-rows.ts";
import type {
  CredentialFilter,
  CredentialInput,
  CredentialKey,
  CredentialListing,
  CredentialRecord,
  CredentialStore,
  CredentialSummary,
  LeaseInfo,
} from "../types.ts";
import { RecordCache } from "./cache.ts";
import { waitForCaches } from "./cache-barrier.ts";
import { CacheListener } from "./cache-listener.ts";
import { PostgresLeases } from "./leases.ts";
import { fromPg, writeParams } from "./rows.ts";
import { VAULT_COMPONENT, VAULT_MIGRATIONS } from "./schema.ts";
import { PG_SQL } from "./sql.ts";

export interface PostgresCredentialStoreOptions {
  /** postgres://user@host:port/database; the password may be in it, or in PGPASSWORD. Never printed. */
  url: string;
  /** The keys; a function is called on first use, so a store that only lists never needs a key. */
  keyring: Keyring | (() => Keyring);
  /** Called once when a row names a key id the keyring lacks (another instance rotated first). */
  reloadKeyring?: () => Keyring;
  /** The clock for record timestamps; tests pass a fake one. Lease expiry is the database's clock (see `leaseClock`). */
  now?: () => number;
  /**
   * Tests only: judge lease expiry by this clock instead of the database's. Every instance sharing the database
   * must then use the same one; in production the database's clock is the one all instances agree on.
   */
  leaseClock?: () => number;
  /** Connections for reads and writes (default 10). */
  poolSize?: number;
  /** Connections for held leases: one per credential being refreshed at once in this process (default 16). */
  sessionPoolSize?: number;
  /**
   * Keep the rows `get`/`getById` read in memory and serve them from there while a dedicated connection hears every
   * change (default true; see cache-listener.ts). Off: every read is a round trip. Either way this store's writes
   * wait until other instances' caches dropped what they replaced, so instances with and without a cache can share
   * the database.
   */
  cache?: boolean;
  /** Tests only: the cache registration's lifetime (default CACHE_LEASE_MS). */
  cacheLeaseMs?: number;
}

export class PostgresCredentialStore implements CredentialStore {
  /** The database URL without its password: where this vault is, for messages. */
  readonly location: string;
  readonly #url: string;
  readonly #reloadKeyring: (() => Keyring) | undefined;
  readonly #now: () => number;
  readonly #pools: { poolSize?: number; sessionPoolSize?: number };
  readonly #leases: PostgresLeases;
  /** Tokens already opened, reused while a row's sealed bytes stay the same (see ../opened-tokens.ts). */
  readonly #opened = new OpenedTokens();
  readonly #cache: RecordCache | undefined;
  readonly #listener: CacheListener | undefined;
  #keyring: Keyring | (() => Keyring);
  #ready: Promise<Database> | undefined;
  #closed = false;
  /** The current key id last checked against (and recorded in) the database's vault_keys. */
  #checkedKid: string | undefined;

  constructor(options: PostgresCredentialStoreOptions) {
    if (!isPostgresUrl(options.url)) {
      throw new DatabaseError(
        "database_url_invalid",
        "The vault's database URL must start with postgres:// or postgresql:// " +
          "(for example postgres://agentauth@db.example:5432/agentauth).",
      );
    }
    this.#url = options.url.trim();
    this.location = redactDatabaseUrl(this.#url);
    this.#keyring = options.keyring;
    this.#reloadKeyring = options.reloadKeyring;
    this.#now = options.now ?? Date.now;
    this.#pools = {
      ...(options.poolSize ? { poolSize: options.poolSize } : {}),
      ...(options.sessionPoolSize ? { sessionPoolSize: options.sessionPoolSize } : {}),
    };
    this.#leases = new PostgresLeases(() => this.#db(), options.leaseClock);
    if (options.cache !== false) {
      const cache = new RecordCache();
      this.#cache = cache;
      this.#listener = new CacheListener({
        db: () => this.#db(),
        cache,
        onChange: (id) => (id === undefined ? this.#opened.clear() : this.#opened.forget(id)),
        leaseMs: options.cacheLeaseMs,
      });
    }
  }

  /**
   * The record cache's state, for diagnostics and tests: whether it serves now, and how many reads it answered and
   * sent to the database. Undefined when the store was opened with `cache: false`.
   */
  get cacheStatus():
    | { serving: boolean; entries: number; hits: number; misses: number; restarts: number }
    | undefined {
    const cache = this.#cache;
    if (!cache) return undefined;
    return {
      serving: cache.serving,
      entries: cache.size,
      hits: cache.hits,
      misses: cache.misses,
      restarts: this.#listener?.restarts ?? 0,
    };
  }

  /** Same as `location`: what SQLite callers know as the vault's path. */
  get path(): string {
    return this.location;
  }

  /** The key id new writes are sealed with. */
  get currentKid(): string {
    return this.#keys().currentKid;
  }

  async get(key: CredentialKey): Promise<CredentialRecord | undefined> {
    assertCredentialKey(key);
    return this.#cachedRead(encodeKey(key), PG_SQL.get, [key.subject, key.issuer, key.resource]);
  }

  async getById(id: string): Promise<CredentialRecord | undefined> {
    return this.#cachedRead(`#${id}`, PG_SQL.getById, [id]);
  }

  async list(filter: CredentialFilter = {}): Promise<CredentialSummary[]> {
    return (await this.listReport(filter)).credentials;
  }

  async listReport(filter: CredentialFilter = {}): Promise<CredentialListing> {
    const rows = await (await this.#db()).query(PG_SQL.list, [
      filter.subject ?? null,
      filter.issuer ?? null,
      filter.resource ?? null,
    ]);
    const listing: CredentialListing = { credentials: [], unreadable: [] };
    for (const raw of rows) {
      const row = fromPg(raw);
      try {
        listing.credentials.push(rowToSummary(row));
      } catch (error) {
        if (!(error instanceof VaultCorruptError)) throw error;
        listing.unreadable.push(unreadable(row, error));
      }
    }
    return listing;
  }

  async put(input: CredentialInput): Promise<CredentialRecord> {
    validateInput(input);
    const db = await this.#db();
    const keys = await this.#writeKeys(db);
    const rows = await db.query(PG_SQL.put, writeParams(keys, input, this.#now()));
    await this.#changed(db, credentialId(input));
    return stored(input, rows[0] as Row);
  }

  async compareAndSwap(
    expectedVersion: number,
    input: CredentialInput,
  ): Promise<CredentialRecord | undefined> {
    validateInput(input);
    const db = await this.#db();
    const keys = await this.#writeKeys(db);
    const params = [...writeParams(keys, input, this.#now()), expectedVersion];
    const row = (await db.query(PG_SQL.compareAndSwap, params))[0];
    if (!row) return undefined;
    await this.#changed(db, credentialId(input));
    return stored(input, row);
  }

  async delete(key: CredentialKey): Promise<boolean> {
    const db = await this.#db();
    const rows = await db.query(`${PG_SQL.delete} RETURNING id`, [
      key.subject,
      key.issuer,
      key.resource,
    ]);
    if (rows.length === 0) return false;
    await this.#changed(db, String(rows[0]?.id));
    return true;
  }

  /** Deletes by id without reading the row, so a record that no longer decodes can be removed. */
  async deleteById(id: string): Promise<boolean> {
    const db = await this.#db();
    if ((await db.query(`${PG_SQL.deleteById} RETURNING id`, [id])).length === 0) return false;
    await this.#changed(db, id);
    return true;
  }

  /** See leases.ts: an advisory lock the server releases if this process dies, plus a row with a TTL. */
  async acquireLease(name: string, owner: string, ttlMs: number): Promise<boolean> {
    validateLease(name, owner, ttlMs);
    this.#open();
    return this.#leases.acquire(name, owner, ttlMs);
  }

  async releaseLease(name: string, owner: string): Promise<void> {
    if (this.#closed) return;
    await this.#leases.release(name, owner);
  }

  async getLease(name: string): Promise<LeaseInfo | undefined> {
    this.#open();
    return this.#leases.get(name);
  }

  async setLeaseNote(name: string, owner: string, note: string): Promise<boolean> {
    this.#open();
    return this.#leases.setNote(name, owner, note);
  }

  /**
   * Re-seals every row not under the current key, in one transaction (all or nothing; the rows are locked FOR
   * UPDATE meanwhile, so a concurrent write waits rather than being lost). Versions do not change: the content is
   * the same. Every instance must already accept the current key before this runs (see README.md, rotation).
   */
  async reencrypt(): Promise<{ rewritten: number }> {
    const db = await this.#db();
    await this.#writeKeys(db);
    const result = await db.transaction(async (client) => {
      const keys = this.#keys();
      const rows = await client.query(PG_SQL.staleRows, [keys.currentKid]);
      for (const row of rows) {
        const record = this.#read(fromPg(row))!;
        const sealed = sealTokens(this.#keys(), record, record.tokens);
        await client.query(PG_SQL.reseal, [
          record.subject,
          record.issuer,
          record.resource,
          sealed.kid,
          sealed.nonce,
          sealed.ciphertext,
        ]);
      }
      return { rewritten: rows.length };
    });
    if (result.rewritten > 0) await this.#changed(db, undefined);
    return result;
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    // Before the store refuses calls: an acquire in flight still needs the database to finish (or fail).
    await this.#leases.close();
    await this.#listener?.close();
    this.#opened.clear();
    this.#closed = true;
    const ready = this.#ready;
    this.#ready = undefined;
    const db = await ready?.catch(() => undefined);
    await db?.close();
  }

  /** The database, opened (and its schema migrated) on first use; a failed open is retried by the next call. */
  #db(): Promise<Database> {
    this.#open();
    if (!this.#ready) {
      const opening = openDatabase(this.#url, {
        component: VAULT_COMPONENT,
        migrations: VAULT_MIGRATIONS,
        ...this.#pools,
      });
      this.#ready = opening;
      opening.catch(() => {
        if (this.#ready === opening) this.#ready = undefined;
      });
    }
    return this.#ready;
  }

  #open(): void {
    if (this.#closed) {
      throw new DatabaseError(
        "database_failed",
        `The vault on ${this.location} was closed; open it again to use it.`,
      );
    }
  }

  /**
   * A read by key or id: from the cache when it serves and holds the row, else from the database, and a row that read
   * cleanly is kept (unless a change was heard meanwhile; see cache.ts). Either way the row goes through the same
   * checks and opening as any read.
   */
  async #cachedRead(
    cacheKey: string,
    sql: string,
    params: unknown[],
  ): Promise<CredentialRecord | undefined> {
    const cache = this.#cache;
    if (cache) {
      this.#listener?.start();
      const kept = cache.lookup(cacheKey);
      if (kept) return this.#read(kept);
    }
    const ticket = cache?.ticket();
    const raw = (await (await this.#db()).query(sql, params))[0];
    const row = raw === undefined ? undefined : fromPg(raw);
    const record = this.#read(row);
    if (cache && ticket && row && record) cache.fill(ticket, cacheKey, record.id, row);
    return record;
  }

  /**
   * After a change to record `id` (undefined: any) returned from the database: this store's own copy goes at once,
   * then the call waits until no other instance's cache can serve what the change replaced (cache-barrier.ts).
   */
  async #changed(db: Database, id: string | undefined): Promise<void> {
    if (id === undefined) {
      this.#cache?.invalidateAll();
      this.#opened.clear();
    } else {
      this.#cache?.invalidate(id);
      this.#opened.forget(id);
    }
    await waitForCaches(db, { self: this.#listener?.instanceId });
  }

  #read(row: Row | undefined): CredentialRecord | undefined {
    if (row === undefined) return undefined;
    const reload = this.#reloadKeyring;
    return rowToRecordReloading(
      () => this.#keys(),
      row,
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

  /**
   * The keyring to seal with, once it is known to match the shared vault. Each instance of a PostgreSQL vault must
   * seal with a key the others can open; an instance that made a key of its own (no AGENTAUTH_VAULT_KEY, a fresh
   * home's vault.key) would otherwise write rows nobody else reads, and read none of theirs. So the database records
   * every current key id it was written with, and a keyring that shares none of them refuses to write. During a
   * rotation the new key arrives as current beside the old (recorded) one, so it is accepted and recorded.
   */
  async #writeKeys(db: Database): Promise<Keyring> {
    let keys = this.#keys();
    if (this.#checkedKid === keys.currentKid) return keys;
    const known = (await db.query(PG_SQL.keyIds)).map((row) => String(row.kid));
    if (known.length > 0 && !keys.kids.some((kid) => known.includes(kid)) && this.#reloadKeyring) {
      // Another process on this machine may have rotated the key file since this one read it.
      this.#keyring = this.#reloadKeyring();
      keys = this.#keys();
    }
    if (known.length > 0 && !keys.kids.some((kid) => known.includes(kid))) {
      throw new VaultKeyError(
        "vault_key_mismatch",
        `The vault on ${this.location} is sealed with key ${known.slice(0, 3).join(", ")}` +
          `${known.length > 3 ? ", …" : ""}, and this process's keys (${keys.kids.join(", ")}) include none of ` +
          "them: what it wrote, the other instances could not read. Give every instance the same " +
          "AGENTAUTH_VAULT_KEY (see docs/deploy.md); a vault.key this process created on its own can be deleted.",
      );
    }
    await db.query(PG_SQL.recordKeyId, [keys.currentKid, this.#now()]);
    this.#checkedKid = keys.currentKid;
    return keys;
  }
}
