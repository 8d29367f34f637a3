/**
 * The runtime-side deadline for open calls (RAP §Lifecycle: runtimes MAY add timeouts that produce synthetic error
 * results, and SHOULD document them). Deadlines live in the store, so a restarted runtime sweeps what fell due
 * while it was down; one timer is armed for the earliest deadline at a time.
 */

/** 15 minutes: longer than any sensible OAuth detour (the reference tool proxy keeps pending OAuth for 10). */
export const DEFAULT_CALL_TIMEOUT_MS = 15 * 60_000;

// setTimeout fires at once for delays above 2^31-1 ms; longer waits are taken in steps.
const MAX_DELAY_MS = 2 ** 31 - 1;

export function timeoutText(timeoutMs: number): string {
  return (
    `Error: the tool did not answer within ${formatDuration(timeoutMs)}. The runtime stopped waiting; ` +
    "no result will be accepted for this call."
  );
}

export function formatDuration(ms: number): string {
  if (ms % 3_600_000 === 0) return plural(ms / 3_600_000, "hour");
  if (ms % 60_000 === 0) return plural(ms / 60_000, "minute");
  if (ms % 1000 === 0) return plural(ms / 1000, "second");
  return `${ms} ms`;
}

function plural(n: number, unit: string): string {
  return `${n} ${unit}${n === 1 ? "" : "s"}`;
}

/**
 * Calls `sweep` when the earliest known deadline passes, then asks `next` for the following one. `arm` only ever
 * brings the wake-up earlier. The timer is unref'd: it never keeps a process alive by itself.
 */
export class DeadlineTimer {
  readonly #sweep: () => Promise<void>;
  readonly #next: () => Promise<number | undefined>;
  readonly #now: () => number;
  #timer: NodeJS.Timeout | undefined;
  #at: number | undefined;
  #stopped = false;
  #running: Promise<void> | undefined;

  constructor(options: {
    sweep: () => Promise<void>;
    next: () => Promise<number | undefined>;
    now?: () => number;
  }) {
    this.#sweep = options.sweep;
    this.#next = options.next;
    this.#now = options.now ?? Date.now;
  }

  arm(at: number): void {
    if (this.#stopped || (this.#at !== undefined && this.#at <= at)) return;
    if (this.#timer) clearTimeout(this.#timer);
    this.#at = at;
    const delay = Math.min(MAX_DELAY_MS, Math.max(0, at - this.#now()));
    this.#timer = setTimeout(() => void this.fire(), delay);
    this.#timer.unref();
  }

  /** Sweeps now and re-arms for the next deadline; concurrent calls share one sweep. */
  fire(): Promise<void> {
    if (this.#running) return this.#running;
    if (this.#timer) clearTimeout(this.#timer);
    this.#timer = undefined;
    this.#at = undefined;
    this.#running = (async () => {
      try {
        await this.#sweep();
        const next = await this.#next();
        if (next !== undefined) this.arm(next);
      } finally {
        this.#running = undefined;
      }
    })();
    return this.#running;
  }

  stop(): void {
    this.#stopped = true;
    if (this.#timer) clearTimeout(this.#timer);
    this.#timer = undefined;
  }
}
