/** The AHP host's MCP bridge: MCP servers a host uses for a session, their auth state in the official shape, clients' tokens for them. */
export { McpBridge, type McpSubscriber, type SessionMcpServers } from "./bridge.ts";
export { McpBridgeError, McpServerAuthRequired } from "./errors.ts";
export { HostMcpServer, type McpServerSpec } from "./server.ts";
export { advertisedMetadata, authRequiredState, cleanScopes } from "./state.ts";
