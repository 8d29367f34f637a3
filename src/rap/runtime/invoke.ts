/**
 * Sending one invocation: `POST {endpoint}` with the JSON invocation, 200 expected. Network errors and 5xx are
 * retried with exponential backoff (bounded); 4xx never (RAP §Transport); anything but 200 is a refusal. A 401 means
 * the tool refused the runtime's invocation credentials: its error text says so and what to check.
 */

import type { InvocationAuth } from "../invocation-auth.ts";
import type { Invocation } from "../wire.ts";
import { describeEndpoint, networkReason } from "./http.ts";
import { authHeaders, challengedScheme, unauthorizedText } from "./toolset-config.ts";

export interface RetryPolicy {
  /** Total attempts, first one included. */
  attempts: number;
  /** Delay before the second attempt; doubles each time, with ±50% jitter so retrying runtimes do not align. */
  baseDelayMs: number;
  maxDelayMs: number;
  /** Per attempt. */
  timeoutMs: number;
  /**
   * How long a tool that answers 503 with `Retry-After` (temporarily unavailable: its database restarting, say) is
   * waited for beyond `attempts`, its Retry-After honoured (at most 5 s a wait). Past it, the attempts' bound applies.
   */
  unavailableMs: number;
}

export const DEFAULT_RETRY: RetryPolicy = {
  attempts: 4,
  baseDelayMs: 250,
  maxDelayMs: 4000,
  timeoutMs: 10_000,
  unavailableMs: 30_000,
};

export type DispatchOutcome =
  | { ok: true; attempts: number }
  | { ok: false; attempts: number; status: number; text: string }
  | { ok: false; attempts: number; status: undefined; text: string };

export interface DispatchOptions {
  retry?: Partial<RetryPolicy>;
  fetch?: typeof fetch;
  signal?: AbortSignal;
  /** The tool's invocation authentication; signed afresh for each attempt. */
  auth?: InvocationAuth;
  /** The endpoint's origin, when the toolset's auth was kept from it (another origin; see endpointAuth). */
  authWithheldFrom?: string;
  /**
   * The first attempt is signed for this instant or later (ms). A resend of a call another process may have sent a
   * moment ago passes now + 1 s: the same invocation signed in the same second would be the very same request, and
   * the tool would refuse it as a replay (401) although it never ran it twice.
   */
  notBeforeMs?: number;
  /** Test hook: replaces the backoff sleep. */
  sleep?: (ms: number) => Promise<void>;
}

/** The RAP error text for a refused invocation, in the reference runtime's words, so models see one phrasing. */
export function refusedText(operation: string, endpoint: string, status: number): string {
  return (
    `Error: RAP tool '${operation}' failed: the server at ${describeEndpoint(endpoint)} responded with ` +
    `HTTP ${status}. No result will arrive for this call.`
  );
}

export function unreachableText(
  operation: string,
  endpoint: string,
  reason: string,
  attempts: number,
): string {
  return (
    `Error: RAP tool '${operation}' failed: the server at ${describeEndpoint(endpoint)} could not be reached ` +
    `(${reason}; ${attempts} attempt${attempts === 1 ? "" : "s"}). No result will arrive for this call.`
  );
}

/**
 * Posts `invocation` to `endpoint`. Never throws for transport problems: the outcome says what the model should be
 * told. Redirects are not followed (a 3xx is a refusal): the callback capability goes to the configured endpoint
 * only.
 */
export async function dispatchInvocation(
  endpoint: string,
  invocation: Invocation,
  options: DispatchOptions = {},
): Promise<DispatchOutcome> {
  const policy = { ...DEFAULT_RETRY, ...options.retry };
  const doFetch = options.fetch ?? fetch;
  const sleep = options.sleep ?? ((ms: number) => new Promise((r) => setTimeout(r, ms)));
  const body = JSON.stringify(invocation);
  let lastReason = "network error";
  const started = Date.now();
  let waited = false;
  let signedAt = options.notBeforeMs === undefined ? 0 : options.notBeforeMs - 1000;
  for (let attempt = 1; attempt <= policy.attempts; attempt++) {
    if (attempt > 1 && !waited) {
      const base = Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** (attempt - 2));
      await sleep(Math.round(base * (0.5 + Math.random())));
    }
    waited = false;
    if (options.signal?.aborted) break;
    const timeout = AbortSignal.timeout(policy.timeoutMs);
    // Each attempt is signed in a later second than the one before: the tool remembers accepted signatures for its
    // replay window, so a retry after a 5xx inside the same second would be refused as a replay.
    const notBeforeMs = signedAt ? signedAt + 1000 : 0;
    signedAt = Math.floor(Math.max(Date.now(), notBeforeMs) / 1000) * 1000;
    const auth = authHeaders(options.auth, { method: "POST", url: endpoint, body, notBeforeMs });
    let response: Response;
    try {
      response = await doFetch(endpoint, {
        method: "POST",
        headers: { "content-type": "application/json", accept: "application/json", ...auth },
        body,
        redirect: "manual",
        signal: options.signal ? AbortSignal.any([options.signal, timeout]) : timeout,
      });
    } catch (error) {
      lastReason = networkReason(error);
      continue;
    }
    // The runtime does not read the acknowledgement's body (RAP §Transport), but must release the connection.
    await response.body?.cancel().catch(() => {});
    if (response.status === 200) return { ok: true, attempts: attempt };
    const retryAfter = retryAfterMs(response.headers.get("retry-after"));
    if (
      response.status === 503 &&
      retryAfter !== undefined &&
      Date.now() - started < policy.unavailableMs
    ) {
      // The tool says it will be back: this try does not count against the attempts.
      lastReason = "HTTP 503";
      await sleep(Math.min(5_000, Math.max(250, retryAfter)));
      waited = true;
      attempt--;
      continue;
    }
    if (response.status >= 500 && attempt < policy.attempts) {
      lastReason = `HTTP ${response.status}`;
      continue;
    }
    return {
      ok: false,
      attempts: attempt,
      status: response.status,
      text:
        response.status === 401
          ? `Error: ${unauthorizedText(
              `RAP tool '${invocation.operation}'`,
              endpoint,
              options.auth,
              challengedScheme(response.headers.get("www-authenticate")),
              options.authWithheldFrom,
            )} No result will arrive for this call.`
          : refusedText(invocation.operation, endpoint, response.status),
    };
  }
  return {
    ok: false,
    attempts: policy.attempts,
    status: undefined,
    text: unreachableText(invocation.operation, endpoint, lastReason, policy.attempts),
  };
}

/** A Retry-After of delay-seconds, in ms (an HTTP date is read as "soon"); undefined when absent or unreadable. */
function retryAfterMs(value: string | null): number | undefined {
  if (value === null) return undefined;
  if (/^\d+$/.test(value.trim())) return Number(value.trim()) * 1000;
  return Number.isNaN(Date.parse(value)) ? undefined : 1000;
}
