/** The AHP host side: WebSocket JSON-RPC, both auth dialects (official and the seed), the official session commands, per-connection credentials. */
export { AuthSession } from "./auth-session.ts";
export {
  AhpCommandError,
  type AuthenticatedResource,
  type CommandContext,
  type CommandHandler,
  type CommandOptions,
  type Requirement,
} from "./context.ts";
export {
  type AcceptInput,
  ConnectionCredentials,
  type Credential,
  type CredentialState,
  effectiveExpiry,
} from "./credentials.ts";
export {
  type AuthChange,
  type AuthProblem,
  authChangeNotification,
  authRequiredError,
  toChallenge,
} from "./dialect.ts";
export {
  createExampleHost,
  EXAMPLE_ALPHA,
  EXAMPLE_BETA,
  type ExampleHostOptions,
  startExampleHost,
} from "./example.ts";
export { checkGate, type GateVerdict, type TransportGateOptions } from "./gate.ts";
export { type AhpHost, type AhpHostOptions, createAhpHost } from "./host.ts";
export {
  HostMcpServer,
  McpBridgeError,
  McpServerAuthRequired,
  type McpServerSpec,
  type SessionMcpServers,
} from "./mcp/index.ts";
export {
  type Dialect,
  detectDialect,
  negotiateSeed,
  supportedVersions,
} from "./negotiate.ts";
export { type RateLimitOptions, TokenBucket } from "./rate-limit.ts";
export {
  type AgentSpec,
  type ProtectedResourceSpec,
  type RegisteredResource,
  ResourceRegistry,
} from "./resources.ts";
export type { ListenOptions, RunningAhpHost } from "./server.ts";
export { SessionCatalog, type SessionCatalogOptions, type SessionEvent } from "./sessions.ts";
export {
  type CustomVerifier,
  TokenRejected,
  type VerifierChoice,
  VerifierUnavailable,
} from "./verify.ts";
