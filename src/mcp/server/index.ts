/** The MCP server side: protect an MCP server as an OAuth resource server and hand tool handlers the verified caller. */

export { loadMcpServerSdk, McpSdkMissingError } from "../sdk.ts";
export { currentMcpCaller, type McpCaller, mcpCaller, runAsMcpCaller } from "./caller.ts";
export {
  type ExampleMcpServer,
  type ExampleMcpServerOptions,
  startExampleMcpServer,
} from "./example-server.ts";
export {
  buildProtectedResourceMetadata,
  canonicalServerUri,
  McpServerConfigError,
  type ProtectedResourceMetadata,
  protectedResourceMetadataUrl,
} from "./metadata.ts";
export { protectNodeHandler, toNodeListener, toWebRequest, writeWebResponse } from "./node.ts";
export {
  MAX_AUTHORIZATION_LENGTH,
  type McpAuthentication,
  type McpFetchHandler,
  type McpProtection,
  type McpProtectionOptions,
  protectMcpServer,
} from "./protect.ts";
