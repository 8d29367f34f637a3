/** Typed failures of the MCP client provider: each says what happened and what the host should do next. */

import { AgentAuthError } from "../../core/errors.ts";

/**
 * The MCP server's 401 could not be acted on (malformed or hostile `WWW-Authenticate`, metadata on another origin),
 * or a sign-in is needed and the host gave no way to ask the person. Codes: `login_required`,
 * `challenge_malformed`, `resource_metadata_cross_origin`, `no_authorization_server`, `invalid_server_url`,
 * `step_up_exhausted`, `step_up_adds_nothing`, `registration_unavailable` (no pre-registered
 * client, no usable client metadata document, no dynamic registration), `client_metadata_invalid` (a client
 * metadata document or its URL breaks the draft's rules), `sign_in_unavailable` (the chosen sign-in method has no
 * callback), `device_flow_unsupported` (the device flow was asked for and the server has none).
 */
export class McpAuthError extends AgentAuthError {}
