/**
 * Extra HTTP headers for the remote MCP server (`--header 'Name: value'`, as mcp-remote takes them), pure: text in,
 * headers or a typed refusal out. `${VAR}` in a value is taken from the environment, so a key stays out of argv and
 * out of the MCP client's configuration file; a variable that is not set is refused rather than sent empty. Names
 * must be RFC 9110 tokens and values printable (no CR, LF or NUL: header injection); headers the transport owns
 * (`Mcp-Session-Id`, `MCP-Protocol-Version`, `Content-Type`, `Accept`, `Content-Length`, `Host`) are refused. An
 * `Authorization` header means the server's credential is the user's own (an API key): the proxy then does no OAuth.
 */

import { McpAuthError } from "../client/errors.ts";

const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
const OWNED = new Set([
  "mcp-session-id",
  "mcp-protocol-version",
  "content-type",
  "accept",
  "content-length",
  "host",
  "last-event-id",
]);
const MAX_HEADERS = 32;
const MAX_VALUE = 8 * 1024;

export function parseHeaders(
  specs: readonly string[],
  env: Readonly<Record<string, string | undefined>>,
): Record<string, string> {
  if (specs.length > MAX_HEADERS)
    throw invalid(`at most ${MAX_HEADERS} --header options are taken`);
  const headers: Record<string, string> = {};
  for (const spec of specs) {
    const colon = spec.indexOf(":");
    if (colon <= 0) throw invalid("a --header is 'Name: value'");
    const name = spec.slice(0, colon).trim();
    if (!TOKEN.test(name)) throw invalid("a --header name must be a plain HTTP header name");
    if (OWNED.has(name.toLowerCase())) {
      throw invalid(`--header ${name} is the proxy's own to set; leave it out`);
    }
    const value = expand(spec.slice(colon + 1).trim(), env, name);
    // biome-ignore lint/suspicious/noControlCharactersInRegex: refusing control characters is the point.
    if (/[\u0000-\u0008\u000a-\u001f\u007f]/.test(value) || value.length > MAX_VALUE) {
      throw invalid(
        `the value of --header ${name} has a line break or control character, or is too long`,
      );
    }
    // HTTP field values are bytes (RFC 9110 §5.5): fetch refuses anything past Latin-1 at every request.
    if (/[^\t\u0020-\u00ff]/.test(value)) {
      throw invalid(`the value of --header ${name} has characters HTTP headers cannot carry`);
    }
    headers[name] = value;
  }
  return headers;
}

/** `${VAR}` → the environment's value; the message names the variable, never a value. */
function expand(
  value: string,
  env: Readonly<Record<string, string | undefined>>,
  name: string,
): string {
  return value.replace(/\$\{([A-Za-z_][A-Za-z0-9_]*)\}/g, (_whole, variable: string) => {
    const found = env[variable];
    if (found === undefined || found === "") {
      throw invalid(`--header ${name} uses \${${variable}}, which is not set in the environment`);
    }
    return found;
  });
}

function invalid(message: string): McpAuthError {
  return new McpAuthError("invalid_header", `${message}.`);
}
