/** The options and results of the client journey's public API (see auth-client.ts). */

import type { Secret } from "../../core/secret.ts";
import type { AgentStderr } from "./agent-process.ts";
import type { AuthMethodType, EnvVarSpec } from "./auth-methods.ts";
import type { AuthStatus } from "./auth-status.ts";
import type { ClientIdentity, ProtocolVersion } from "./protocol.ts";
import type { TerminalInvocation, TerminalRunner } from "./terminal.ts";
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
  /**
   * Runs terminal auth methods where the person can interact. Given: `auth.terminal` is advertised (and, in v1,
   * `clientCapabilities._meta["terminal-auth"]`, the legacy opt-in).
   */
  runTerminal?: TerminalRunner;
  /**
   * Why terminal logins cannot run now although `runTerminal` is given (e.g. "stdin is not a terminal"): they stay
   * advertised and listed, and choosing one fails with `AcpMethodUnsupportedError` carrying this reason. A function
   * gets the method and whether running it will need `confirmCommand` (an agent-named command or agent-chosen
   * variables), so the reason can name everything the caller then needs.
   */
  terminalRefusal?:
    | string
    | ((method: { id: string; name: string }, needsConsent: boolean) => string);
  /**
   * Asked before a terminal login that runs a command the agent named itself (legacy `_meta["terminal-auth"]`) or
   * sets environment variables the agent chose (`invocation.extraEnv` not empty); resolve true to run it. Absent, or
   * false: `AcpCommandNotConfirmedError`. It may also throw its own error (e.g. "no terminal to ask on").
   */
  confirmCommand?: (invocation: TerminalInvocation, commandLine: string) => Promise<boolean>;
  /** Told the command line of every other terminal login, just before it runs, so the person sees what runs. */
  showCommand?: (invocation: TerminalInvocation, commandLine: string) => void;
  /** Asks the person for a legacy `env_var` method's variables; `undefined` means they declined. */
  onEnvVars?: (request: EnvVarRequest) => Promise<Record<string, string | Secret> | undefined>;
  /** Called when the known state changes (a query or an `auth/status_update` notification). */
  onStatusChange?: (status: AuthStatus) => void;
  /**
   * Every `session/update` notification's params as the agent sent them (agent message chunks, tool calls…):
   * unvalidated and unsanitised; check the shape and use `peerText` before showing any of it.
   */
  onSessionUpdate?: (params: unknown) => void;
  /** The agent's stderr. Default: ignored. */
  stderr?: AgentStderr;
  /**
   * Each stdout line that is not JSON-RPC, dropped before the SDK (gemini-cli prints its sign-in URL there), as the
   * agent wrote it: sanitise before showing (`peerText`/`peerUrl`).
   */
  onStrayStdout?: (line: string) => void;
  /** Ends every pending request and closes the client. */
  signal?: AbortSignal;
  timeouts?: {
    /** Default 30 s. */
    initializeMs?: number;
    /** `auth/status`, `getAuthState`, `logout`. Default 30 s. */
    requestMs?: number;
    /** An `agent` login, which waits for a person. Default 10 min. */
    loginMs?: number;
    /** A terminal login (the process the person interacts with). Default 10 min. */
    terminalMs?: number;
    /** An `agent` login that has shown no URL this long gets `onStillWaiting`. Default 15 s. */
    silentMs?: number;
    /**
     * An agent advertising `_meta.authStatus` (claude-agent-acp) pushes `_auth/status_update` shortly after
     * `initialize` (measured 0.35–0.9 s) and answers no query: how long `status()` waits for that push. Default 2 s.
     */
    statusPushMs?: number;
  };
  /** Largest message accepted from the agent. Default: the SDK's (32 MiB). */
  maxMessageBytes?: number;
  /** Try the draft's `getAuthState` even when not advertised (−32601 reads as absent). Default true. */
  probeGetAuthState?: boolean;
}

export interface LoginOptions {
  signal?: AbortSignal;
  /**
   * An API key, sent the way the agent reads it (method-needs.ts): `_meta["api-key"]` as a plain string (gemini-cli),
   * `_meta["api-key"].apiKey` for an agent built on agentauth, or the variable an `env_var` method or a known agent
   * reads (codex-acp `CODEX_API_KEY`, qwen-code `OPENAI_API_KEY`; the agent is restarted with it). Without a method
   * id, a method that takes a key is preferred. A method that takes none: `AcpMethodUnsupportedError`.
   */
  apiKey?: Secret;
  /** Called when an `agent` login starts waiting for the agent (which may wait for a person). */
  onWaiting?: (method: { id: string; name: string; type: AuthMethodType }) => void;
  /**
   * Called once when an `agent` login has shown no URL for `timeouts.silentMs` (codex-acp's `chatgpt` shows nothing
   * anywhere): `message` says what the person can do instead. It keeps waiting.
   */
  onStillWaiting?: (info: { method: { id: string; name: string }; message: string }) => void;
  /**
   * After a login with a key or variables that leaves the state `unknown` (no agent measured reports it), open a
   * session (`session/new` in `cwd`, closed again where the agent supports `session/close`) to confirm. Default true.
   */
  verify?: boolean;
}

/**
 * What a login established, from the state asked for afterwards:
 * - `signed_in`: the agent reports `authenticated`;
 * - `session_opened`: the agent does not report its state, and a session opened after a key login (`verify`): it
 *   accepts work; a key it checks only when used is still unproven;
 * - `accepted_unverified`: the login step succeeded but the agent does not report its state (`unknown`): it may or
 *   may not be signed in; a session will tell;
 * - `still_signed_out`: the login step succeeded and the agent still reports `unauthenticated`, or refused the
 *   confirming session with `auth_required` (its words in `status.reason`).
 */
export type LoginResult =
  | "signed_in"
  | "session_opened"
  | "accepted_unverified"
  | "still_signed_out";

export interface LoginOutcome {
  method: { id: string; name: string; type: AuthMethodType };
  /** The state after the login (queried again). */
  status: AuthStatus;
  outcome: LoginResult;
  /** `outcome === "signed_in"`: never true on a state the agent did not report. */
  authenticated: boolean;
  /** Where the key lives now, when the person must act on it ("set GEMINI_API_KEY where your editor starts …"). */
  note?: string;
}

export interface RequestOptions {
  signal?: AbortSignal;
  /** No limit by default: prompts run as long as they run. */
  timeoutMs?: number;
  /** Sign in and retry once on `auth_required`. Default true. */
  login?: boolean;
}

export const DEFAULT_TIMEOUTS = {
  initializeMs: 30_000,
  requestMs: 30_000,
  loginMs: 10 * 60_000,
  terminalMs: 10 * 60_000,
  silentMs: 15_000,
  statusPushMs: 2_000,
};
