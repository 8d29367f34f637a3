/**
 * Where a tool keeps what must outlive its process: pending authorizations (a `state` → the PKCE half and the call
 * to resume) and an outbox of callbacks not yet delivered. Without one, both live in memory (one instance, lost on
 * restart); with one shared by several instances (PostgreSQL: `openPostgresToolState`), any instance can finish a
 * sign-in another one started, and a result is delivered even if the process that produced it was killed.
 */

import type { PendingStore } from "../../oauth/index.ts";
import type { PendingCallAuthorization } from "./options.ts";

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

export interface CallbackOutbox {
  /** Writes a message before its first delivery attempt; returns its id. */
  add(message: { groupId: string; callbackUrl: string; body: unknown }): Promise<string>;
  /**
   * Claims up to `limit` due messages for `claimMs`: only the oldest undelivered message of each group (the runtime
   * must see a thread's messages in order), each claimed by one instance at a time. A claim that is not settled
   * (the instance died) expires and the message is due again.
   */
  claim(limit: number, claimMs: number): Promise<OutboxMessage[]>;
  /** Delivered, or refused for good: gone. */
  remove(id: string): Promise<void>;
  /** Failed for now: released and due again after `delayMs`. */
  retryLater(id: string, delayMs: number): Promise<void>;
}

export interface ToolStateStore {
  readonly pending: PendingStore<PendingCallAuthorization>;
  readonly outbox: CallbackOutbox;
  /** Where it lives, without secrets (for logs). */
  readonly label: string;
  close(): Promise<void>;
}
