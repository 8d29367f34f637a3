/** The MCP bridge's typed errors: a setup problem (startup) or a failed MCP call (the RAP call's error result). */

import { AgentAuthError } from "../../core/errors.ts";
import { OperationError } from "../tool/errors.ts";

/**
 * The bridge cannot be built: the MCP client SDK is not installed (`mcp_sdk_missing`), the server URL is unusable
 * (`invalid_server_url`; `server_url_query` when it carries a query, which RFC 8707 rules out for a resource), a size limit is not a positive whole number (`invalid_limits`), the server's authorization
 * cannot be discovered or registered with (`mcp_discovery_failed`, `mcp_registration_failed`), its tool list needs a
 * signed-in user or refused the given token (`mcp_tools_need_authorization`) or cannot be read
 * (`mcp_tools_unavailable`), or it offers no usable tool (`mcp_no_tools`).
 */
export class McpBridgeError extends AgentAuthError {}

/** Why an MCP call failed, stable for logs and tests. */
export type McpCallFailure =
  | "mcp_unreachable"
  | "mcp_refused"
  | "mcp_answer_malformed"
  | "mcp_result_too_large"
  | "mcp_tool_error";

/**
 * A failed MCP tool call, as the RAP call's error `tool_result`: an `OperationError` (its message is what the person
 * and the LLM read, sanitised, never the server's raw text unbounded) with a stable `reason`.
 */
export class McpCallError extends OperationError {
  readonly reason: McpCallFailure;

  constructor(reason: McpCallFailure, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.reason = reason;
  }
}
