/**
 * The runtime's durable state: every call from dispatch to its terminal result, each thread's status entries and
 * subscription events, and the latest view per (thread, view_type). Async throughout so a PostgreSQL backend fits
 * the same contract (conditional UPDATE … RETURNING for `transition`, a sequence for entries).
 *
 * Never stored: `auth_url` (RAP §OAuth: runtimes MUST NOT store it beyond surfacing it), `response_url`, callback
 * URLs or tokens (they are recomputed from the key when needed, never persisted).
 */

export type CallStatus =
  /** Dispatched (or being dispatched); waiting for the tool. */
  | "pending"
  /** The tool sent `oauth`: waiting for the user to authorize, then for the tool's result. */
  | "authorizing"
  /** A `tool_result` arrived. */
  | "completed"
  /** The tool refused the invocation (non-200) or could not be reached: the result is a runtime-made error. */
  | "failed"
  /** No result before the deadline: the result is a runtime-made error. */
  | "timed_out"
  /** Cancelled by the caller or closed with its thread: the result is a runtime-made error. */
  | "cancelled";

export const OPEN_STATUSES: readonly CallStatus[] = ["pending", "authorizing"];

export function isOpen(status: CallStatus): boolean {
  return status === "pending" || status === "authorizing";
}

export type SubscriptionState = "none" | "active" | "ended";

export interface CallResult {
  /** What the model reads. For a multimodal result with no `text`, the text items joined. */
  text: string;
  /** RAP `content` items as sent (text and base64 image items). */
  content?: Record<string, unknown>[];
  /** RAP `display_as`: for the UI only. */
  displayAs?: Record<string, unknown>[];
  /** True when the text starts with "Error: " (RAP's error form), whoever made it. */
  isError: boolean;
  /** True when the runtime made this result (refusal, timeout, cancellation), not the tool. */
  synthetic: boolean;
}

export interface CallRecord {
  groupId: string;
  /** RAP `id`: the call's identifier, usually the model's tool-call id. */
  id: string;
  /** RAP `call_id`: the optional secondary id the tool must echo. */
  callId: string | null;
  operation: string;
  arguments: Record<string, unknown>;
  userId: string | null;
  /** The toolset's name and the base URL it was discovered from (for `cancel_tool_call`). */
  toolset: string;
  baseUrl: string;
  requiresAuth: string | null;
  status: CallStatus;
  subscription: SubscriptionState;
  result: CallResult | null;
  createdAt: number;
  updatedAt: number;
  /** Past this instant (ms since the epoch) an open call times out; stored so timeouts survive restarts. */
  deadline: number;
}

export type NewCall = Omit<CallRecord, "status" | "subscription" | "result" | "updatedAt">;

export type ThreadEntry =
  | { seq: number; at: number; kind: "status"; id: string | null; text: string }
  | {
      seq: number;
      at: number;
      kind: "subscription_event";
      toolCallId: string;
      text: string;
      associative: boolean;
      final: boolean;
    }
  | {
      seq: number;
      at: number;
      kind: "user_choice";
      id: string;
      prompt: string;
      choices: string[];
      default: number | null;
    };

type DistributiveOmit<T, K extends PropertyKey> = T extends unknown ? Omit<T, K> : never;
export type NewThreadEntry = DistributiveOmit<ThreadEntry, "seq">;

export interface Transition {
  /** The change happens only if the call's status is one of these (compare-and-set: duplicates change nothing). */
  from: readonly CallStatus[];
  to: CallStatus;
  result?: CallResult;
  subscription?: SubscriptionState;
  at: number;
  /**
   * The message's delivery key (its `Idempotency-Key`), recorded with the change, atomically, when the change
   * happens: a change committed without its key would make the retry look like a duplicate and never settle.
   */
  deliveryKey?: string;
}

export interface RuntimeStore {
  /** Records a new call; refuses (`rap_call_exists`) if the thread already has a call with that id. */
  createCall(call: NewCall): Promise<CallRecord>;
  getCall(groupId: string, id: string): Promise<CallRecord | undefined>;
  /** Applies `change` atomically if the status matches; returns the updated call, or undefined if nothing changed. */
  transition(groupId: string, id: string, change: Transition): Promise<CallRecord | undefined>;
  /** Compare-and-set on the subscription state; true if it changed. */
  setSubscription(
    groupId: string,
    id: string,
    from: SubscriptionState,
    to: SubscriptionState,
    at: number,
  ): Promise<boolean>;
  listCalls(groupId: string): Promise<CallRecord[]>;
  /** Open calls whose deadline is at or before `now`, oldest deadline first. */
  overdueCalls(now: number, limit?: number): Promise<CallRecord[]>;
  /** The earliest deadline among open calls, if any. */
  nextDeadline(): Promise<number | undefined>;
  appendEntry(groupId: string, entry: NewThreadEntry): Promise<ThreadEntry>;
  /**
   * With a delivery key (the callback's `Idempotency-Key`): the entry and the key are recorded together, atomically;
   * undefined (and nothing added) when the thread already recorded that key. A retried delivery cannot add twice.
   */
  appendEntry(
    groupId: string,
    entry: NewThreadEntry,
    deliveryKey: string,
  ): Promise<ThreadEntry | undefined>;
  /** Has the thread recorded this delivery key (an `Idempotency-Key` already applied for the same call)? */
  hasDelivery(groupId: string, deliveryKey: string): Promise<boolean>;
  /** Records a delivery key after its change was applied; false when it was already recorded. */
  recordDelivery(groupId: string, deliveryKey: string, at: number): Promise<boolean>;
  listEntries(groupId: string): Promise<ThreadEntry[]>;
  /** Keeps the latest content per (thread, view_type) (RAP `view_update`). */
  putView(groupId: string, viewType: string, content: unknown, at: number): Promise<void>;
  listViews(groupId: string): Promise<Record<string, unknown>>;
  close(): Promise<void>;
  /**
   * Optional: records that the tool acknowledged the call, so it is never sent again (issue 22 §7). A store without
   * it does not resend after a restart.
   */
  markSent?(groupId: string, id: string): Promise<void>;
  /**
   * Optional: open calls stored but never acknowledged whose sender is gone (a process killed between storing and
   * sending) or is this process (a send that could not record its outcome, the database down), claimed for this
   * process so that only one sends each, oldest first. The caller skips those it is sending right now.
   */
  claimUnsent?(limit: number): Promise<CallRecord[]>;
  /**
   * Optional: runs `fn` while holding the thread's lock across every process sharing the store (PostgreSQL: a
   * session advisory lock, freed by the server if the holder dies). The runtime wraps each per-thread task in it,
   * inside its in-process serial queue, so RAP §2.6's one-message-at-a-time per group_id holds across instances.
   */
  lockGroup?<T>(groupId: string, fn: () => Promise<T>): Promise<T>;
  /**
   * Optional, for stores several runtimes share: records the callback key's fingerprint on first use and answers
   * whether `fingerprint` is the recorded one (instances with different keys would refuse each other's callbacks).
   */
  bindCallbackKey?(fingerprint: string): Promise<boolean>;
}
