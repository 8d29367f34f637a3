/**
 * One promise chain per key: tasks for the same `group_id` run one at a time, in arrival order; different keys run
 * concurrently (RAP §2.6: a runtime MUST process messages for one group_id one at a time). Idle keys are dropped.
 */

export class SerialQueue {
  readonly #tails = new Map<string, Promise<unknown>>();

  /** Runs `task` after every task queued before it under `key`; its outcome is the returned promise's. */
  run<T>(key: string, task: () => Promise<T>): Promise<T> {
    const previous = this.#tails.get(key) ?? Promise.resolve();
    // A failed task must not poison the chain: the next one runs regardless.
    const result = previous.then(task, task);
    const tail = result.then(
      () => undefined,
      () => undefined,
    );
    this.#tails.set(key, tail);
    void tail.then(() => {
      if (this.#tails.get(key) === tail) this.#tails.delete(key);
    });
    return result;
  }

  /** Keys with queued or running work (for tests and diagnostics). */
  get busyKeys(): number {
    return this.#tails.size;
  }

  /** Resolves when everything queued so far has finished. */
  async drain(): Promise<void> {
    while (this.#tails.size > 0) await Promise.all(this.#tails.values());
  }
}
