/**
 * One check of an MCP server URL, for every place a person, a client or an operator hands agentauth one (the CLI's
 * `mcp login <server-url>`, ACP `session/new` `mcpServers`, the RAP MCP bridge, the AHP host's MCP bridge, the MCP
 * client provider). Pure: a string in, the server's canonical URI out (MCP authorization, "Canonical Server URI":
 * RFC 8707 resource, scheme and host lower-cased, no fragment, the path kept as given), or a typed
 * `McpServerUrlError`. The URL is never repeated in an error: its userinfo, query or fragment may be a secret.
 */

import { isLoopback } from "../../oauth/index.ts";
import { McpAuthError } from "./errors.ts";

/** Longer is not an MCP endpoint someone typed or configured; it is also where a pasted token would hide. */
export const MAX_SERVER_URL_LENGTH = 2048;

/**
 * Codes: `invalid_server_url` (not a string, not an absolute http(s) URL, too long, control/invisible characters,
 * a backslash, a host ending in a dot), `server_url_credentials` (a user name or password),
 * `server_url_query` (a query, where the caller refuses one), `insecure_server_url` (http:// off loopback).
 * `origin` is the URL's `scheme://host[:port]` when it parsed as http(s): safe to show, it names the server.
 */
export class McpServerUrlError extends McpAuthError {
  readonly origin: string | undefined;

  constructor(code: string, message: string, origin?: string) {
    super(code, message);
    this.origin = origin;
  }
}

export interface McpServerUrlOptions {
  /**
   * What to do with a query. `"refuse"` (default): RFC 8707 §2 says a resource SHOULD NOT carry one, and on an
   * MCP URL it is typically an API key, which would end up in the vault's key, every listing and every
   * authorization URL. `"allow"`: the URL was configured elsewhere (an ACP client's settings) and must reach the
   * server as given; show it with `displayMcpServerUrl`, which hides the query.
   */
  query?: "refuse" | "allow";
  /** How messages name the URL, e.g. `The URL of the MCP server “github”`. Default `The MCP server URL`. */
  subject?: string;
}

// C0/C1 controls, space, DEL, and the invisible or reordering characters (zero-width, bidi marks, BOM, and every
// default-ignorable code point: variation selectors, the combining grapheme joiner, Hangul fillers that render as a
// blank): the WHATWG parser drops tabs and newlines anywhere and strips the rest at the ends, and its IDNA mapping
// drops the default-ignorable ones from a host, so "https://exa\nmple.com" would silently name another host than
// the one a reviewer reads.
const UNSAFE =
  // biome-ignore lint/suspicious/noControlCharactersInRegex: refusing them is the point.
  /[\u0000-\u0020\u007f-\u00a0\u00ad\u061c\u1680\u180e\u2000-\u200f\u2028-\u202f\u205f-\u206f\u3000\ufeff\p{Default_Ignorable_Code_Point}]/u;

/**
 * The canonical URI of an MCP server: an absolute https URL (http only on loopback: 127.0.0.0/8, [::1] and
 * `localhost`, where nothing crosses a network; `*.localhost` and IPv4-mapped addresses are not, since a resolver
 * may send the first to DNS and the second is a disguise), without user name or password, fragment dropped.
 *
 * @example
 * canonicalMcpServerUrl("HTTPS://MCP.Example.com/Tools/mcp#x").href // "https://mcp.example.com/Tools/mcp"
 */
export function canonicalMcpServerUrl(input: unknown, options: McpServerUrlOptions = {}): URL {
  const subject = options.subject ?? "The MCP server URL";
  const invalid = (why: string) => new McpServerUrlError("invalid_server_url", `${subject} ${why}`);
  const raw = input instanceof URL ? input.href : input;
  if (typeof raw !== "string" || raw.trim() === "") {
    throw invalid(
      `is missing or not text; give the server's https:// URL, e.g. https://mcp.example.com/mcp.`,
    );
  }
  const text = raw.trim();
  if (text.length > MAX_SERVER_URL_LENGTH) {
    throw invalid(
      `is longer than ${MAX_SERVER_URL_LENGTH} characters; an MCP endpoint is short: give the server's URL without anything appended.`,
    );
  }
  const url = URL.parse(text);
  if (!url || (url.protocol !== "https:" && url.protocol !== "http:")) {
    throw invalid(
      "must be an absolute http(s) URL (https://, or http:// only on loopback); give the server's full URL, e.g. https://mcp.example.com/mcp.",
    );
  }
  if (UNSAFE.test(text)) {
    throw invalid(
      "contains a space, a control character or an invisible formatting character; type the URL again without them.",
    );
  }
  // The parser reads "\" as "/" in http(s) URLs, so "https://evil.example\@good.example" names evil.example.
  if (text.includes("\\")) throw invalid("contains a backslash; URLs use / between parts.");
  // "https:host/x" and "https:///host/x" have no authority to RFC 3986 (a path), a host to the WHATWG parser.
  const rest = text.slice(url.protocol.length);
  if (!rest.startsWith("//") || rest.startsWith("///")) {
    throw invalid(
      "must be an absolute http(s) URL, written scheme://host/path; give the server's full URL, e.g. https://mcp.example.com/mcp.",
    );
  }
  const origin = `${url.protocol}//${url.host}`;
  if (url.username !== "" || url.password !== "") {
    throw new McpServerUrlError(
      "server_url_credentials",
      `${subject} must not carry a user name or password: it would be stored and sent as the credential's resource. MCP servers take an OAuth sign-in instead; give the URL without them.`,
      origin,
    );
  }
  // The parser decodes a percent-encoded host: "mcp.example.com%2eevil.example" is a host of evil.example.
  if (/^[^/?#]*%/.test(rest.slice(2))) {
    throw invalid("has a percent-encoded (%) host; give the host name as is, without % escapes.");
  }
  // "example.com." and "example.com" are one server to DNS but two resources and two vault keys to OAuth.
  if (url.hostname.endsWith(".")) {
    throw invalid("has a host name ending in a dot; give it without the final dot.");
  }
  if (url.protocol === "http:" && !isLoopback(url)) {
    throw new McpServerUrlError(
      "insecure_server_url",
      `${subject} must use https:// (plain http is allowed only on loopback: 127.0.0.0/8, [::1], localhost): tokens would cross the network unencrypted.`,
      origin,
    );
  }
  url.hash = "";
  // `?` alone (an empty query) is still one in the href, and a different resource from the URL without it.
  if (options.query !== "allow" && url.href.includes("?")) {
    throw new McpServerUrlError(
      "server_url_query",
      `${subject} must not carry a query (?…): it would be stored and shown as the credential's resource (RFC 8707 §2), and MCP servers take an OAuth sign-in instead of a key in the URL; give the URL without it.`,
      origin,
    );
  }
  return url;
}

/**
 * The URL as shown to people: origin and path, a query replaced by `?…` (it may carry a key meant only for the
 * server), never userinfo or fragment. For a URL `canonicalMcpServerUrl` returned (percent-encoded, punycode host:
 * an IDN homograph shows as `xn--…`, not as the name it imitates).
 */
export function displayMcpServerUrl(url: string | URL): string {
  const parsed = URL.parse(url);
  if (!parsed) return "(not a URL)";
  parsed.hash = "";
  const text = `${parsed.protocol}//${parsed.host}${parsed.pathname}${parsed.href.includes("?") ? "?…" : ""}`;
  return text.length > 300 ? `${text.slice(0, 300)}…` : text;
}
