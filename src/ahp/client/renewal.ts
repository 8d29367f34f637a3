/**
 * When a long-lived connection renews a token before it expires, pure: a lead of a quarter of the remaining
 * lifetime (so a 3 s token is renewed after ~2.25 s), at most 60 s, at least 500 ms; never sooner than 1 s from
 * now so a server minting very short tokens cannot make the client spin.
 */

const MAX_LEAD_MS = 60_000;
const MIN_LEAD_MS = 500;
const MIN_DELAY_MS = 1_000;

export function renewalDelayMs(expiresAt: number | undefined, now: number): number | undefined {
  if (expiresAt === undefined) return undefined;
  const remaining = expiresAt - now;
  const lead = Math.min(MAX_LEAD_MS, Math.max(MIN_LEAD_MS, remaining / 4));
  // setTimeout fires at once for delays above 2^31-1 ms (~24.8 days): cap, and the timer re-arms when it fires early.
  return Math.min(MAX_TIMER_MS, Math.max(MIN_DELAY_MS, Math.floor(remaining - lead)));
}

/** The longest delay setTimeout honours. */
export const MAX_TIMER_MS = 2_147_483_647;
