/** The options and results of the client journey's public API (see auth-client.ts). */

import type { Secret } from "../../core/secret.ts";
import type { AgentStderr } from "./agent-process.ts";
import type { AuthMethodType, EnvVarSpec } from "./auth-methods.ts";
import type { AuthStatus } from "./auth-status.ts";
import type { ClientIdentity, ProtocolVersion } from "./protocol.ts";
import type { TerminalRunner } from "./terminal.ts";
import type { UrlPrompt } from "./url-prompt.ts";

/** What a legacy `env_var` method asks the person for. */
export interface EnvVarRequest {
  method: { id: string; name: string; description?: string; link?: string };
  vars: readonly EnvVarSpec[];
  /** Required variables the agent's environment does not have yet. */
  missing: readonly string[];
}

export interface ConnectAgentOptions {
  /** ACP v1 (default) or the v2 draft (`auth/login`, `auth/logout`, `methodId`, `capabilities`, `info`). */
  protocolVersion?: ProtocolVersion;
  cwd?: string;
  /** The agent's base environment. Default: `process.env`. */
  env?: NodeJS.ProcessEnv;
  clientInfo?: ClientIdentity;
  /** Hands a login URL (and device code) to the person. Given: URL-mode elicitation is advertised. */
  onUrl?: (prompt: UrlPrompt) => void | Promise<void>;
  /** Runs terminal auth methods where the person can interact. Given: `auth.terminal` is advertised. */
  runTerminal?: TerminalRunner;
  /** Asks the person for a legacy `env_var` method's variables; `undefined` means they declined. */
  onEnvVars?: (request: EnvVarRequest) => Promise<Record<string, string | Secret> | undefined>;
  /** Called when the known state changes (a query or an `auth/status_update` notification). */
  onStatusChange?: (status: AuthStatus) => void;
  /** The agent's stderr. Default: ignored. */
  stderr?: AgentStderr;
  /** Ends every pending request and closes the client. */
  signal?: AbortSignal;
  timeouts?: {
    /** Default 30 s. */
    initializeMs?: number;
    /** `auth/status`, `getAuthState`, `logout`. Default 30 s. */
    requestMs?: number;
    /** An `agent` login, which waits for a person. Default 10 min. */
    loginMs?: number;
  };
  /** Largest message accepted from the agent. Default: the SDK's (32 MiB). */
  maxMessageBytes?: number;
  /** Try the draft's `getAuthState` even when not advertised (−32601 reads as absent). Default true. */
  probeGetAuthState?: boolean;
}

export interface LoginOptions {
  signal?: AbortSignal;
  /** For `agent` methods that take an API key: sent as `_meta["api-key"].apiKey` (codex-acp, gemini-cli). */
  apiKey?: Secret;
}

export interface LoginOutcome {
  method: { id: string; name: string; type: AuthMethodType };
  /** The state after the login (queried again). */
  status: AuthStatus;
  /** The login step succeeded and the agent does not report `unauthenticated` afterwards. */
  authenticated: boolean;
}

export interface RequestOptions {
  signal?: AbortSignal;
  /** No limit by default: prompts run as long as they run. */
  timeoutMs?: number;
  /** Sign in and retry once on `auth_required`. Default true. */
  login?: boolean;
}

export const DEFAULT_TIMEOUTS = { initializeMs: 30_000, requestMs: 30_000, loginMs: 10 * 60_000 };
