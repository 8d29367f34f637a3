/**
 * The state fallback chain, for any agent: `auth/status` when advertised (SDK unstable schema), else the draft's
 * `getAuthState` (advertised with `getAuthState: true`, or probed: −32601 reads as absent), else the last
 * `auth/status_update` the agent sent, else `unknown` with the reason. An answer it cannot use is `unknown` with a
 * reason, never an exception; a connection that is gone (exited, cancelled) still throws.
 */

import { peerText } from "../../core/display.ts";
import { GET_AUTH_STATE } from "../wire.ts";
import {
  type AuthStatus,
  type AuthStatusCache,
  readAuthStatus,
  readGetAuthState,
  unknownStatus,
} from "./auth-status.ts";
import type { AgentConnection } from "./connection.ts";
import { AcpCancelledError, AcpTimeoutError } from "./errors.ts";
import { isMethodNotFound, RequestError } from "./rpc-errors.ts";

/** An unadvertised method is only probed; a silent agent must not stall `status()` for long. */
const PROBE_TIMEOUT_MS = 5_000;

export interface StatusQueryOptions {
  timeoutMs: number;
  /** Try `getAuthState` even when not advertised. */
  probe: boolean;
  /** The state last recorded from any source, consulted when the agent offers no way to ask. */
  notified: AuthStatus | undefined;
  signal?: AbortSignal;
}

export async function queryAuthStatus(
  connection: AgentConnection,
  options: StatusQueryOptions,
): Promise<AuthStatus> {
  const { capabilities } = connection.profile;
  const { signal, timeoutMs } = options;
  if (capabilities.status) {
    try {
      const raw = await connection.call(
        "auth/status",
        {},
        { what: "auth/status", signal, timeoutMs },
      );
      return readAuthStatus(raw, "auth/status");
    } catch (error) {
      if (!isMethodNotFound(error)) return statusFailure(error, "auth/status");
    }
  }
  const advertised = capabilities.getAuthState;
  if (advertised || options.probe) {
    const what = GET_AUTH_STATE;
    try {
      const raw = await connection.call(
        GET_AUTH_STATE,
        {},
        {
          what,
          signal,
          timeoutMs: advertised ? timeoutMs : Math.min(timeoutMs, PROBE_TIMEOUT_MS),
        },
      );
      return readGetAuthState(raw);
    } catch (error) {
      // A probe that fails in any way means "not implemented"; an advertised method's failure is reported.
      if (advertised && !isMethodNotFound(error)) return statusFailure(error, what);
      if (!advertised) rethrowIfFatal(error);
    }
  }
  if (options.notified?.source === "auth/status_update") return options.notified;
  return unknownStatus(
    "none",
    "The agent offers no way to ask for its state (neither auth/status nor getAuthState); it shows only when a " +
      "request fails with auth_required.",
  );
}

/** Failures that are about the connection, not the answer (our typed errors except timeouts): they end `status()`. */
function rethrowIfFatal(error: unknown): void {
  if (error instanceof RequestError || error instanceof AcpTimeoutError) return;
  if (error instanceof Error && "code" in error && typeof error.code === "string") throw error;
}

function statusFailure(error: unknown, what: string): AuthStatus {
  rethrowIfFatal(error);
  const source = what === "auth/status" ? "auth/status" : "getAuthState";
  if (error instanceof AcpTimeoutError) return unknownStatus(source, `${what} timed out`);
  if (error instanceof RequestError) {
    return unknownStatus(
      source,
      `${what} failed: ${peerText(error.message)} (JSON-RPC ${error.code})`,
    );
  }
  // E.g. the v2 SDK's schema validation of an answer in the RFD draft's shape.
  return unknownStatus(source, `the agent's ${what} answer is malformed`);
}

/**
 * claude-agent-acp advertises `_meta.authStatus`, answers neither `auth/status` nor `getAuthState`, and pushes
 * `_auth/status_update` 0.35–0.9 s after `initialize` (issue 8 §3.9). For an agent that declares this channel the
 * push is its word on the state, so it is waited for (up to `waitMs`) and reported as the state.
 */
export async function pushedStatus(
  cache: AuthStatusCache,
  waitMs: number,
  signal?: AbortSignal,
): Promise<AuthStatus> {
  const hint = await cache.firstHint(waitMs, signal);
  if (signal?.aborted) throw new AcpCancelledError("Asking for the state was cancelled.");
  if (hint) {
    // The label names the account only when signed in: claude-agent-acp 0.101 labels `kind: "none"` "Not logged in".
    const account = hint.state === "authenticated" && hint.label;
    return {
      state: hint.state,
      accounts: account ? [{ label: account, active: true }] : [],
      source: "_auth/status_update",
      ...(!account && hint.label ? { reason: hint.label } : {}),
    };
  }
  return unknownStatus(
    "none",
    "The agent announces its state by a push (_meta.authStatus) but did not report its state within " +
      `${waitMs / 1000} s.`,
  );
}
