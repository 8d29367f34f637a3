/**
 * The `Idempotency-Key` request header on callback deliveries (IETF draft-ietf-httpapi-idempotency-key-header):
 * the tool sends one per message, the same on every retry of it, so a runtime (any instance) can apply a message
 * once however often it arrives. The draft makes the value a Structured Field String (`"…"`); a bare token is
 * accepted too. 1..255 visible ASCII characters (no space, no control, nothing outside ASCII); anything else is
 * refused with 400 rather than guessed at, since a mangled key would silently defeat deduplication.
 *
 * A key is scoped to the call whose capability URL the message came to (`callDeliveryKey`), not only to the thread:
 * several tools (or several calls of one tool) share a thread, and each may count its keys from 1. Keyed per thread,
 * one tool's key suppressed another's `tool_result` (answered 200 duplicate, never retried, the call pending until
 * its timeout; issue 20 §1.2). The capability already binds a message to one call, so the scope costs nothing.
 */

export const IDEMPOTENCY_KEY_HEADER = "idempotency-key";
export const MAX_IDEMPOTENCY_KEY_LENGTH = 255;

export type KeyCheck = { ok: true; key: string | undefined } | { ok: false; problem: string };

/** Pure: the key a request carries (undefined without the header), or why the header is unusable. */
export function parseIdempotencyKey(header: string | string[] | undefined): KeyCheck {
  if (header === undefined) return { ok: true, key: undefined };
  const several = { ok: false, problem: "send one Idempotency-Key header, not several" } as const;
  if (Array.isArray(header)) return several;
  let value = header.trim();
  // The quoted form first: a comma inside one quoted string is part of the key, not a list separator (refusing
  // `"a,b"` with a 400 would tell the tool never to retry, and the message would be dropped).
  if (value.length >= 2 && value.startsWith('"') && value.endsWith('"')) {
    value = value.slice(1, -1);
    if (/["\\]/.test(value)) {
      if (value.includes(",")) return several; // `"a", "b"`: two quoted values joined by the HTTP layer
      return {
        ok: false,
        problem: "the quoted Idempotency-Key must not contain quotes or backslashes",
      };
    }
  } else if (value.includes(",")) {
    return several;
  }
  if (value.length === 0) return { ok: false, problem: "the Idempotency-Key is empty" };
  if (value.length > MAX_IDEMPOTENCY_KEY_LENGTH) {
    return {
      ok: false,
      problem: `the Idempotency-Key is longer than ${MAX_IDEMPOTENCY_KEY_LENGTH} characters`,
    };
  }
  if (!/^[\x21-\x7e]+$/.test(value)) {
    return {
      ok: false,
      problem: "the Idempotency-Key must be visible ASCII characters only (no spaces or controls)",
    };
  }
  return { ok: true, key: value };
}

/**
 * Pure: the key recorded for a delivery: the call it came for (the capability's `id`) and the tool's key, as one
 * unambiguous string (JSON escapes whatever the call id holds).
 */
export function callDeliveryKey(callId: string, key: string): string {
  return JSON.stringify([callId, key]);
}
