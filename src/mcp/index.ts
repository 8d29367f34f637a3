/** agentauth/mcp: the authorization layer of MCP clients and servers (issue 12). */
export {
  type AgentAuthProvider,
  type AgentAuthProviderOptions,
  agentAuthProvider,
  discoverServerMetadata,
  McpAuthError,
  readUnauthorized,
  type ScopeChallenge,
  scopesFor,
  scopeUnion,
  type UnauthorizedHints,
} from "./client/index.ts";
export * from "./server/index.ts";
