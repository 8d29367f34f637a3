/**
 * The MCP servers a client passes in `session/new` (ACP `McpServer`: `http`, `sse` or stdio), read as the kit
 * manages them. Pure: the client's list in, the remote servers out, each with a display-safe name and URL. Only
 * http/sse servers can need OAuth (MCP authorization applies to HTTP transports); stdio servers are left to the
 * agent. A server whose `headers` already carry `Authorization` is the client's business: the kit never adds a
 * token of its own to it. Every field is the peer's text, so nothing reaches a label unsanitised.
 */

import { peerText } from "../../../core/display.ts";
import {
  canonicalMcpServerUrl,
  displayMcpServerUrl,
  McpServerUrlError,
} from "../../../mcp/client/index.ts";
import { McpServerAuthError } from "./errors.ts";

/** How many remote servers of one session the kit manages; the rest are reported, never probed. */
export const DEFAULT_MAX_SERVERS_PER_SESSION = 32;

export interface SessionMcpServer {
  /** The client's name for it, with control and bidi characters removed, at most 100 characters. */
  name: string;
  transport: "http" | "sse";
  /** The canonical URI (URL without fragment): the RFC 8707 `resource` and the vault key. Empty when `invalid`. */
  url: string;
  /**
   * The URL as shown to people: origin and path, the query replaced by `?…` (a query can carry a key), never a
   * userinfo part (those are refused).
   */
  displayUrl: string;
  /** The client's headers for this server, as given (names and values checked to be header-safe). */
  headers: { name: string; value: string }[];
  /** The client sent its own `Authorization` header: it handles this server's authentication. */
  clientManaged: boolean;
  /**
   * Why the kit cannot manage it: the URL failed the one MCP server URL check (`invalid_server_url`,
   * `credentials_in_url`, `insecure_server_url`: plain http off loopback), or too many servers.
   */
  invalid?: McpServerAuthError;
}

/** Reads the `mcpServers` param; anything that is not a well-formed http/sse entry is dropped or marked invalid. */
export function readSessionServers(
  mcpServers: unknown,
  max = DEFAULT_MAX_SERVERS_PER_SESSION,
): SessionMcpServer[] {
  if (!Array.isArray(mcpServers)) return [];
  const out: SessionMcpServer[] = [];
  for (const entry of mcpServers) {
    const server = readServer(entry);
    if (!server) continue;
    if (out.length >= max) {
      out.push({
        ...server,
        invalid: new McpServerAuthError(
          "too_many_servers",
          `The client passed more than ${max} MCP servers over HTTP for one session; the agent manages sign-in for the first ${max} only. Pass fewer servers.`,
        ),
      });
      continue;
    }
    out.push(server);
  }
  return out;
}

function readServer(entry: unknown): SessionMcpServer | undefined {
  if (typeof entry !== "object" || entry === null) return undefined;
  const raw = entry as { type?: unknown; name?: unknown; url?: unknown; headers?: unknown };
  if (raw.type !== "http" && raw.type !== "sse") return undefined;
  const name = peerText(raw.name, { max: 100 }) || "unnamed";
  const headers = readHeaders(raw.headers);
  const clientManaged = headers.some((h) => h.name.toLowerCase() === "authorization");
  const base = { name, transport: raw.type, headers, clientManaged } as const;
  // A query is kept: the client configured this URL and the agent connects to it as given (it is shown as `?…`).
  let url: URL;
  try {
    url = canonicalMcpServerUrl(raw.url, {
      query: "allow",
      subject: `The URL of the MCP server “${name}”`,
    });
  } catch (error) {
    if (!(error instanceof McpServerUrlError)) throw error;
    // Plain http is refused because the kit's token would cross the network unencrypted; to a server the client
    // authenticates itself the kit sends no token, so it stays `client_managed` as before (the check refuses plain
    // http last, after every other rule passed, so the URL is otherwise sound).
    if (clientManaged && error.code === "insecure_server_url") {
      const own = new URL(String(raw.url).trim());
      own.hash = "";
      return {
        ...base,
        url: own.href,
        displayUrl: peerText(displayMcpServerUrl(own), { max: 300 }),
      };
    }
    return {
      ...base,
      url: "",
      displayUrl: error.origin ?? "(unusable URL)",
      invalid: new McpServerAuthError(
        // The kit's code since the first release; the check calls it server_url_credentials.
        error.code === "server_url_credentials" ? "credentials_in_url" : error.code,
        `${error.message} The agent cannot sign in to it; fix its URL in the client's settings.`,
      ),
    };
  }
  return { ...base, url: url.href, displayUrl: peerText(displayMcpServerUrl(url), { max: 300 }) };
}

/** Header-safe entries only: a CR/LF or a non-token name would fail (or split) the request. */
function readHeaders(headers: unknown): { name: string; value: string }[] {
  if (!Array.isArray(headers)) return [];
  return headers.flatMap((h: unknown) => {
    const { name, value } = (h ?? {}) as { name?: unknown; value?: unknown };
    if (typeof name !== "string" || typeof value !== "string") return [];
    if (!/^[!#$%&'*+.^_`|~0-9A-Za-z-]{1,256}$/.test(name) || /[\r\n\0]/.test(value)) return [];
    return [{ name, value }];
  });
}
