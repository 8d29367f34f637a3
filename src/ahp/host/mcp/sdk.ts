/**
 * The official MCP client SDK, loaded on first use: `@modelcontextprotocol/client` is an optional peer dependency,
 * so `agentauth/ahp` must load without it and fail only when a host actually adds an MCP server, with a typed error
 * that says how to install it.
 */

import { McpBridgeError } from "./errors.ts";

export type McpClientSdk = typeof import("@modelcontextprotocol/client");

let loading: Promise<McpClientSdk> | undefined;

export function loadMcpClientSdk(): Promise<McpClientSdk> {
  loading ??= import("@modelcontextprotocol/client").catch((cause: unknown) => {
    loading = undefined;
    throw new McpBridgeError(
      "mcp_sdk_missing",
      "The AHP host's MCP bridge needs the official MCP client SDK; run `npm install @modelcontextprotocol/client`.",
      { cause },
    );
  });
  return loading;
}
