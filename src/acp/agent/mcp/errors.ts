/** Typed failures of the kit's MCP sign-in: each says what happened and what the agent or the person can do next. */

import { AgentAuthError } from "../../../core/errors.ts";

/**
 * Codes: `unknown_session`, `unknown_server`, `client_managed` (the client sent its own Authorization header),
 * `invalid_server_url`, `credentials_in_url`, `insecure_server_url` (plain http off loopback), `too_many_servers`, `sign_in_declined`, `sign_in_cancelled`,
 * `no_client` (no ACP client is connected to ask), `unreachable`, `probe_timeout`, `unexpected_redirect`,
 * `server_error` / `not_found` (the probe's HTTP 5xx / 404).
 */
export class McpServerAuthError extends AgentAuthError {}
