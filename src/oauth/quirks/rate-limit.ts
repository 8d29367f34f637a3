/**
 * Recognising a rate limit in any provider's answer: HTTP 429 (RFC 6585 §4) with `Retry-After` (Slack documents
 * it, api.slack.com/apis/rate-limits), or GitHub's 403/429 with `x-ratelimit-remaining: 0` and the epoch second
 * `x-ratelimit-reset` (docs.github.com/rest/using-the-rest-api/rate-limits-for-the-rest-api), or Linear's HTTP
 * 400 `RATELIMITED` with `x-ratelimit-requests-remaining: 0` and `x-ratelimit-requests-reset` in epoch
 * milliseconds (linear.app/developers/rate-limiting).
 */

export interface RateLimit {
  /** How long to wait before retrying, when the provider said. */
  retryAfterMs?: number;
}

/** Never wait longer than this on a provider's say-so (a bad header must not park a caller for hours). */
const MAX_RETRY_AFTER_MS = 15 * 60_000;

export function rateLimitOf(response: Response, now = Date.now()): RateLimit | undefined {
  const exhausted = response.headers.get("x-ratelimit-remaining") === "0";
  const linear =
    response.status === 400 && response.headers.get("x-ratelimit-requests-remaining") === "0";
  if (linear) return { retryAfterMs: epochMsReset(response.headers, now) };
  if (response.status !== 429 && !(response.status === 403 && exhausted)) return undefined;
  return { retryAfterMs: retryAfter(response.headers, now) };
}

function retryAfter(headers: Headers, now: number): number | undefined {
  const after = headers.get("retry-after");
  if (after !== null) {
    if (/^\d+$/.test(after.trim())) return cap(Number(after) * 1000);
    const date = Date.parse(after);
    if (!Number.isNaN(date)) return cap(date - now);
  }
  const reset = headers.get("x-ratelimit-reset");
  if (reset !== null && /^\d+$/.test(reset.trim())) return cap(Number(reset) * 1000 - now);
  return undefined;
}

function epochMsReset(headers: Headers, now: number): number | undefined {
  const reset = headers.get("x-ratelimit-requests-reset");
  return reset !== null && /^\d+$/.test(reset.trim()) ? cap(Number(reset) - now) : undefined;
}

function cap(ms: number): number {
  return Math.min(Math.max(0, Math.round(ms)), MAX_RETRY_AFTER_MS);
}
