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
  constructor(message = "The provider refused the access token.", options?: { cause?: unknown }) {
    super("token_rejected", message, options);
  }
}

/** The tool server's configuration is unusable (an invalid inputSchema, an unknown provider, an insecure URL). */
export class ToolConfigError extends AgentAuthError {}
