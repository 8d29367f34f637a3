/** In-process waiters for `waitForResult`: resolved when a call reaches a terminal status in this process. */

import { WaitError } from "./errors.ts";
import type { CallRecord } from "./store.ts";

type Waiter = { resolve: (call: CallRecord) => void; reject: (error: Error) => void };

const key = (groupId: string, id: string) => JSON.stringify([groupId, id]);

export class ResultWaiters {
  readonly #waiting = new Map<string, Set<Waiter>>();

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
    return { promise, cancel };
  }

  settle(call: CallRecord): void {
    for (const waiter of this.#waiting.get(key(call.groupId, call.id)) ?? []) waiter.resolve(call);
  }

  rejectAll(error: Error): void {
    for (const set of this.#waiting.values()) for (const waiter of set) waiter.reject(error);
    this.#waiting.clear();
  }
}
