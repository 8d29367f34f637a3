/**
 * Consent links on PostgreSQL, shared by every instance: the page a link shows, and its Continue/Cancel form, work
 * at whichever instance the browser reaches, including after the instance that made the link is gone. A row is
 * (SHA-256 of the link id, the sealed entry with its CSRF token and the provider's authorization URL, expiry); the
 * link id itself is never stored. Taking a link is one `DELETE … RETURNING`, so it is used once.
 */

import { createHash, randomBytes } from "node:crypto";
import type { Queryable } from "../../../db/index.ts";
import { type Keyring, openJson, type Sealed, sealJson } from "../../../vault/index.ts";
import { type ConsentEntry, type ConsentRequest, sameSecret } from "../consent.ts";
import type { ConsentStore } from "../state.ts";

export class PostgresConsents implements ConsentStore {
  readonly #db: Queryable;
  readonly #keyring: Keyring;
  readonly #ttlMs: number;

  constructor(db: Queryable, keyring: Keyring, ttlMs: number) {
    this.#db = db;
    this.#keyring = keyring;
    this.#ttlMs = ttlMs;
  }

  async create(request: ConsentRequest): Promise<string> {
    const id = randomBytes(32).toString("base64url");
    const digest = sha256(id);
    const entry = {
      ...request,
      authorizationUrl: request.authorizationUrl.href,
      csrf: randomBytes(32).toString("base64url"),
      expiresAt: Date.now() + this.#ttlMs,
    };
    await this.#db.query("DELETE FROM rap_tool_consent WHERE expires_at < now()");
    await this.#db.query(
      `INSERT INTO rap_tool_consent (digest, sealed, expires_at)
       VALUES ($1, $2, now() + $3 * interval '1 millisecond')`,
      [digest, JSON.stringify(sealJson(this.#keyring, purpose(digest), entry)), this.#ttlMs],
    );
    return id;
  }

  async peek(id: string | null): Promise<ConsentEntry | undefined> {
    if (id === null || id.length > 100) return undefined;
    const digest = sha256(id);
    const rows = await this.#db.query<{ sealed: Sealed }>(
      "SELECT sealed FROM rap_tool_consent WHERE digest = $1 AND expires_at > now()",
      [digest],
    );
    return rows[0] ? this.#open(digest, rows[0].sealed) : undefined;
  }

  async take(
    id: string | null,
    field: string | null,
    cookie: string | undefined,
  ): Promise<ConsentEntry | undefined> {
    const entry = await this.peek(id);
    if (!entry || !sameSecret(field, entry.csrf) || !sameSecret(cookie ?? null, entry.csrf))
      return undefined;
    // Only the instance whose DELETE removes the row goes on: a form sent twice (two tabs, two instances) acts once.
    const rows = await this.#db.query(
      "DELETE FROM rap_tool_consent WHERE digest = $1 AND expires_at > now() RETURNING 1",
      [sha256(id as string)],
    );
    return rows.length > 0 ? entry : undefined;
  }

  #open(digest: Buffer, sealed: Sealed): ConsentEntry {
    const value = openJson(this.#keyring, purpose(digest), sealed, "A consent link") as Omit<
      ConsentEntry,
      "authorizationUrl"
    > & { authorizationUrl: string };
    return { ...value, authorizationUrl: new URL(value.authorizationUrl) };
  }
}

function sha256(value: string): Buffer {
  return createHash("sha256").update(value).digest();
}

function purpose(digest: Buffer): string {
  return `rap_tool_consent:${digest.toString("hex")}`;
}
