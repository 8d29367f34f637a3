/**
 * Where a tool keeps what must outlive its process: pending authorizations (a `state` → the PKCE half and the call
 * to resume) and an outbox of callbacks not yet delivered. Without one, both live in memory (one instance, lost on
 * restart); with one shared by several instances (PostgreSQL: `openPostgresToolState`), any instance can finish a
 * sign-in another one started, and a result is delivered even if the process that produced it was killed.
 */

import type { Presence } from "../../db/index.ts";
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
  /**
   * Releases the claims of instances the database says are gone (their presence lock is held by nobody, and the
   * server has been up longer than `graceMs`); returns how many.
   */
  releaseGone?(graceMs: number): Promise<number>;
  /** Releases this instance's own claims but those in `keep` (deliveries under way): ones it lost track of. */
  releaseOwn?(keep: readonly string[]): Promise<number>;
}

/** An accepted call as the call ledger keeps it: its ids, where its result goes, and the attempt sign-ins name. */
export interface LedgerCall {
  groupId: string;
  /** RAP `id`. */
  id: string;
  /** RAP `call_id`, echoed in the result. */
  callId: string | null;
  callbackUrl: string;
  operation: string;
  /** The attempt a sign-in link names (`PendingCall.attempt`): a link for another attempt resumes nothing. */
  attempt: string;
}

/**
 * Every call the tool accepted, shared by every instance, so that each runs at most once and ends with one final
 * message whatever the sign-in links, instances and restarts (issue 22 §1, §6). A call is `running` at one instance
 * (its owner, by presence key), `authorizing` (waiting for a sign-in that any instance may receive), or `done`.
 */
export interface CallLedger {
  /** This instance's presence key (src/db/presence.ts). */
  readonly owner: string;
  /**
   * Records an accepted invocation as running here; false when the same call (thread, id and callback URL) was
   * accepted before, at any instance: a redelivery, which must not run again.
   */
  begin(call: LedgerCall): Promise<boolean>;
  /**
   * The call, running here, now waits for a sign-in, for `timeoutMs` at most; `timeoutText` is its result if nobody
   * signs in and this instance is gone by then. False when the call is not running here any more.
   */
  authorizing(call: LedgerCall, timeoutMs: number, timeoutText: string): Promise<boolean>;
  /**
   * A sign-in came back for `call.attempt`: the call is taken over (running here) if it still waits for exactly that
   * attempt. `stale` when it does not: it was resumed by another sign-in, ended, or timed out.
   */
  resume(call: LedgerCall): Promise<"resumed" | "stale">;
  /** Does the call still wait for a sign-in of this attempt? (The consent page is shown only then.) */
  isAwaiting(groupId: string, id: string, attempt: string): Promise<boolean>;
  /**
   * Ends the call with its final message, if this instance still holds it: the change and the outbox row are one
   * transaction. `superseded` when another instance took it over (or ended it), `cancelled` when the runtime
   * cancelled it (the call is ended, nothing is sent).
   */
  finish(
    call: LedgerCall,
    message: { id: string; body: unknown },
  ): Promise<"queued" | "superseded" | "cancelled">;
  /**
   * Ends the calls of instances the database says are gone (past `graceMs` after a database start) with
   * `result(call)`, or for a sign-in wait past its deadline `result(call, timeoutText)` (the text `authorizing`
   * recorded). Returns how many were ended.
   */
  takeOver(
    graceMs: number,
    result: (call: LedgerCall, timeoutText?: string) => unknown,
  ): Promise<number>;
}

/** Cancellations every instance sees: the runtime may cancel at one instance a call another one holds. */
export interface CallCancellations {
  /**
   * Remembers for `keepMs` that call `callId` of `groupId` (or, without it, the whole thread) is cancelled, and drops
   * its undelivered messages.
   */
  cancel(groupId: string, callId: string | undefined, keepMs: number): Promise<void>;
  /** True when the call or its thread was cancelled (and is still remembered). */
  isCancelled(groupId: string, callId: string): Promise<boolean>;
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

/**
 * A setting every instance sharing a state store must have alike (issue 22 §5). `values` are fingerprints, never
 * secrets; two instances agree when their lists share an element (one value for most settings).
 */
export interface SharedSetting {
  /** A stable key (`client_id`, `api_resource`, …). */
  name: string;
  /** What a person calls it, in the refusal ("OAuth client id"). */
  label: string;
  values: string[];
  /** What to do, in the refusal ("give every instance the same --client-id"). */
  fix: string;
}

export interface ToolStateStore {
  readonly pending: PendingStore<PendingCallAuthorization>;
  /** `ttlMs`: how long a link stays valid (the tool's authorization timeout). */
  consents(ttlMs: number): ConsentStore;
  readonly outbox: CallbackOutbox;
  readonly cancellations: CallCancellations;
  /**
   * The calls accepted by every instance, each run at most once (issue 22 §1). A store without one (written before
   * it existed) keeps the earlier guarantees only: a sign-in link or a redelivered invocation may run a call again.
   */
  readonly calls?: CallLedger;
  /** This instance's presence (src/db/presence.ts): its claims and calls name its key. */
  readonly presence?: Presence;
  /** The HMAC-signed invocations accepted by any instance (a replay is refused at every one, after restarts too). */
  readonly replay: ReplayLedger;
  /** Where it lives, without secrets (for logs). */
  readonly label: string;
  /**
   * Checks `settings` (the vault key ids are added by the store) against the instances alive right now and records
   * them; throws ToolConfigError `rap_tool_config_mismatch` naming each difference and its fix. Call it before
   * listening. Absent on a store that is not shared.
   */
  join?(settings: readonly SharedSetting[]): Promise<void>;
  close(): Promise<void>;
}
