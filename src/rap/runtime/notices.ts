/**
 * Best-effort notices to tool servers: `POST {base}/close_thread` and `POST {base}/cancel_tool_call` (RAP §Thread
 * closure, §Cancellation): one attempt, never retried, never followed through a redirect; the outcome only logged.
 * Also the answer to a `user_choice` (`POST response_url`), sent the same way.
 */

import { networkReason } from "./http.ts";

export const NOTICE_TIMEOUT_MS = 5000;

export type NoticeOutcome = { ok: true } | { ok: false; reason: string };

export async function sendNotice(
  url: string,
  body: Record<string, unknown>,
  options: { fetch?: typeof fetch; timeoutMs?: number } = {},
): Promise<NoticeOutcome> {
  try {
    const response = await (options.fetch ?? fetch)(url, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(body),
      redirect: "manual",
      signal: AbortSignal.timeout(options.timeoutMs ?? NOTICE_TIMEOUT_MS),
    });
    await response.body?.cancel().catch(() => {});
    return response.status === 200
      ? { ok: true }
      : { ok: false, reason: `HTTP ${response.status}` };
  } catch (error) {
    return { ok: false, reason: networkReason(error) };
  }
}
