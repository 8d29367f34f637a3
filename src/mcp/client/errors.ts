/** Typed failures of the MCP client provider: each says what happened and what the host should do next. */

import { AgentAuthError } from "../../core/errors.ts";

/**
 * The MCP server's 401 could not be acted on (malformed or hostile `WWW-Authenticate`, metadata on another origin),
 * or a sign-in is needed and the host gave no way to ask the person. Codes: `login_required`,
 * `challenge_malformed`, `resource_metadata_cross_origin`, `no_authorization_server`.
 */
export class McpAuthError extends AgentAuthError {}
