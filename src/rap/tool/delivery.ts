/**
 * Callback delivery (RAP transport): POST one JSON message to the runtime's `callback_url`, retrying with
 * exponential backoff (capped, with jitter) on network errors, timeouts, 5xx, 408 and 429 (after its Retry-After,
 * RFC 9110 §10.2.3), never on other 4xx (the runtime refused it for good). Bounded in total time (10 minutes by
 * default, so a runtime restart or a short outage loses nothing) and, through a `RetryPool`, in how many wait at
 * once. Redirects are not followed: a callback URL is used exactly as given.
 */

import { Agent as HttpAgent, request as httpRequest } from "node:http";
import { Agent as HttpsAgent, request as httpsRequest } from "node:https";
import { sleep } from "../../oauth/http.ts";
import type { RetryPool } from "./retry-pool.ts";

export interface DeliveryOptions {
  /** Total attempts, the first included. Default: no limit but `maxTotalMs`. */
  attempts?: number;
  /** The first retry waits about this long; each later one twice as long (with jitter). Default 500 ms. */
  baseDelayMs?: number;
  /** No single wait is longer than this (a Retry-After may ask for longer). Default 30 s. */
  maxDelayMs?: number;
  /** Give up once this much time has passed since the first attempt. Default 10 minutes. */
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
  /**
   * Why delivery stopped, when it failed: `rejected` (4xx/3xx), `exhausted` (out of time or attempts),
   * `cancelled` (the call was cancelled), `dropped` (evicted from a full retry pool).
   */
  reason?: "rejected" | "exhausted" | "cancelled" | "dropped";
  /** With `reportRetryAfter`: the last answer's Retry-After (RFC 9110 §10.2.3) in ms, when it had one. */
  retryAfterMs?: number;
}

export const DEFAULT_DELIVERY = {
  attempts: Number.POSITIVE_INFINITY,
  baseDelayMs: 500,
  maxDelayMs: 30_000,
  maxTotalMs: 10 * 60_000,
  timeoutMs: 10_000,
} as const;

/**
 * Delivers `message` to `url`; never throws (the outcome says what happened), stops when `signal` aborts. Every
 * attempt carries `Idempotency-Key: <idempotencyKey>` when given: the same on each retry, so a runtime that got an
 * attempt whose answer was lost applies the message once.
 */
export async function deliverCallback(
  url: string | URL,
  message: unknown,
  options: DeliveryOptions & {
    signal?: AbortSignal;
    pool?: RetryPool;
    idempotencyKey?: string;
    /** Adds `retryAfterMs` to an exhausted outcome (the outbox schedules its own retries). */
    reportRetryAfter?: boolean;
  } = {},
): Promise<DeliveryOutcome> {
  const target = typeof url === "string" ? new URL(url) : url;
  const attempts = Math.max(1, options.attempts ?? DEFAULT_DELIVERY.attempts);
  const base = options.baseDelayMs ?? DEFAULT_DELIVERY.baseDelayMs;
  const maxDelay = options.maxDelayMs ?? DEFAULT_DELIVERY.maxDelayMs;
  const deadline = Date.now() + (options.maxTotalMs ?? DEFAULT_DELIVERY.maxTotalMs);
  const body = JSON.stringify(message);
  // A delivery joins the retry pool at its first wait and stays until it ends, so "the oldest" is the one pending
  // longest, whether it is sleeping or in the middle of a retry when a newer one evicts it.
  const evicted = new AbortController();
  let leave: (() => void) | undefined;
  const signal = options.signal
    ? AbortSignal.any([options.signal, evicted.signal])
    : evicted.signal;
  const stopped = (attempts: number, status?: number): DeliveryOutcome => {
    const reason = evicted.signal.aborted && !options.signal?.aborted ? "dropped" : "cancelled";
    return status === undefined
      ? { delivered: false, attempts, reason }
      : { delivered: false, attempts, status, reason };
  };
  let status: number | undefined;
  try {
    for (let attempt = 1; ; attempt++) {
      if (signal.aborted) return stopped(attempt - 1, status);
      const answer = await post(target, body, { ...options, signal });
      if (signal.aborted) return stopped(attempt, status);
      status = answer?.status;
      if (status !== undefined && status >= 200 && status < 300) {
        return { delivered: true, attempts: attempt, status };
      }
      const retryable = status === undefined || status >= 500 || status === 408 || status === 429;
      if (!retryable) return { delivered: false, attempts: attempt, status, reason: "rejected" };
      const asked = answer?.retryAfterMs;
      const delay = asked !== undefined ? Math.max(asked, base) : backoff(attempt, base, maxDelay);
      if (attempt >= attempts || Date.now() + delay > deadline) {
        const outcome: DeliveryOutcome = {
          delivered: false,
          attempts: attempt,
          status,
          reason: "exhausted",
        };
        if (options.reportRetryAfter && asked !== undefined) outcome.retryAfterMs = asked;
        return outcome;
      }
      leave ??= options.pool?.enter(() => evicted.abort());
      try {
        await sleep(delay, signal);
      } catch {
        return stopped(attempt, status);
      }
    }
  } finally {
    leave?.();
  }
}

/** The HTTP status (and Retry-After), or undefined for a network error or timeout (both retryable). */
async function post(
  url: URL,
  body: string,
  options: DeliveryOptions & { signal?: AbortSignal; idempotencyKey?: string },
): Promise<Answer | undefined> {
  let extra: Record<string, string>;
  try {
    extra = (await options.headers?.(url, body)) ?? {};
  } catch {
    return undefined;
  }
  if (options.idempotencyKey !== undefined)
    extra = { ...extra, "idempotency-key": options.idempotencyKey };
  return send(url, body, extra, options.signal, options.timeoutMs ?? DEFAULT_DELIVERY.timeoutMs);
}

interface Answer {
  status: number;
  retryAfterMs?: number;
}

// node:http with keep-alive agents rather than fetch: on the tool's hot path (one POST per result) fetch's
// WHATWG streams and abort plumbing cost about as much CPU as judging and acknowledging the invocation itself.
const AGENTS = {
  "http:": new HttpAgent({ keepAlive: true, maxSockets: 256 }),
  "https:": new HttpsAgent({ keepAlive: true, maxSockets: 256 }),
};
const MAX_ANSWER_BYTES = 65_536;

/**
 * One POST, redirects not followed, bounded by `timeoutMs` from start to the end of the answer. The answer is read
 * (so the connection is reused) up to 64 KiB and discarded; past that the connection is closed.
 */
function send(
  url: URL,
  body: string,
  headers: Record<string, string>,
  signal: AbortSignal | undefined,
  timeoutMs: number,
): Promise<Answer | undefined> {
  return new Promise((resolve) => {
    let answer: Answer | undefined;
    let settled = false;
    const settle = () => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolve(answer);
    };
    const request = (url.protocol === "https:" ? httpsRequest : httpRequest)(
      url,
      {
        method: "POST",
        agent: url.protocol === "https:" ? AGENTS["https:"] : AGENTS["http:"],
        headers: {
          ...headers,
          "content-type": "application/json",
          "content-length": Buffer.byteLength(body),
        },
        signal,
      },
      (response) => {
        answer = {
          status: response.statusCode ?? 0,
          retryAfterMs: retryAfter(first(response.headers["retry-after"]) ?? null),
        };
        let seen = 0;
        response.on("data", (chunk: Buffer) => {
          seen += chunk.length;
          if (seen > MAX_ANSWER_BYTES) {
            response.destroy();
            settle();
          }
        });
        response.once("end", settle);
        response.once("close", settle);
        response.once("error", settle);
      },
    );
    const timer = setTimeout(
      () => {
        request.destroy();
        settle();
      },
      Math.min(timeoutMs, 2 ** 31 - 1),
    );
    request.once("error", settle);
    request.end(body);
  });
}

function first(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}

/** RFC 9110 §10.2.3: delay-seconds or an HTTP-date; anything else is ignored (plain backoff applies). */
export function retryAfter(value: string | null, now = Date.now()): number | undefined {
  if (value === null) return undefined;
  const text = value.trim();
  if (/^\d{1,10}$/.test(text)) return Number(text) * 1000;
  const date = Date.parse(text);
  return Number.isNaN(date) ? undefined : Math.max(0, date - now);
}

/** Exponential with "equal jitter": half the step fixed, half random, so retries from many tools spread out. */
function backoff(attempt: number, base: number, max: number): number {
  const step = Math.min(max, base * 2 ** (attempt - 1));
  return step / 2 + Math.random() * (step / 2);
}
