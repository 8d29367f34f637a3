/**
 * Best-effort notices to tool servers: `POST {base}/close_thread` and `POST {base}/cancel_tool_call` (RAP §Thread
 * closure, §Cancellation): one attempt, never retried, never followed through a redirect; the outcome only logged.
 * Also the answer to a `user_choice` (`POST response_url`), sent the same way.
 */

import type { InvocationAuth } from "../invocation-auth.ts";
import { networkReason } from "./http.ts";
import { authHeaders } from "./toolset-config.ts";

export const NOTICE_TIMEOUT_MS = 5000;

export type NoticeOutcome = { ok: true } | { ok: false; reason: string };

export async function sendNotice(
  url: string,
  body: Record<string, unknown>,
  options: { fetch?: typeof fetch; timeoutMs?: number; auth?: InvocationAuth } = {},
): Promise<NoticeOutcome> {
  try {
    const text = JSON.stringify(body);
    const auth = authHeaders(options.auth, { method: "POST", url, body: text });
    const response = await (options.fetch ?? fetch)(url, {
      method: "POST",
      headers: { "content-type": "application/json", ...auth },
      body: text,
      redirect: "manual",
      signal: AbortSignal.timeout(options.timeoutMs ?? NOTICE_TIMEOUT_MS),
    });
    await response.body?.cancel().catch(() => {});
    if (response.status === 200) return { ok: true };
    return {
      ok: false,
      reason:
        response.status === 401
          ? "HTTP 401: the tool refused the runtime's credentials (check the invocation scheme and secret)"
          : `HTTP ${response.status}`,
    };
  } catch (error) {
    return { ok: false, reason: networkReason(error) };
  }
}
