/**
 * `agentauth mcp login|status|logout <server-url>` and `agentauth mcp example-server`: signing in to an
 * OAuth-protected MCP server (the MCP authorization spec's discovery from a 401, then the engine's sign-in), what
 * the vault holds for it, signing out (RFC 7009), and an example protected server to try it on.
 */

import { parseArgs } from "node:util";
import { peerText } from "../../core/display.ts";
import { isLoopback } from "../../oauth/index.ts";
import { type CliIo, EXIT, UsageError } from "../io.ts";
import { untilTerminated } from "../lifecycle.ts";
import { parseInteger } from "./idp.ts";
import { mcpLogin } from "./mcp-login.ts";
import { mcpLogout, mcpStatus } from "./mcp-status.ts";

export const MCP_USAGE = `agentauth mcp login <server-url> [--subject S] [--scope S] [--client-id ID] [--device] [--json]
agentauth mcp status <server-url> [--subject S] [--json]
agentauth mcp logout <server-url> [--subject S] [--json]
agentauth mcp example-server --issuer URL [--port N] [--scope S] [--step-up-scope S] [--json]
  Signs in to an OAuth-protected MCP server and keeps its tokens in the vault, shows and revokes them, and runs an
  example protected MCP server.`;

const URL_RULE =
  "<server-url> is the MCP server's Streamable HTTP endpoint (https://, or http:// on loopback), e.g. https://mcp.example.com/mcp.";

export const MCP_HELP: Record<string, string> = {
  "": `${MCP_USAGE}

${URL_RULE} Run 'agentauth mcp <command> --help' for one command.
`,
  login: `agentauth mcp login <server-url> [options]

Signs in to an MCP server the way the MCP authorization spec says: an unauthenticated request gets the server's
401, whose WWW-Authenticate names its protected resource metadata (RFC 9728), which names the authorization server;
then a browser sign-in with PKCE S256 and the server's URL as the RFC 8707 resource, and the tokens are stored
encrypted in the vault (the one 'agentauth login' uses; PostgreSQL with --database-url). The authorization URL is
printed on stderr: open it in a browser; the sign-in comes back to a loopback port. Without --client-id the client
registers itself with the authorization server (RFC 7591). Finally the new token is shown to the server once, to
check that it is accepted. Nothing is opened for you (as with 'agentauth login'): the URL is printed, so it works
over SSH too. Ctrl-C cancels (exit 130).

  --subject S     the vault subject to store the credential under (default, as 'agentauth login': the account's
                  id from the ID token when the server sends one, else "default")
  --scope S       the scopes to ask for (default: those the server's 401 or metadata names, plus offline_access
                  when the authorization server lists it)
  --client-id ID  a client registered beforehand at the authorization server (a public client)
  --device        the device flow (RFC 8628) instead of a browser: a URL and a code to enter on any device, for
                  machines without a browser (the authorization server must offer it)
  --json          the stored credential (never a token) as one JSON object on stdout; errors as JSON too

${URL_RULE}

  Example:
    agentauth mcp login http://127.0.0.1:8931/mcp`,
  status: `agentauth mcp status <server-url> [--subject S] [--json]

What the vault holds for the MCP server: signed in or not, issuer, subject, scopes, access-token expiry, whether a
refresh token is held (never a token). It reads the vault only: it contacts neither the MCP server nor the
authorization server, and needs no vault key, so an access token the server has revoked still shows as held.

  --subject S   only this vault subject's credential
  --json        {"server","signedIn","credentials":[{id,subject,issuer,clientId,scopes,expiresAt,expired,
                refreshToken,status,usable}]}; usable: a token can be had without a new sign-in

Exit status: 0 signed in, 3 not signed in (run 'agentauth mcp login <server-url>'), 1 failure, 2 usage error.

  Example:
    agentauth mcp status http://127.0.0.1:8931/mcp --json`,
  logout: `agentauth mcp logout <server-url> [--subject S] [--json]

Revokes the server's tokens at its authorization server (RFC 7009: the refresh token, then the access token) and
deletes them from the vault. Idempotent: signing out when not signed in does nothing and exits 0. An authorization
server without a revocation endpoint cannot be told: the tokens are only forgotten here, and the output says so.
When the authorization server cannot be reached the credential is kept: retry, or forget it with
'agentauth vault delete <id>'.

  --subject S   only this vault subject's credential
  --json        {"server","credentials":[{id,subject,issuer,revoked,deleted,note?}]}

  Example:
    agentauth mcp logout http://127.0.0.1:8931/mcp`,
  "example-server": `agentauth mcp example-server --issuer URL [options]

An example MCP server (the official @modelcontextprotocol/server SDK over Streamable HTTP) protected by agentauth:
it serves its RFC 9728 metadata, answers 401 with a Bearer challenge, and accepts only tokens the --issuer issued
for its URL. Tools: whoami (the verified subject and scopes) and publish (needs --step-up-scope too: a client with
only the base scope gets 403 insufficient_scope and can step up). Prints one JSON line when ready,
{"event":"ready","url":"http://127.0.0.1:PORT/mcp","issuer":…,"scopes":[…],"stepUpScope":…}, and exits on SIGTERM
(0) or Ctrl-C (130). Needs the optional dependency: npm install @modelcontextprotocol/server.

  --issuer URL          the authorization server (https, or http on loopback), e.g. 'agentauth idp serve'
  --port N              port on 127.0.0.1 (default 0: a free one)
  --scope S             scopes every call needs (default "read")
  --step-up-scope S     the extra scope the publish tool needs (default "write")
  --json                errors as JSON on stdout too

  Example:
    agentauth idp serve --port 4444 &
    agentauth mcp example-server --issuer http://127.0.0.1:4444 --port 8931
    agentauth mcp login http://127.0.0.1:8931/mcp`,
};

export async function mcpCommand(argv: string[], io: CliIo): Promise<number> {
  const [sub, ...rest] = argv;
  if (sub === "example-server") return exampleServer(rest, io);
  const { values, positionals } = parseArgs({
    args: rest,
    options: {
      subject: { type: "string" },
      json: { type: "boolean", default: false },
      scope: { type: "string" },
      "client-id": { type: "string" },
      device: { type: "boolean" },
    },
    strict: true,
    allowPositionals: true,
  });
  for (const flag of ["scope", "client-id", "device"] as const) {
    if (sub !== "login" && values[flag] !== undefined) {
      throw new UsageError(`--${flag} goes with 'mcp login', not 'mcp ${sub}'`);
    }
  }
  if (positionals.length !== 1) {
    throw new UsageError(
      positionals.length === 0
        ? `mcp ${sub} needs the MCP server's URL: agentauth mcp ${sub} <server-url>`
        : `mcp ${sub} takes one <server-url>, not ${positionals.length}`,
    );
  }
  const serverUrl = mcpServerUrl(positionals[0] as string);
  const subject = nonEmpty(values.subject, "--subject");
  const json = values.json === true;
  switch (sub) {
    case "login":
      return mcpLogin(io, {
        serverUrl,
        subject,
        scope: nonEmpty(values.scope, "--scope"),
        clientId: nonEmpty(values["client-id"], "--client-id"),
        device: values.device === true,
        json,
      });
    case "status":
      return mcpStatus(io, { serverUrl, subject, json });
    case "logout":
      return mcpLogout(io, { serverUrl, subject, json });
    default:
      throw new UsageError(`unknown mcp command '${peerText(sub ?? "", { max: 40 })}'`);
  }
}

/**
 * The MCP server's URL as given on the command line, checked: an absolute https URL (http only on loopback, where
 * nothing crosses a network), without user name or password (a URL in argv is visible to every user, and the
 * credential would end up in the vault key), nor a query. The value is never echoed: it may be exactly such a secret.
 */
export function mcpServerUrl(input: string): URL {
  const url = URL.parse(input.trim());
  if (!url || (url.protocol !== "https:" && url.protocol !== "http:")) {
    throw new UsageError(
      `the server URL must be an absolute http(s) URL. ${URL_RULE}`,
      undefined,
      "invalid_server_url",
    );
  }
  if (url.username !== "" || url.password !== "") {
    throw new UsageError(
      "the server URL must not carry a user name or password (every user on this machine can read a command " +
        "line); MCP servers take an OAuth sign-in instead: give the URL without them.",
      undefined,
      "server_url_credentials",
    );
  }
  // RFC 8707 §2: a resource SHOULD NOT carry a query; on an MCP URL it is typically an API key, which would end up
  // in the vault's key and in every listing.
  if (url.search !== "") {
    throw new UsageError(
      "the server URL must not carry a query (?…): it would be stored and shown as the credential's resource, and " +
        "MCP servers take an OAuth sign-in instead of a key in the URL; give the URL without it.",
      undefined,
      "server_url_query",
    );
  }
  if (url.protocol === "http:" && !isLoopback(url)) {
    throw new UsageError(
      `the server URL must use https:// (plain http is allowed only on loopback, e.g. http://127.0.0.1:8931/mcp): tokens would cross the network unencrypted.`,
      undefined,
      "insecure_server_url",
    );
  }
  url.hash = "";
  return url;
}

function nonEmpty(value: string | undefined, flag: string): string | undefined {
  if (value === undefined) return undefined;
  if (value.trim() === "") throw new UsageError(`${flag} needs a value`);
  return value.trim();
}

function scopeList(value: string | undefined, flag: string, fallback: string[]): string[] {
  if (value === undefined) return fallback;
  const scopes = value.split(/\s+/).filter((s) => s !== "");
  // RFC 6749 §3.3 scope-token: printable ASCII without space, quote or backslash.
  if (scopes.length === 0 || scopes.some((s) => !/^[\x21\x23-\x5b\x5d-\x7e]+$/.test(s))) {
    throw new UsageError(`${flag} takes scope names separated by spaces (RFC 6749 §3.3)`);
  }
  return scopes;
}

async function exampleServer(argv: string[], io: CliIo): Promise<number> {
  const { values, positionals } = parseArgs({
    args: argv,
    options: {
      issuer: { type: "string" },
      port: { type: "string", default: "0" },
      scope: { type: "string" },
      "step-up-scope": { type: "string" },
      // The ready line is JSON anyway; the flag makes a failure to start JSON too.
      json: { type: "boolean", default: false },
    },
    strict: true,
    allowPositionals: true,
  });
  if (positionals.length > 0) throw new UsageError("mcp example-server takes no arguments");
  if (values.issuer === undefined) {
    throw new UsageError(
      "mcp example-server needs --issuer URL: the authorization server whose tokens it accepts (e.g. 'agentauth idp serve')",
    );
  }
  const issuer = URL.parse(values.issuer);
  if (
    !issuer ||
    !(issuer.protocol === "https:" || (issuer.protocol === "http:" && isLoopback(issuer))) ||
    issuer.username !== "" ||
    issuer.password !== ""
  ) {
    throw new UsageError(
      "--issuer must be the authorization server's https:// URL (plain http only on loopback), without credentials",
      undefined,
      "invalid_issuer_url",
    );
  }
  const port = parseInteger(values.port, "--port", 0, 65535);
  const scopes = scopeList(values.scope, "--scope", ["read"]);
  const [stepUpScope] = scopeList(values["step-up-scope"], "--step-up-scope", ["write"]);
  // Loaded only here, so `agentauth` runs without the optional MCP SDK for every other command.
  const { startExampleMcpServer } = await import("../../mcp/server/example-server.ts");
  const server = await startExampleMcpServer({
    issuer: values.issuer,
    port,
    scopes,
    stepUpScope,
  });
  // Listen for the end before saying ready: whoever reads the ready line may stop us at once.
  const terminated = untilTerminated();
  io.stdout(
    `${JSON.stringify({
      event: "ready",
      url: server.url,
      issuer: values.issuer,
      scopes: server.scopes,
      stepUpScope: server.stepUpScope,
    })}\n`,
  );
  await terminated;
  await server.close();
  return EXIT.ok;
}
