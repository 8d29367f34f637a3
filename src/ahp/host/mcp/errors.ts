/** Typed failures of the host's MCP bridge: each says what happened and what the host author or caller does next. */

import { AgentAuthError } from "../../../core/errors.ts";
import type { McpServerState } from "../../wire.ts";

/**
 * The bridge could not be used as asked. Codes: `mcp_sdk_missing` (the optional peer is not installed),
 * `sessions_not_served`, `session_not_found`, `server_name_taken`, `invalid_server`, `server_closed`.
 */
export class McpBridgeError extends AgentAuthError {}

/**
 * An MCP call could not be made because the MCP server wants (another) token: the session's subscribers were told
 * through `McpServerAuthRequiredState`; retry the call once a client has authenticated (`state` says why).
 */
export class McpServerAuthRequired extends AgentAuthError {
  readonly state: McpServerState;

  constructor(serverName: string, state: McpServerState) {
    const reason = state.kind === "authRequired" ? state.reason : "required";
    super(
      "mcp_auth_required",
      `The MCP server '${serverName}' needs a client to authenticate (${reason}); the session's clients were told. Retry once one has.`,
    );
    this.state = state;
  }
}
