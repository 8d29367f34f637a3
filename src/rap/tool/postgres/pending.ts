/**
 * Pending authorizations on PostgreSQL, shared by every instance of a tool. A row is (SHA-256 of the `state`, the
 * sealed value, expiry). Consuming is one `DELETE … RETURNING`: of two instances receiving the same redirect, exactly
 * one gets the row; the other, like a replayed, forged or expired `state`, gets the same `state_invalid` as the
 * memory store. Expiry is judged by the database clock, so instances with skewed clocks agree.
 */

import { createHash } from "node:crypto";
import { generateRandomState } from "oauth4webapi";
import { Secret } from "../../../core/secret.ts";
import type { Queryable } from "../../../db/index.ts";
import { AuthorizationResponseError, type PendingStore } from "../../../oauth/index.ts";
import { type Keyring, openJson, type Sealed, sealJson } from "../../../vault/index.ts";
import type { PendingCallAuthorization } from "../options.ts";

/** The tool passes its `authorizationTimeoutMs`; this is only the fallback (the memory store's default). */
const DEFAULT_TTL_MS = 10 * 60_000;

export class PostgresPendingStore implements PendingStore<PendingCallAuthorization> {
  readonly #db: Queryable;
  readonly #keyring: Keyring;
  readonly #ttlMs: number;

  constructor(db: Queryable, keyring: Keyring, options: { ttlMs?: number } = {}) {
    this.#db = db;
    this.#keyring = keyring;
    this.#ttlMs = options.ttlMs ?? DEFAULT_TTL_MS;
  }

  async create(value: PendingCallAuthorization, ttlMs = this.#ttlMs): Promise<string> {
    const state = generateRandomState();
    const digest = sha256(state);
    const sealed = sealJson(this.#keyring, purpose(digest), toStored(value));
    // Rows a minute past expiry are swept here: nobody can use them, and no other job has to.
    await this.#db.query(
      "DELETE FROM rap_tool_pending WHERE expires_at < now() - interval '1 minute'",
    );
    await this.#db.query(
      `INSERT INTO rap_tool_pending (digest, sealed, expires_at)
       VALUES ($1, $2, now() + $3 * interval '1 millisecond')`,
      [digest, JSON.stringify(sealed), Math.max(1, Math.round(ttlMs))],
    );
    return state;
  }

  async consume(state: string | null | undefined): Promise<PendingCallAuthorization> {
    if (typeof state !== "string" || state.length === 0 || state.length > 512) throw refused();
    const digest = sha256(state);
    // One statement: the row is gone for everyone else the moment this instance has it (single use).
    const rows = await this.#db.query<{ sealed: Sealed; live: boolean }>(
      "DELETE FROM rap_tool_pending WHERE digest = $1 RETURNING sealed, expires_at > now() AS live",
      [digest],
    );
    const row = rows[0];
    if (!row?.live) throw refused();
    return fromStored(
      openJson(this.#keyring, purpose(digest), row.sealed, "A pending authorization"),
    );
  }

  async size(): Promise<number> {
    const rows = await this.#db.query<{ n: string }>(
      "SELECT count(*) AS n FROM rap_tool_pending WHERE expires_at > now()",
    );
    return Number(rows[0]?.n ?? 0);
  }
}

function refused(): AuthorizationResponseError {
  return new AuthorizationResponseError(
    "state_invalid",
    "The authorization response's state is unknown, already used or expired; start the sign-in again.",
  );
}

function sha256(value: string): Buffer {
  return createHash("sha256").update(value).digest();
}

/** The sealing purpose binds the ciphertext to its row: a value copied under another digest does not open. */
function purpose(digest: Buffer): string {
  return `rap_tool_pending:${digest.toString("hex")}`;
}

/** The verifier is a Secret (which serialises as "[redacted]"): revealed only into the sealed JSON. */
function toStored(value: PendingCallAuthorization): unknown {
  return {
    authorization: {
      ...value.authorization,
      codeVerifier: value.authorization.codeVerifier.reveal(),
    },
    call: value.call,
    ...(value.browser ? { browser: value.browser } : {}),
  };
}

function fromStored(stored: unknown): PendingCallAuthorization {
  const value = stored as {
    authorization?: Record<string, unknown>;
    call?: PendingCallAuthorization["call"];
    browser?: unknown;
  };
  const authorization = value?.authorization;
  if (
    !authorization ||
    typeof authorization.codeVerifier !== "string" ||
    typeof value.call?.attempt !== "string"
  ) {
    throw refused();
  }
  return {
    authorization: {
      ...(authorization as unknown as PendingCallAuthorization["authorization"]),
      codeVerifier: new Secret(authorization.codeVerifier),
    },
    call: value.call,
    ...(typeof value.browser === "string" ? { browser: value.browser } : {}),
  };
}
