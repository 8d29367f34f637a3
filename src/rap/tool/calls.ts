/**
 * The calls this tool is working on, by (group_id, id): running, or waiting for the person to authorize. It is
 * what `/close_thread` and `/cancel_tool_call` act on, what bounds concurrency, and what times out a pending
 * authorization so that no call stays pending forever.
 */

import { randomUUID } from "node:crypto";
import type { CallTarget } from "./messages.ts";

/** The invocation, as needed to run (or re-run) the operation. */
export interface CallSpec {
  operation: string;
  arguments: Record<string, unknown>;
  callbackUrl: string;
  groupId: string;
  id: string;
  callId: string | null;
  threadAncestors: string[];
  userId: string | null;
}

export interface ActiveCall {
  readonly key: string;
  /** Random per call: a pending authorization names it, so a stale redirect cannot revive a newer call. */
  readonly attempt: string;
  readonly spec: CallSpec;
  readonly target: CallTarget;
  /** Aborted only by cancellation (close_thread, cancel_tool_call, shutdown): then nothing more is sent. */
  readonly controller: AbortController;
  phase: "running" | "authorizing";
  /**
   * True once the shared call ledger records this call as held here (state.ts `CallLedger`): its final message is
   * then written only if it still is (one final message, whichever instance ends the call).
   */
  ledgered?: boolean;
  /** Set while authorizing. */
  provider?: string;
  /** The call's deliveries, chained so the runtime gets them in order (the `oauth` before the final result). */
  outbox: Promise<void>;
  timer?: NodeJS.Timeout;
}

export class CallRegistry {
  readonly #calls = new Map<string, ActiveCall>();
  readonly #max: number;

  constructor(maxActive: number) {
    this.#max = maxActive;
  }

  get size(): number {
    return this.#calls.size;
  }

  /** Registers a new call; `duplicate` when (group_id, id) is already active, `full` at the limit. */
  open(spec: CallSpec): ActiveCall | "duplicate" | "full" {
    const key = callKey(spec.groupId, spec.id);
    if (this.#calls.has(key)) return "duplicate";
    if (this.#calls.size >= this.#max) return "full";
    const call: ActiveCall = {
      key,
      // randomUUID draws from Node's cached entropy pool: a randomBytes() call per invocation showed in the ack profile.
      attempt: randomUUID(),
      spec,
      target: {
        callbackUrl: spec.callbackUrl,
        groupId: spec.groupId,
        id: spec.id,
        callId: spec.callId,
      },
      controller: new AbortController(),
      phase: "running",
      outbox: Promise.resolve(),
    };
    this.#calls.set(key, call);
    return call;
  }

  /**
   * Takes over a call another instance started (its pending authorization came from the shared store): registered
   * here as running, under its original attempt. Undefined when this instance already has a call with that key (a
   * different attempt, or one not waiting) or, unless `force` (the shared ledger already gave it to this instance,
   * which must then end it), is full.
   */
  adopt(spec: CallSpec, attempt: string, force = false): ActiveCall | undefined {
    const key = callKey(spec.groupId, spec.id);
    if (this.#calls.has(key) || (!force && this.#calls.size >= this.#max)) return undefined;
    const call: ActiveCall = {
      key,
      attempt,
      spec,
      target: {
        callbackUrl: spec.callbackUrl,
        groupId: spec.groupId,
        id: spec.id,
        callId: spec.callId,
      },
      controller: new AbortController(),
      phase: "running",
      outbox: Promise.resolve(),
    };
    this.#calls.set(key, call);
    return call;
  }

  /** True when this instance has a call (any attempt, any phase) with this key. */
  holds(groupId: string, id: string): boolean {
    return this.#calls.has(callKey(groupId, id));
  }

  /** The call a pending authorization belongs to, only if it is still that same call and still waiting. */
  awaiting(groupId: string, id: string, attempt: string): ActiveCall | undefined {
    const call = this.#calls.get(callKey(groupId, id));
    if (!call || call.attempt !== attempt || call.phase !== "authorizing") return undefined;
    return call.controller.signal.aborted ? undefined : call;
  }

  /** Calls of `userId` waiting on `provider`: one authorization serves them all. */
  awaitingUser(userId: string, provider: string): ActiveCall[] {
    return [...this.#calls.values()].filter(
      (call) =>
        call.phase === "authorizing" && call.provider === provider && call.spec.userId === userId,
    );
  }

  /** Moves the call to "waiting for the person"; `onTimeout` runs if nobody resumes it within `timeoutMs`. */
  authorizing(call: ActiveCall, provider: string, timeoutMs: number, onTimeout: () => void): void {
    clearTimeout(call.timer);
    call.phase = "authorizing";
    call.provider = provider;
    call.timer = setTimeout(
      () => {
        if (this.#calls.get(call.key) !== call || call.phase !== "authorizing") return;
        this.finish(call);
        onTimeout();
        // setTimeout fires at once above 2^31-1 ms; longer timeouts are capped at ~24.8 days.
      },
      Math.min(timeoutMs, 2_147_483_647),
    );
    call.timer.unref();
  }

  /** Back to running (the person authorized); the timeout no longer applies. */
  resume(call: ActiveCall): void {
    clearTimeout(call.timer);
    call.timer = undefined;
    call.phase = "running";
  }

  /** The call is over (its final message is being sent). */
  finish(call: ActiveCall): void {
    clearTimeout(call.timer);
    if (this.#calls.get(call.key) === call) this.#calls.delete(call.key);
  }

  /** Cancels a thread's calls (or one of them): aborts their work and forgets them. Returns how many. */
  cancel(groupId: string, id?: string): number {
    const matching =
      id === undefined
        ? [...this.#calls.values()].filter((call) => call.spec.groupId === groupId)
        : [this.#calls.get(callKey(groupId, id))].filter((call) => call !== undefined);
    for (const call of matching) {
      this.finish(call);
      call.controller.abort(new Error("cancelled by the runtime"));
    }
    return matching.length;
  }

  cancelAll(): void {
    for (const call of [...this.#calls.values()]) this.cancel(call.spec.groupId, call.spec.id);
  }
}

function callKey(groupId: string, id: string): string {
  return JSON.stringify([groupId, id]);
}
