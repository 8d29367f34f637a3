/**
 * Callback delivery (RAP transport): POST one JSON message to the runtime's `callback_url`, retrying with
 * exponential backoff on network errors, timeouts and 5xx, never on 4xx (the runtime refused it for good), and
 * bounded both in attempts and in total time. Redirects are not followed: a callback URL is used exactly as given.
 */

import { sleep } from "../../oauth/http.ts";

export interface DeliveryOptions {
  /** Total attempts, the first included. Default 6. */
  attempts?: number;
  /** The first retry waits about this long; each later one twice as long (with jitter). Default 200 ms. */
  baseDelayMs?: number;
  /** No single wait is longer than this. Default 10 s. */
  maxDelayMs?: number;
  /** Give up once this much time has passed since the first attempt. Default 60 s. */
  maxTotalMs?: number;
  /** Per-attempt timeout. Default 10 s. */
  timeoutMs?: number;
  /** Extra headers per delivery, e.g. a bearer token or a signature for an authenticated callback endpoint. */
  headers?: (url: URL, body: string) => Record<string, string> | Promise<Record<string, string>>;
}

export interface DeliveryOutcome {
  delivered: boolean;
  attempts: number;
  /** The last HTTP status, when there was a response. */
  status?: number;
  /** Why delivery stopped, when it failed: `rejected` (4xx/3xx), `exhausted`, `cancelled`. */
  reason?: "rejected" | "exhausted" | "cancelled";
}

export const DEFAULT_DELIVERY = {
  attempts: 6,
  baseDelayMs: 200,
  maxDelayMs: 10_000,
  maxTotalMs: 60_000,
  timeoutMs: 10_000,
} as const;

/** Delivers `message` to `url`; never throws (the outcome says what happened), stops when `signal` aborts. */
export async function deliverCallback(
  url: string | URL,
  message: unknown,
  options: DeliveryOptions & { signal?: AbortSignal } = {},
): Promise<DeliveryOutcome> {
  const target = typeof url === "string" ? new URL(url) : url;
  const attempts = Math.max(1, options.attempts ?? DEFAULT_DELIVERY.attempts);
  const base = options.baseDelayMs ?? DEFAULT_DELIVERY.baseDelayMs;
  const maxDelay = options.maxDelayMs ?? DEFAULT_DELIVERY.maxDelayMs;
  const deadline = Date.now() + (options.maxTotalMs ?? DEFAULT_DELIVERY.maxTotalMs);
  const body = JSON.stringify(message);
  let status: number | undefined;
  for (let attempt = 1; ; attempt++) {
    if (options.signal?.aborted)
      return { delivered: false, attempts: attempt - 1, reason: "cancelled" };
    status = await post(target, body, options);
    if (status !== undefined && status >= 200 && status < 300) {
      return { delivered: true, attempts: attempt, status };
    }
    if (status !== undefined && status < 500) {
      return { delivered: false, attempts: attempt, status, reason: "rejected" };
    }
    const delay = backoff(attempt, base, maxDelay);
    if (attempt >= attempts || Date.now() + delay > deadline) {
      return { delivered: false, attempts: attempt, status, reason: "exhausted" };
    }
    try {
      await sleep(delay, options.signal);
    } catch {
      return { delivered: false, attempts: attempt, status, reason: "cancelled" };
    }
  }
}

/** The HTTP status, or undefined for a network error or timeout (both retryable). */
async function post(
  url: URL,
  body: string,
  options: DeliveryOptions & { signal?: AbortSignal },
): Promise<number | undefined> {
  const timeout = AbortSignal.timeout(options.timeoutMs ?? DEFAULT_DELIVERY.timeoutMs);
  try {
    const extra = (await options.headers?.(url, body)) ?? {};
    const response = await fetch(url, {
      method: "POST",
      headers: { ...extra, "content-type": "application/json" },
      body,
      redirect: "manual",
      signal: options.signal ? AbortSignal.any([options.signal, timeout]) : timeout,
    });
    await response.body?.cancel().catch(() => {});
    return response.status;
  } catch {
    return undefined;
  }
}

/** Exponential with "equal jitter": half the step fixed, half random, so retries from many tools spread out. */
function backoff(attempt: number, base: number, max: number): number {
  const step = Math.min(max, base * 2 ** (attempt - 1));
  return step / 2 + Math.random() * (step / 2);
}
