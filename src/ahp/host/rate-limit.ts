/** A token bucket per connection for `authenticate` (AHP threat model: "apply rate limits"). Pure: clock passed in. */

export interface RateLimitOptions {
  /** Calls allowed at once. Default 10. */
  burst?: number;
  /** Calls regained per second. Default 2. */
  perSecond?: number;
}

export class TokenBucket {
  readonly #burst: number;
  readonly #perMs: number;
  #tokens: number;
  #at: number;

  constructor(options: RateLimitOptions, now: number) {
    this.#burst = options.burst ?? 10;
    this.#perMs = (options.perSecond ?? 2) / 1000;
    this.#tokens = this.#burst;
    this.#at = now;
  }

  /** Takes one call; when none is left, how long until one is (ms). */
  take(now: number): { ok: true } | { ok: false; retryAfterMs: number } {
    this.#tokens = Math.min(this.#burst, this.#tokens + (now - this.#at) * this.#perMs);
    this.#at = now;
    if (this.#tokens >= 1) {
      this.#tokens -= 1;
      return { ok: true };
    }
    return { ok: false, retryAfterMs: Math.ceil((1 - this.#tokens) / this.#perMs) };
  }
}
