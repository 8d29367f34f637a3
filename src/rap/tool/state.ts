/**
 * Where a tool keeps what must outlive its process: pending authorizations (a `state` → the PKCE half and the call
 * to resume) and an outbox of callbacks not yet delivered. Without one, both live in memory (one instance, lost on
 * restart); with one shared by several instances (PostgreSQL: `openPostgresToolState`), any instance can finish a
 * sign-in another one started, and a result is delivered even if the process that produced it was killed.
 */

import type { PendingStore } from "../../oauth/index.ts";
import type { ConsentEntry, ConsentRequest } from "./consent.ts";
import type { PendingCallAuthorization } from "./options.ts";
import type { ReplayLedger } from "./replay-ledger.ts";

/** One undelivered callback as the outbox hands it out for a delivery attempt. */
export interface OutboxMessage {
  /** Stable for the message's whole life: sent as `Idempotency-Key` on every attempt, from any instance. */
  id: string;
  groupId: string;
  callbackUrl: string;
  /** The RAP message (`tool_result` or `oauth`), POSTed as JSON. */
  body: unknown;
  /** Attempts so far, this one included. */
  attempts: number;
  /** When it was written (epoch ms), for the total retry budget. */
  createdAt: number;
}

/** A row claimed that this instance could not open (a key it lacks, or damage): reported by id, never content. */
export interface UnreadableOutboxRow {
  id: string;
  groupId: string;
  /** How many times a claim found it unreadable, this one included. */
  unreadable: number;
  /** True when it was deleted (the bound was reached); otherwise it is released for an instance with the key. */
  dropped: boolean;
  /** The error's stable code (e.g. vault_key_unknown, vault_decrypt_failed). */
  code: string;
}

export interface CallbackOutbox {
  /**
   * Writes a message before its first delivery attempt; returns its id, or undefined when the call (`callId`, the
   * RAP `id`) or its thread was cancelled meanwhile (nothing is sent after a cancellation).
   */
  add(message: {
    /** The message's id, made by the caller so that a fallback delivery can use the same key; default: a new one. */
    id?: string;
    groupId: string;
    callId: string;
    callbackUrl: string;
    body: unknown;
  }): Promise<string | undefined>;
  /**
   * Claims up to `limit` due messages for `claimMs`: only the oldest undelivered message of each group (the runtime
   * must see a thread's messages in order), each claimed by one instance at a time. A claim that is not settled
   * (the instance died) expires and the message is due again. A row this instance cannot open does not hold back
   * the others: it is reported to `onUnreadable`, released for another instance (or deleted after a bounded number
   * of such claims), and the readable rows are returned.
   */
  claim(
    limit: number,
    claimMs: number,
    onUnreadable?: (row: UnreadableOutboxRow) => void,
  ): Promise<OutboxMessage[]>;
  /** Delivered, or refused for good: gone. */
  remove(id: string): Promise<void>;
  /** Failed for now: released and due again after `delayMs`. */
  retryLater(id: string, delayMs: number): Promise<void>;
}

/**
 * Marks on calls every instance sees: the runtime may cancel at one instance a call another one holds, and a sign-in
 * started at one instance may be finished at another.
 */
export interface CallCancellations {
  /**
   * Remembers for `keepMs` that call `callId` of `groupId` (or, without it, the whole thread) is cancelled, and drops
   * its undelivered messages.
   */
  cancel(groupId: string, callId: string | undefined, keepMs: number): Promise<void>;
  /** True when the call or its thread was cancelled (and is still remembered). */
  isCancelled(groupId: string, callId: string): Promise<boolean>;
  /** Remembers that an instance took over the call from its sign-in (redirect or Cancel on the consent page). */
  resumed(groupId: string, callId: string, keepMs: number): Promise<void>;
  /** True when some instance took the call over: the one that started it must not time it out. */
  wasResumed(groupId: string, callId: string): Promise<boolean>;
}

/**
 * The consent links `auth_url` points at (consent.ts), shared so that the page shown by one instance can be
 * answered at another, and a link outlives the instance that made it. Same contract as `ConsentLinks`.
 */
export interface ConsentStore {
  create(request: ConsentRequest): Promise<string>;
  peek(id: string | null): Promise<ConsentEntry | undefined>;
  take(
    id: string | null,
    field: string | null,
    cookie: string | undefined,
  ): Promise<ConsentEntry | undefined>;
}

export interface ToolStateStore {
  readonly pending: PendingStore<PendingCallAuthorization>;
  /** `ttlMs`: how long a link stays valid (the tool's authorization timeout). */
  consents(ttlMs: number): ConsentStore;
  readonly outbox: CallbackOutbox;
  readonly cancellations: CallCancellations;
  /** The HMAC-signed invocations accepted by any instance (a replay is refused at every one, after restarts too). */
  readonly replay: ReplayLedger;
  /** Where it lives, without secrets (for logs). */
  readonly label: string;
  close(): Promise<void>;
}
