/** agentauth/mcp: the authorization layer of MCP clients and servers (issue 12). */
export {
  type AgentAuthProvider,
  type AgentAuthProviderOptions,
  agentAuthProvider,
  type ClientMetadataDocument,
  type ClientMetadataDocumentOptions,
  canonicalMcpServerUrl,
  checkClientIdUrl,
  clientMetadataDocument,
  discoverServerMetadata,
  displayMcpServerUrl,
  McpAuthError,
  McpServerUrlError,
  type McpServerUrlOptions,
  readUnauthorized,
  type ScopeChallenge,
  type SignInMethod,
  scopesFor,
  scopeUnion,
  type UnauthorizedHints,
} from "./client/index.ts";
export * from "./server/index.ts";
