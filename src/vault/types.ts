/** The credential vault's contract: records keyed by (subject, issuer, resource), and the store every backend implements. */

import type { Secret } from "../core/secret.ts";

/** Who the credential is for, which authorization server (or provider) issued it, and for which resource. */
export interface CredentialKey {
  /** The user: an OIDC `sub`, a RAP `user_id`, or a local profile name. */
  subject: string;
  /** The issuer URL, or a provider name for non-OAuth credentials (API keys). */
  issuer: string;
  /** The RFC 8707 resource indicator; "" when the token is not bound to one. */
  resource: string;
}

export interface CredentialTokens {
  accessToken?: Secret;
  refreshToken?: Secret;
  idToken?: Secret;
  /** Usually "Bearer" (or "DPoP"). */
  tokenType?: string;
  /**
   * A confidential client's secret, sealed with the tokens: part of the credential's client registration, so a
   * later refresh, revocation or `agentauth token` needs no flags.
   */
  clientSecret?: Secret;
  /**
   * The RFC 9449 DPoP private key (a JWK, as JSON) the access and refresh tokens are bound to: sealed like a token,
   * since whoever holds it can use them.
   */
  dpopKey?: Secret;
}

/**
 * Which provider preset issued the credential and its non-secret options (`host` for GitHub Enterprise Server,
 * `tenant` for Microsoft, endpoints for a generic server), so the engine can rebuild the provider later.
 */
export interface ProviderRef {
  /** The preset's name: "github", "slack", "google", "generic", ... */
  name: string;
  /** String options only; never a secret (stored in the clear so listings can show them). */
  options?: Record<string, string>;
}

export interface AccountInfo {
  label?: string;
  name?: string;
  email?: string;
  organization?: string;
  /** The provider's handle for the account (GitHub `login`, Slack user id). */
  login?: string;
  avatarUrl?: string;
}

/** `login_required`: the refresh token was refused for good (invalid_grant); only a new login helps. */
export type CredentialStatus = "active" | "login_required";

/** What callers hand to `put`: everything but the fields the store assigns. */
export interface CredentialInput extends CredentialKey {
  /** The OAuth client the tokens were issued to: needed to refresh and to revoke them. */
  clientId: string;
  /** The provider preset that issued the tokens; absent for a plain discoverable server (the issuer says all). */
  provider?: ProviderRef;
  tokens: CredentialTokens;
  /** Access-token expiry, ms since the epoch; undefined when the server did not say. */
  expiresAt?: number;
  scopes: string[];
  account: AccountInfo;
  status: CredentialStatus;
}

export interface CredentialRecord extends CredentialInput {
  /** Stable, short, opaque id for CLIs (`agentauth vault revoke <id>`); derived from the key. */
  id: string;
  /** Bumped on every write; the basis of compare-and-swap. */
  version: number;
  createdAt: number;
  updatedAt: number;
}

/** A record without its secrets: what listing returns, so a listing can never print a token. */
export type CredentialSummary = Omit<CredentialRecord, "tokens"> & {
  has: { accessToken: boolean; refreshToken: boolean; idToken: boolean };
};

/** A row that exists but cannot be read (damaged columns): enough to name it and delete it. */
export interface UnreadableCredential {
  /** The id to pass to `deleteById` (`agentauth vault delete <id>`). */
  id: string;
  subject?: string;
  issuer?: string;
  resource?: string;
  /** The typed error's code (`vault_record_corrupt`) and its message, which says what to do. Never a secret. */
  code: string;
  message: string;
}

/** What `listReport` returns: the rows that read, and the ones that do not, so one bad row hides nothing else. */
export interface CredentialListing {
  credentials: CredentialSummary[];
  unreadable: UnreadableCredential[];
}

/** A lease as stored: who holds it, until when, and what the holder said it is doing (see `setLeaseNote`). */
export interface LeaseInfo {
  owner: string;
  expiresAt: number;
  note?: string;
}

export interface CredentialFilter {
  subject?: string;
  issuer?: string;
  resource?: string;
}

/**
 * Every backend (in-memory, SQLite, PostgreSQL later) implements this. All methods are async so a networked
 * backend fits; all writes are atomic.
 */
export interface CredentialStore {
  get(key: CredentialKey): Promise<CredentialRecord | undefined>;
  getById(id: string): Promise<CredentialRecord | undefined>;
  /** Summaries of the rows that read; a damaged row is left out rather than failing the whole listing. */
  list(filter?: CredentialFilter): Promise<CredentialSummary[]>;
  /** Like `list`, plus the rows that cannot be read, each with its id and what to do. */
  listReport(filter?: CredentialFilter): Promise<CredentialListing>;
  /** Insert or replace the record for its key; returns the stored record (new version). */
  put(input: CredentialInput): Promise<CredentialRecord>;
  /**
   * Replace the record only if its version is still `expectedVersion`; returns the new record, or undefined
   * when someone else wrote first (or the record is gone).
   */
  compareAndSwap(
    expectedVersion: number,
    input: CredentialInput,
  ): Promise<CredentialRecord | undefined>;
  delete(key: CredentialKey): Promise<boolean>;
  /**
   * A named, expiring, exclusive lease shared by every process using the same store: the cross-process half of
   * single-flight refresh. Returns true when `owner` now holds it (re-acquiring your own lease extends it).
   */
  acquireLease(name: string, owner: string, ttlMs: number): Promise<boolean>;
  releaseLease(name: string, owner: string): Promise<void>;
  /** The lease's current row, expired or not; undefined when nobody holds it (it was released or never taken). */
  getLease?(name: string): Promise<LeaseInfo | undefined>;
  /**
   * Records, on the lease row, what its holder is about to do (a refresh intent). Only the holder can write it; a
   * holder that dies leaves it behind, so whoever takes the lease next can tell an interrupted operation.
   * Returns false when `owner` does not hold the lease.
   */
  setLeaseNote?(name: string, owner: string, note: string): Promise<boolean>;
  /** Deletes by id without decrypting the row, so a record that no longer opens can still be removed. */
  deleteById(id: string): Promise<boolean>;
  close(): Promise<void>;
}
