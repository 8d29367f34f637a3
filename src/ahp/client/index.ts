/** The AHP client (`agentauth/ahp`, client side): sign in to an Agent Host Protocol host over WebSocket, both dialects. */

export {
  AhpClient,
  type ConnectAhpOptions,
  type RenewalEvent,
  type RenewalTrigger,
} from "./auth-client.ts";
export {
  type AuthenticationOutcome,
  authenticateParams,
  readAuthenticateResult,
} from "./authenticate.ts";
export { connectAhpHost } from "./connect.ts";
export {
  type DeviceLoginPolicy,
  ResourceCredentials,
  type ResourceCredentialsOptions,
} from "./credentials.ts";
export {
  CLIENT_PROTOCOL_VERSIONS,
  DEFAULT_DIALECTS,
  initializeParams,
  isDialectRefusal,
  type Negotiated,
  readInitializeResult,
  SEED_PROTOCOL_VERSION,
} from "./dialect.ts";
export {
  AhpAuthRequiredError,
  AhpClosedError,
  AhpConnectError,
  AhpProtocolError,
  AhpRequestError,
  AhpServerConfigError,
  AhpTimeoutError,
  AhpUnknownResourceError,
  AhpVersionError,
} from "./errors.ts";
export { remainingSeconds } from "./expires-in.ts";
export {
  type McpAuthNotice,
  readMcpAuthNotice,
  readMcpAuthNoticesFromSnapshot,
} from "./mcp.ts";
export { renewalDelayMs } from "./renewal.ts";
export {
  type AhpResource,
  type AuthChallengeRead,
  type AuthNotice,
  type Dialect as ClientDialect,
  readAuthNotification,
  readAuthRequiredData,
  resourcesFromRootState,
  resourcesFromSeed,
} from "./resources.ts";
export {
  envName as providerEnvName,
  type ProviderSettings,
  providerForServer,
  type ServerChoice,
  type ServerProviderOptions,
} from "./server-provider.ts";
export { type ResourceStatus, resourceStatus } from "./status.ts";
