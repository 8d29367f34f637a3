/**
 * RFC 8628 polling rules oidc-provider 9 lacks: it neither advertises `interval` (§3.2) nor answers `slow_down`
 * (§3.5); clients must be tested against a server that enforces both. The per-code poll clocks are bounded: only
 * codes the server answered `authorization_pending` for get one (bogus codes cost nothing), clocks older than the
 * enforced interval are pruned, and a hard cap evicts the oldest.
 */

import { createHash } from "node:crypto";
import type { KoaContextWithOIDC } from "oidc-provider";

const DEVICE_GRANT = "urn:ietf:params:oauth:grant-type:device_code";
/** Far above any honest load on a local server (each entry is one pending device login). */
export const MAX_DEVICE_POLL_CLOCKS = 10_000;

export interface DevicePollingOptions {
  advertisedSeconds: number;
  enforcedSeconds: number;
  onSlowDown: () => void;
}

export interface DevicePolling {
  middleware: (ctx: KoaContextWithOIDC, next: () => Promise<void>) => Promise<void>;
  /** How many poll clocks are kept (after pruning stale ones). */
  size(): number;
}

export function devicePolling(options: DevicePollingOptions): DevicePolling {
  const enforcedMs = options.enforcedSeconds * 1000;
  // Insertion order is poll order (an entry is re-inserted on each poll), so the oldest clocks come first.
  const lastPoll = new Map<string, number>();
  const prune = (now: number) => {
    for (const [key, at] of lastPoll) {
      if (now - at < enforcedMs && lastPoll.size <= MAX_DEVICE_POLL_CLOCKS) break;
      lastPoll.delete(key);
    }
  };
  return {
    size() {
      prune(Date.now());
      return lastPoll.size;
    },
    async middleware(ctx, next) {
      await next();
      if (ctx.method !== "POST") return;
      const body = ctx.body as Record<string, unknown> | undefined;
      if (ctx.path === "/device/auth" && ctx.status === 200 && body?.device_code) {
        ctx.body = { ...body, interval: options.advertisedSeconds };
        return;
      }
      if (ctx.path !== "/token" || ctx.oidc?.params?.grant_type !== DEVICE_GRANT) return;
      if (body?.error !== "authorization_pending") return;
      const key = createHash("sha256").update(String(ctx.oidc.params.device_code)).digest("hex");
      const now = Date.now();
      const last = lastPoll.get(key);
      lastPoll.delete(key);
      lastPoll.set(key, now);
      prune(now);
      if (last !== undefined && now - last < enforcedMs) {
        options.onSlowDown();
        ctx.body = {
          error: "slow_down",
          error_description: `poll at most every ${options.enforcedSeconds} seconds`,
        };
      }
    },
  };
}
