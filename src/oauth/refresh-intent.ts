/**
 * The refresh intent a refresher writes on its lease just before the token request: when it started and which
 * refresh token it sent (as a fingerprint). A process killed after the server rotated the token and before the new
 * one was stored leaves this behind; the next refresher reads it to explain the invalid_grant that follows.
 */

import { createHash } from "node:crypto";
import type { Secret } from "../core/secret.ts";

export interface RefreshIntent {
  /** When the request was about to leave, ms since the epoch. */
  at: number;
  /** The first 16 hex digits of SHA-256 over the refresh token: identifies it without revealing it. */
  refreshToken: string;
}

export function refreshTokenFingerprint(token: Secret | undefined): string {
  return createHash("sha256")
    .update(token?.reveal() ?? "")
    .digest("hex")
    .slice(0, 16);
}

export function encodeRefreshIntent(intent: RefreshIntent): string {
  return JSON.stringify({ v: 1, at: intent.at, refreshToken: intent.refreshToken });
}

/** Undefined for anything that is not an intent this module wrote (another lease user's note, a hand edit). */
export function decodeRefreshIntent(note: string | undefined): RefreshIntent | undefined {
  if (note === undefined || note.length > 200) return undefined;
  let value: unknown;
  try {
    value = JSON.parse(note);
  } catch {
    return undefined;
  }
  if (typeof value !== "object" || value === null) return undefined;
  const { v, at, refreshToken } = value as Record<string, unknown>;
  if (v !== 1 || typeof at !== "number" || !Number.isFinite(at)) return undefined;
  if (typeof refreshToken !== "string" || !/^[0-9a-f]{16}$/.test(refreshToken)) return undefined;
  return { at, refreshToken };
}
