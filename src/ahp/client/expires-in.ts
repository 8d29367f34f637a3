/**
 * official AHP `authenticate.expiresIn`: the OAuth `expires_in` (RFC 6749 §5.1) remaining *when the request is sent*.
 * The host and client clocks need not agree, so the client sends a duration computed from its own clock against
 * the stored absolute expiry, floored to whole seconds, and omits it when the expiry is unknown.
 */

/**
 * Seconds left at `now`, floored; `undefined` when the expiry is unknown; 0 when less than a second is left (the
 * caller must renew instead of sending it: the wire minimum is 1).
 */
export function remainingSeconds(expiresAt: number | undefined, now: number): number | undefined {
  if (expiresAt === undefined) return undefined;
  return Math.max(0, Math.floor((expiresAt - now) / 1000));
}
