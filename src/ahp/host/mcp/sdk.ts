/**
 * The official MCP client SDK for the AHP host's bridge, loaded on first use (src/mcp/sdk.ts): `agentauth/ahp` loads
 * without it and fails only when a host actually adds an MCP server, with this bridge's typed error.
 */

import {
  loadMcpClientSdk as load,
  type McpClientSdk,
  McpSdkMissingError,
} from "../../../mcp/sdk.ts";
import { McpBridgeError } from "./errors.ts";

export type { McpClientSdk };

export function loadMcpClientSdk(): Promise<McpClientSdk> {
  return load("The AHP host's MCP bridge").catch((cause: unknown) => {
    if (!(cause instanceof McpSdkMissingError)) throw cause;
    throw new McpBridgeError(
      "mcp_sdk_missing",
      "The AHP host's MCP bridge needs the official MCP client SDK; run `npm install @modelcontextprotocol/client`.",
      { cause },
    );
  });
}
