/**
 * The probe after `session/new`: one request to the MCP server without a token, to learn whether it needs a
 * sign-in before anyone asks the person. A 401 is read as MCP authorization (2026-07-28) prescribes: its Bearer
 * challenge (hostile headers refused by `readUnauthorized`), then the RFC 9728 metadata (its `resource` must be this
 * server, its authorization server named), so a server that cannot be signed in to shows as an error now, not in
 * the middle of a prompt. The request is a JSON-RPC `ping` (no MCP session is created; a protected server refuses it
 * before reading it); for the legacy SSE transport, a GET whose stream is dropped at once.
 */

import { peerText } from "../../../core/display.ts";
import { discoverServerMetadata, readUnauthorized } from "../../../mcp/client/index.ts";
import { MetadataCache } from "../../../oauth/index.ts";
import { McpServerAuthError } from "./errors.ts";
import type { SessionMcpServer } from "./servers.ts";

export const DEFAULT_PROBE_TIMEOUT_MS = 5_000;

export type ProbeResult =
  | { state: "needs_sign_in"; scopes: string[] }
  | { state: "not_required" }
  | { state: "error"; error: { code: string; message: string } };

export async function probeMcpServer(
  server: SessionMcpServer,
  timeoutMs = DEFAULT_PROBE_TIMEOUT_MS,
): Promise<ProbeResult> {
  const signal = AbortSignal.timeout(timeoutMs);
  try {
    const url = new URL(server.url);
    const response = await fetch(url, { ...probeRequest(server), redirect: "manual", signal });
    await response.body?.cancel().catch(() => {});
    if (response.status >= 300 && response.status < 400) {
      return failed(
        new McpServerAuthError(
          "unexpected_redirect",
          `The MCP server “${server.name}” answered with a redirect; the agent does not follow it. Check its URL in the client's settings.`,
        ),
      );
    }
    // Only a server that answered (a 2xx, or a 4xx such as "no session" to a bare ping) shows it needs no sign-in;
    // a 5xx or a 404 says nothing about that, and "no sign-in needed" would be a claim the probe cannot make.
    if (response.status >= 500) {
      return failed(
        new McpServerAuthError(
          "server_error",
          `The MCP server “${server.name}” answered HTTP ${response.status}; it may be down. Check that it is running.`,
        ),
      );
    }
    if (response.status === 404) {
      return failed(
        new McpServerAuthError(
          "not_found",
          `The MCP server “${server.name}” answered HTTP 404 at its URL; check its URL in the client's settings.`,
        ),
      );
    }
    if (response.status !== 401) return { state: "not_required" };
    const hints = readUnauthorized(response.headers.get("www-authenticate"), url);
    let prm: Awaited<ReturnType<typeof discoverServerMetadata>>;
    try {
      prm = await discoverServerMetadata(server.url, hints, { cache: new MetadataCache(), signal });
    } catch (error) {
      // No metadata anywhere and none named: a 2025-03-26 server, signed in to at its own origin (discovery.ts).
      const code = (error as { code?: unknown }).code;
      if (code === "metadata_not_found" && !hints.resourceMetadataUrl) {
        return { state: "needs_sign_in", scopes: hints.scope ?? [] };
      }
      throw error;
    }
    if (!prm.authorization_servers?.[0]) {
      return failed(
        new McpServerAuthError(
          "no_authorization_server",
          `The MCP server “${server.name}” needs a sign-in but names no authorization server; ask its operator.`,
        ),
      );
    }
    return { state: "needs_sign_in", scopes: hints.scope ?? prm.scopes_supported ?? [] };
  } catch (error) {
    if (signal.aborted) {
      return failed(
        new McpServerAuthError(
          "probe_timeout",
          `The MCP server “${server.name}” did not answer within ${Math.round(timeoutMs / 1000)} s; check that it is running.`,
        ),
      );
    }
    const code = (error as { code?: unknown }).code;
    if (typeof code === "string" && error instanceof Error && /^[a-z_]+$/.test(code)) {
      return failed(error as Error & { code: string });
    }
    return failed(
      new McpServerAuthError(
        "unreachable",
        `The MCP server “${server.name}” could not be reached; check that it is running and that its URL is right.`,
      ),
    );
  }
}

function probeRequest(server: SessionMcpServer): RequestInit {
  const headers = new Headers();
  for (const h of server.headers) headers.append(h.name, h.value);
  if (server.transport === "sse") {
    headers.set("accept", "text/event-stream");
    return { method: "GET", headers };
  }
  headers.set("accept", "application/json, text/event-stream");
  headers.set("content-type", "application/json");
  return {
    method: "POST",
    headers,
    body: JSON.stringify({ jsonrpc: "2.0", id: "agentauth-probe", method: "ping" }),
  };
}

/** Our own errors carry our own words; the text is still cleaned, since a message may quote a peer's value. */
function failed(error: Error & { code: string }): ProbeResult {
  return {
    state: "error",
    error: { code: error.code, message: peerText(error.message, { max: 400 }) },
  };
}
