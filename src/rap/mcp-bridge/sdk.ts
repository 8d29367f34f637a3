/**
 * The official MCP client SDK, loaded when first needed: `@modelcontextprotocol/client` is an optional peer
 * dependency, so `agentauth/rap` must load without it; only a bridge that is actually built asks for it.
 */

import { McpBridgeError } from "./errors.ts";

export type McpClientModule = typeof import("@modelcontextprotocol/client");

let loading: Promise<McpClientModule> | undefined;

export function loadMcpClientSdk(): Promise<McpClientModule> {
  loading ??= import("@modelcontextprotocol/client").catch((error: unknown) => {
    loading = undefined;
    throw new McpBridgeError(
      "mcp_sdk_missing",
      "The RAP MCP bridge needs the official MCP client SDK, which is not installed. Run `npm install @modelcontextprotocol/client` and start the tool again.",
      { cause: error },
    );
  });
  return loading;
}
