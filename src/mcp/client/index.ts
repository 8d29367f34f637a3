/** The MCP client side: an official-SDK `AuthProvider` on agentauth's OAuth engine and vault. */
export { readUnauthorized, type UnauthorizedHints } from "./challenge.ts";
export {
  assertEndpointsOnIssuer,
  coveringResource,
  discoverMcpAuthorization,
  discoverServerMetadata,
  type McpAuthorizationTarget,
  type McpDiscoveryOptions,
} from "./discovery.ts";
export type { DpopPolicy } from "./dpop-policy.ts";
export { McpAuthError } from "./errors.ts";
export {
  clientCredentials,
  type EnterpriseIdentityProvider,
  enterpriseManaged,
  type McpGrant,
  type McpGrantContext,
  workloadIdentity,
} from "./grants.ts";
export {
  type ClientMetadataDocument,
  type ClientMetadataDocumentOptions,
  checkClientIdUrl,
  clientMetadataDocument,
} from "./metadata-document.ts";
export {
  type AgentAuthProvider,
  type AgentAuthProviderOptions,
  agentAuthProvider,
  type ScopeChallenge,
} from "./provider.ts";
export type { RegistrationKind, SignInMethod } from "./registration.ts";
export {
  canonicalMcpServerUrl,
  displayMcpServerUrl,
  MAX_SERVER_URL_LENGTH,
  McpServerUrlError,
  type McpServerUrlOptions,
} from "./server-url.ts";
export { scopesFor } from "./sign-in.ts";
export { scopeUnion } from "./step-up.ts";
