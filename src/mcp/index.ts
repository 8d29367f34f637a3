/** agentauth/mcp: the authorization layer of MCP clients and servers (issue 12). */
export {
  type AgentAuthProvider,
  type AgentAuthProviderOptions,
  agentAuthProvider,
  discoverServerMetadata,
  McpAuthError,
  readUnauthorized,
  scopesFor,
  type UnauthorizedHints,
} from "./client/index.ts";
export * from "./server/index.ts";
