/**
 * The official MCP client SDK for the RAP bridge, loaded when first needed (src/mcp/sdk.ts): `agentauth/rap` loads
 * without it; only a bridge that is actually built asks for it, and a missing package is this bridge's typed error.
 */

import { loadMcpClientSdk as load, type McpClientSdk, McpSdkMissingError } from "../../mcp/sdk.ts";
import { McpBridgeError } from "./errors.ts";

export type McpClientModule = McpClientSdk;

export function loadMcpClientSdk(): Promise<McpClientModule> {
  return load("The RAP MCP bridge").catch((cause: unknown) => {
    if (!(cause instanceof McpSdkMissingError)) throw cause;
    throw new McpBridgeError(
      "mcp_sdk_missing",
      "The RAP MCP bridge needs the official MCP client SDK, which is not installed. Run `npm install @modelcontextprotocol/client` and start the tool again.",
      { cause },
    );
  });
}
