/**
 * In-process waiters for `waitForResult`: resolved when a call reaches a terminal status in this process. With a
 * store several instances share (PostgreSQL), the result may be applied by another instance: `lookup` is then
 * polled for the calls being waited on, every `intervalMs`, only while someone waits.
 */

import { WaitError } from "./errors.ts";
import type { CallRecord } from "./store.ts";

type Waiter = { resolve: (call: CallRecord) => void; reject: (error: Error) => void };

const key = (groupId: string, id: string) => JSON.stringify([groupId, id]);

export interface SharedStorePoll {
  lookup(groupId: string, id: string): Promise<CallRecord | undefined>;
  intervalMs: number;
}

export class ResultWaiters {
  readonly #waiting = new Map<string, Set<Waiter>>();
  readonly #poll: SharedStorePoll | undefined;
  #timer: NodeJS.Timeout | undefined;
  #polling = false;

  constructor(poll?: SharedStorePoll) {
    this.#poll = poll;
  }

  /** Registers first, then the caller checks the store: a result landing in between is never missed. */
  add(
    groupId: string,
    id: string,
    signal?: AbortSignal,
  ): { promise: Promise<CallRecord>; cancel(): void } {
    const k = key(groupId, id);
    let waiter!: Waiter;
    const promise = new Promise<CallRecord>((resolve, reject) => {
      waiter = { resolve, reject };
    });
    const set = this.#waiting.get(k) ?? new Set<Waiter>();
    set.add(waiter);
    this.#waiting.set(k, set);
    const cancel = () => {
      set.delete(waiter);
      if (set.size === 0 && this.#waiting.get(k) === set) this.#waiting.delete(k);
      signal?.removeEventListener("abort", onAbort);
    };
    const onAbort = () => {
      cancel();
      waiter.reject(
        new WaitError("rap_wait_aborted", "Stopped waiting for the RAP call's result."),
      );
    };
    signal?.addEventListener("abort", onAbort, { once: true });
    if (signal?.aborted) onAbort();
    void promise.then(cancel, cancel);
    this.#startPolling();
    return { promise, cancel };
  }

  settle(call: CallRecord): void {
    for (const waiter of this.#waiting.get(key(call.groupId, call.id)) ?? []) waiter.resolve(call);
  }

  rejectAll(error: Error): void {
    for (const set of this.#waiting.values()) for (const waiter of set) waiter.reject(error);
    this.#waiting.clear();
    this.#stopPolling();
  }

  #startPolling(): void {
    if (!this.#poll || this.#timer) return;
    const poll = this.#poll;
    this.#timer = setInterval(() => {
      if (this.#waiting.size === 0) return this.#stopPolling();
      if (this.#polling) return;
      this.#polling = true;
      void (async () => {
        for (const k of [...this.#waiting.keys()]) {
          const [groupId, id] = JSON.parse(k) as [string, string];
          // A failed lookup (database briefly unreachable) is tried again on the next tick.
          const call = await poll.lookup(groupId, id).catch(() => undefined);
          if (call?.result) this.settle(call);
        }
      })().finally(() => {
        this.#polling = false;
      });
    }, poll.intervalMs);
    // Never keeps a process alive by itself.
    this.#timer.unref();
  }

  #stopPolling(): void {
    if (this.#timer) clearInterval(this.#timer);
    this.#timer = undefined;
  }
}
