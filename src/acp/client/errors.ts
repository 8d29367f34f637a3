/**
 * The ACP client journey's typed errors: one class per kind of failure, a stable `code`, a message that says what
 * to do next. Messages may quote what the agent said (its JSON-RPC error message and `data.details`/`data.message`,
 * through `peerText`), never its `_meta` or other `data`.
 */

import { AgentAuthError } from "../../core/errors.ts";

/** The agent program could not be started (not found, not executable). */
export class AcpSpawnError extends AgentAuthError {
  declare readonly code: "acp_spawn_failed";
  constructor(message: string, options?: { cause?: unknown }) {
    super("acp_spawn_failed", message, options);
  }
}

/** `initialize` failed: an error answer, an unsupported protocol version, or no answer in time. */
export class AcpInitializeError extends AgentAuthError {
  declare readonly code: "acp_initialize_failed";
  constructor(message: string, options?: { cause?: unknown }) {
    super("acp_initialize_failed", message, options);
  }
}

/** The agent process ended while we were talking to it. */
export class AcpAgentExitedError extends AgentAuthError {
  declare readonly code: "acp_agent_exited";
  readonly exitCode: number | null;
  readonly signal: NodeJS.Signals | null;
  constructor(
    message: string,
    options: { exitCode: number | null; signal: NodeJS.Signals | null; cause?: unknown },
  ) {
    super("acp_agent_exited", message, options);
    this.exitCode = options.exitCode;
    this.signal = options.signal;
  }
}

/** The agent's stdout is not usable ACP: a message over the size limit, or a stream error. */
export class AcpProtocolError extends AgentAuthError {
  declare readonly code: "acp_protocol_error";
  constructor(message: string, options?: { cause?: unknown }) {
    super("acp_protocol_error", message, options);
  }
}

/**
 * The agent asked a question on its stdout and waits for the answer on its stdin, which carries ACP (gemini-cli's
 * `oauth-personal` code prompt): it was stopped without being written to. `prompt` is the question, sanitised.
 */
export class AcpAgentPromptedError extends AgentAuthError {
  declare readonly code: "acp_agent_prompted";
  readonly prompt: string;
  constructor(message: string, prompt: string) {
    super("acp_agent_prompted", message);
    this.prompt = prompt;
  }
}

/** The requested auth method is not advertised, or the agent advertises none this client can run. */
export class AcpMethodNotAdvertisedError extends AgentAuthError {
  declare readonly code: "acp_method_not_advertised";
  constructor(message: string) {
    super("acp_method_not_advertised", message);
  }
}

/** The method is advertised but this caller cannot run it (unknown type, or a terminal without a terminal). */
export class AcpMethodUnsupportedError extends AgentAuthError {
  declare readonly code: "acp_method_unsupported";
  constructor(message: string) {
    super("acp_method_unsupported", message);
  }
}

/** v1 `agentCapabilities.auth.logout` absent, or v2 `authMethods` empty: the spec forbids calling logout. */
export class AcpLogoutUnsupportedError extends AgentAuthError {
  declare readonly code: "acp_logout_unsupported";
  constructor(message: string) {
    super("acp_logout_unsupported", message);
  }
}

/** The terminal login process exited non-zero, was killed, or could not be started. */
export class AcpTerminalLoginError extends AgentAuthError {
  declare readonly code: "acp_terminal_login_failed";
  readonly exitCode: number | null;
  constructor(message: string, options: { exitCode: number | null; cause?: unknown }) {
    super("acp_terminal_login_failed", message, options);
    this.exitCode = options.exitCode;
  }
}

/**
 * A method needs variables in the agent's environment that nobody supplied (a legacy `env_var` method's, or what a
 * known agent's method reads: agent-quirks.ts). Nothing was sent to the agent. `acceptsKey`: a key given to the
 * login would have stood for one of them.
 */
export class AcpEnvVarsMissingError extends AgentAuthError {
  declare readonly code: "acp_env_vars_missing";
  readonly missing: readonly string[];
  readonly acceptsKey: boolean;
  constructor(message: string, missing: readonly string[], options: { acceptsKey?: boolean } = {}) {
    super("acp_env_vars_missing", message);
    this.missing = missing;
    this.acceptsKey = options.acceptsKey === true;
  }
}

/**
 * A login that would choose a method on its own, for an agent whose sign-in cannot be told (it reports no state and a
 * session neither opened nor was refused for want of one): choosing could replace a working sign-in.
 */
export class AcpSignInUnknownError extends AgentAuthError {
  declare readonly code: "acp_sign_in_unknown";
  constructor(message: string) {
    super("acp_sign_in_unknown", message);
  }
}

/** `authenticate` / `auth/login` answered with an error. */
export class AcpLoginError extends AgentAuthError {
  declare readonly code: "acp_login_failed";
  readonly rpcCode: number | undefined;
  constructor(message: string, options?: { rpcCode?: number; cause?: unknown }) {
    super("acp_login_failed", message, options);
    this.rpcCode = options?.rpcCode;
  }
}

/** Still `auth_required` (−32000) after one login and one retry: reported, never looped. */
export class AcpAuthRequiredError extends AgentAuthError {
  declare readonly code: "acp_auth_required";
  constructor(message: string, options?: { cause?: unknown }) {
    super("acp_auth_required", message, options);
  }
}

/** Any other JSON-RPC error answer to a request passed through `request()`. */
export class AcpRequestError extends AgentAuthError {
  declare readonly code: "acp_request_failed";
  readonly rpcCode: number;
  constructor(message: string, options: { rpcCode: number; cause?: unknown }) {
    super("acp_request_failed", message, options);
    this.rpcCode = options.rpcCode;
  }
}

/** A terminal login names a command of the agent's choosing (legacy `_meta["terminal-auth"]`) and nobody agreed to run it. */
export class AcpCommandNotConfirmedError extends AgentAuthError {
  declare readonly code: "acp_command_not_confirmed";
  constructor(message: string) {
    super("acp_command_not_confirmed", message);
  }
}

/** A request got no answer within its time limit. */
export class AcpTimeoutError extends AgentAuthError {
  declare readonly code: "acp_timeout";
  constructor(message: string) {
    super("acp_timeout", message);
  }
}

/** The caller's AbortSignal ended the operation. */
export class AcpCancelledError extends AgentAuthError {
  declare readonly code: "acp_cancelled";
  constructor(message = "The operation was cancelled.") {
    super("acp_cancelled", message);
  }
}

/** The client was closed; open a new one with `connectAgent`. */
export class AcpClosedError extends AgentAuthError {
  declare readonly code: "acp_closed";
  constructor(message = "The ACP client is closed; connect again.") {
    super("acp_closed", message);
  }
}
