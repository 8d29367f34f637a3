/** The embedded authorization server: oidc-provider configured strictly, for tests, demos and local development. */
export type { ClientIdMetadataDocumentOptions } from "./client-metadata-documents.ts";
export {
  CLI_CLIENT_ID,
  CONSOLE_CLIENT_ID,
  EXAMPLE_AGENT_CLIENT_ID,
  EXAMPLE_TOOL_CLIENT_ID,
  RESOURCE_SCOPES,
  SUPPORTED_SCOPES,
} from "./config.ts";
export {
  type IdpMemoryStats,
  type IdpOptions,
  MAX_ERROR_STATS,
  type RunningIdp,
  startIdp,
  type TokenEndpointStats,
} from "./server.ts";
export { IdpStateError, KEYS_FILE, STATE_FILE } from "./state-file.ts";
export { DEMO_USERS, type DemoUser, findDemoUser } from "./users.ts";
