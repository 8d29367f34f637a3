/**
 * An MCP `initialize` POST (the first thing any client sends), with a token when given: what `agentauth mcp login`
 * and the proxy's background sign-in send to learn a server's challenge (its 401) and to check a new token. The body
 * is discarded: only the status and the headers matter. A session the server may have opened is closed again (HTTP
 * DELETE). Redirects are not followed. A network failure is a typed `mcp_server_unreachable` with the cause kept.
 */

import { McpAuthError } from "./errors.ts";

export const PROBE_TIMEOUT_MS = 10_000;

export async function probeMcpServer(
  serverUrl: URL,
  options: {
    token?: string;
    /** How to send: the provider's fetch presents a DPoP-bound token with its proof. Default `fetch`. */
    fetchWith?: (url: URL, init: RequestInit) => Promise<Response>;
    timeoutMs?: number;
  } = {},
): Promise<Response> {
  const send = options.fetchWith ?? fetch;
  const timeout = options.timeoutMs ?? PROBE_TIMEOUT_MS;
  const headers: Record<string, string> = {
    "content-type": "application/json",
    accept: "application/json, text/event-stream",
  };
  if (options.token) headers.authorization = `Bearer ${options.token}`;
  let response: Response;
  try {
    response = await send(serverUrl, {
      method: "POST",
      headers,
      redirect: "manual",
      signal: AbortSignal.timeout(timeout),
      body: JSON.stringify({
        jsonrpc: "2.0",
        id: 1,
        method: "initialize",
        params: {
          protocolVersion: "2025-06-18",
          capabilities: {},
          clientInfo: { name: "agentauth", version: "1" },
        },
      }),
    });
  } catch (error) {
    throw new McpAuthError(
      "mcp_server_unreachable",
      `Could not reach the MCP server at ${serverUrl.origin}; check that it is running and that its URL is right.`,
      { cause: error },
    );
  }
  await response.body?.cancel().catch(() => {});
  const session = response.headers.get("mcp-session-id");
  if (session && response.ok) {
    await send(serverUrl, {
      method: "DELETE",
      headers: { ...headers, "mcp-session-id": session },
      signal: AbortSignal.timeout(timeout),
    })
      .then((r) => r.body?.cancel())
      .catch(() => {});
  }
  return response;
}
