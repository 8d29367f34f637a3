/** The RAP bridge to MCP: a RAP tool whose operations are an OAuth-protected MCP server's tools (issue 12 §3). */

export {
  type McpBridgeOptions,
  type McpBridgeToolset,
  mcpBridgeToolset,
} from "./bridge.ts";
export type { CatalogNote, McpToolDescription } from "./catalog.ts";
export { McpBridgeError, McpCallError, type McpCallFailure } from "./errors.ts";
