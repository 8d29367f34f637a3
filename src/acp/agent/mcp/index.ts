/** The agent kit's MCP side: sign-in to the OAuth-protected MCP servers a client passes in `session/new`. */
export type { McpServerAccount, McpServerState } from "./accounts.ts";
export { type McpBridgeDeps, type McpOptions, McpServerAuth } from "./bridge.ts";
export { McpServerAuthError } from "./errors.ts";
export { observeSessions } from "./observe.ts";
export { DEFAULT_PROBE_TIMEOUT_MS, type ProbeResult, probeMcpServer } from "./probe.ts";
export {
  DEFAULT_MAX_SERVERS_PER_SESSION,
  readSessionServers,
  type SessionMcpServer,
} from "./servers.ts";
