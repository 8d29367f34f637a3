/** The tool side's typed errors: what a handler throws to steer the result, and what a bad configuration throws. */

import { AgentAuthError } from "../../core/errors.ts";

/**
 * Thrown by an operation handler to fail the call with a message meant for the user (and the LLM): it becomes the
 * `tool_result` text after `Error: `. Any other thrown value becomes a generic message, so internals never leak.
 */
export class OperationError extends AgentAuthError {
  constructor(message: string, options?: { cause?: unknown }) {
    super("operation_failed", message, options);
  }
}

/**
 * Thrown by an operation handler when the provider's API refused the access token (HTTP 401, `invalid_token`):
 * the tool refreshes once and retries, and if that does not help it asks the user to authorize again.
 */
export class TokenRejectedError extends AgentAuthError {
  /**
   * Set when the API answered 403 `insufficient_scope` (RFC 6750 §3.1): the scopes a new grant needs (space-separated:
   * what the call now requires, plus any the tool always asks for). The tool adds the user's granted scopes (from
   * the vault) so the new grant keeps them; a refresh cannot add scopes, so the tool skips it and asks the person to
   * authorize again for the union (once per call).
   */
  readonly scope?: string;
  /**
   * With `scope`: just the scopes the API's challenge named (space-separated). When the user's grant holds them all
   * already, asking again would not help (`step_up_adds_nothing`). Absent: `scope` is taken as what is required.
   */
  readonly required?: string;

  constructor(
    message = "The provider refused the access token.",
    options?: { cause?: unknown; scope?: string; required?: string },
  ) {
    super("token_rejected", message, options);
    if (options?.scope !== undefined) this.scope = options.scope;
    if (options?.required !== undefined) this.required = options.required;
  }
}

/** The tool server's configuration is unusable (an invalid inputSchema, an unknown provider, an insecure URL). */
export class ToolConfigError extends AgentAuthError {}
