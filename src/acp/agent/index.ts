/** The ACP agent kit: complete authentication for an `@agentclientprotocol/sdk` agent, v1 and v2. */
export {
  type ApiKeyMethod,
  type AuthMethodConfig,
  advertised,
  type ClientAuthFeatures,
  type IssuerOAuthMethod,
  type OAuthMethod,
  type ProviderOAuthMethod,
  type TerminalMethod,
  v1AuthMethods,
  v2AuthMethods,
} from "./config.ts";
export { agentSubject } from "./credentials.ts";
export {
  buildExampleAgent,
  EXAMPLE_AGENT_CLIENT_ID,
  EXAMPLE_AGENT_INFO,
  exampleMethods,
  runExampleAgent,
} from "./example.ts";
export {
  AgentAuth,
  type AgentAuthOptions,
  createAgentAuth,
  DEFAULT_GATED,
  type GetAuthStateAdvertising,
  type SessionPolicy,
} from "./kit.ts";
export {
  type McpOptions,
  type McpServerAccount,
  McpServerAuth,
  McpServerAuthError,
  type McpServerState,
  type SessionMcpServer,
} from "./mcp/index.ts";
export { AuthMethodConfigError } from "./oauth-method.ts";
export {
  type AuthStatus as AgentAuthStatus,
  StatusPublisher,
  toAuthStatus,
  toGetAuthState,
  withMcpServers,
} from "./state.ts";
export { requestedTerminalMethod, runTerminalLoginIfRequested } from "./terminal.ts";
