/** agentauth/mcp: the authorization layer of MCP clients and servers (issue 12). */
export {
  type AgentAuthProvider,
  type AgentAuthProviderOptions,
  agentAuthProvider,
  type ClientMetadataDocument,
  type ClientMetadataDocumentOptions,
  checkClientIdUrl,
  clientMetadataDocument,
  discoverServerMetadata,
  McpAuthError,
  readUnauthorized,
  type ScopeChallenge,
  type SignInMethod,
  scopesFor,
  scopeUnion,
  type UnauthorizedHints,
} from "./client/index.ts";
export * from "./server/index.ts";
