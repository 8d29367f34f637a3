/**
 * Runs accepted calls after the acknowledgements: at most `concurrency` at once, each started from `setImmediate`
 * so sockets already waiting for their 200 are served first. RAP asks tools to acknowledge at once and never
 * block the response on processing; under a burst, unbounded processing would starve exactly those acks.
 */

export class WorkQueue {
  readonly #concurrency: number;
  readonly #waiting: (() => Promise<unknown>)[] = [];
  #running = 0;

  constructor(concurrency: number) {
    this.#concurrency = Math.max(1, concurrency);
  }

  enqueue(task: () => Promise<unknown>): void {
    this.#waiting.push(task);
    this.#pump();
  }

  get pending(): number {
    return this.#waiting.length + this.#running;
  }

  #pump(): void {
    while (this.#running < this.#concurrency && this.#waiting.length > 0) {
      const task = this.#waiting.shift() as () => Promise<unknown>;
      this.#running++;
      setImmediate(() => {
        task()
          .catch(() => {})
          .finally(() => {
            this.#running--;
            this.#pump();
          });
      });
    }
  }
}
