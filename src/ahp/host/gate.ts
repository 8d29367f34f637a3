/**
 * The transport gate, checked on the WebSocket upgrade before any `initialize` (AHP threat model: authenticate
 * peers before `initialize`, check Origin). Pure: a verdict from the request headers.
 *
 * Origin: browsers always send it on WebSocket upgrades and non-browser clients usually do not, so a request
 * *with* an Origin must match the allow-list (empty by default: no web page may connect, which blocks
 * cross-site WebSocket hijacking and DNS rebinding), and one without is let through to the bearer check.
 */

import { createHash, timingSafeEqual } from "node:crypto";
import type { IncomingHttpHeaders } from "node:http";
import { Secret } from "../../core/secret.ts";
import { buildBearerChallenge, parseAuthorizationBearer } from "../../oauth/index.ts";

export interface TransportGateOptions {
  /** The bearer the upgrade request must carry (`Authorization: Bearer …`), or a function judging it. */
  bearer?: string | Secret | ((token: Secret) => boolean | Promise<boolean>);
  /** Exact origins (`scheme://host[:port]`) allowed to connect from a browser. Default none. */
  allowedOrigins?: readonly string[];
  realm?: string;
}

export type GateVerdict =
  | { ok: true }
  | { ok: false; status: 400 | 401 | 403; reason: string; headers: Record<string, string> };

export async function checkGate(
  headers: IncomingHttpHeaders,
  options: TransportGateOptions,
): Promise<GateVerdict> {
  const origin = headers.origin;
  if (origin !== undefined && !(options.allowedOrigins ?? []).includes(origin)) {
    return { ok: false, status: 403, reason: "origin not allowed", headers: {} };
  }
  if (options.bearer === undefined) return { ok: true };
  const realm = options.realm ?? "ahp";
  const parsed = parseAuthorizationBearer(headers.authorization);
  if (parsed.kind === "missing") {
    return refuse(401, "bearer token missing", buildBearerChallenge({ realm }).header);
  }
  if (parsed.kind === "malformed") {
    return refuse(
      400,
      "malformed Authorization header",
      buildBearerChallenge({ realm, error: "invalid_request" }).header,
    );
  }
  const presented = new Secret(parsed.token);
  const expected = options.bearer;
  const ok =
    typeof expected === "function" ? await expected(presented) : sameSecret(presented, expected);
  if (!ok) {
    return refuse(
      401,
      "bearer token refused",
      buildBearerChallenge({ realm, error: "invalid_token" }).header,
    );
  }
  return { ok: true };
}

function refuse(status: 400 | 401, reason: string, challenge: string): GateVerdict {
  return { ok: false, status, reason, headers: { "www-authenticate": challenge } };
}

/** Constant-time over fixed-length digests, so neither content nor length leaks through timing. */
function sameSecret(a: Secret, b: string | Secret): boolean {
  const digest = (s: string) => createHash("sha256").update(s).digest();
  return timingSafeEqual(digest(a.reveal()), digest(typeof b === "string" ? b : b.reveal()));
}
