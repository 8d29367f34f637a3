/** The MCP client side: an official-SDK `AuthProvider` on agentauth's OAuth engine and vault. */
export { readUnauthorized, type UnauthorizedHints } from "./challenge.ts";
export { McpAuthError } from "./errors.ts";
export {
  type AgentAuthProvider,
  type AgentAuthProviderOptions,
  agentAuthProvider,
  type ScopeChallenge,
} from "./provider.ts";
export { discoverServerMetadata, scopesFor } from "./sign-in.ts";
export { scopeUnion } from "./step-up.ts";
