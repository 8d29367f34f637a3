/**
 * `agentauth mcp login|status|logout <server-url>` and `agentauth mcp example-server`: signing in to an
 * OAuth-protected MCP server (the MCP authorization spec's discovery from a 401, then the engine's sign-in), what
 * the vault holds for it, signing out (RFC 7009), and an example protected server to try it on.
 */

import { peerText } from "../../core/display.ts";
import { canonicalMcpServerUrl, McpServerUrlError } from "../../mcp/client/index.ts";
import { isLoopback } from "../../oauth/index.ts";
import { parseFlags, parseInteger } from "../flags.ts";
import { type CliIo, EXIT, jsonLine, UsageError } from "../io.ts";
import { untilTerminated } from "../lifecycle.ts";
import { backgroundSignIn } from "./mcp-background.ts";
import { checkExampleIssuer } from "./mcp-example-issuer.ts";
import { URL_RULE } from "./mcp-help.ts";
import { mcpLogin } from "./mcp-login.ts";
import { clientOf, mcpProxy } from "./mcp-proxy.ts";
import { mcpLogout, mcpStatus } from "./mcp-status.ts";

export { MCP_HELP, MCP_USAGE } from "./mcp-help.ts";

export async function mcpCommand(argv: string[], io: CliIo): Promise<number> {
  const [sub, ...rest] = argv;
  if (sub === "example-server") return exampleServer(rest, io);
  if (sub === "proxy") return mcpProxy(rest, io, mcpServerUrl);
  const { values, positionals } = parseFlags({
    args: rest,
    options: {
      subject: { type: "string" },
      json: { type: "boolean", default: false },
      scope: { type: "string" },
      "client-id": { type: "string" },
      "client-secret-env": { type: "string" },
      "client-secret-file": { type: "string" },
      device: { type: "boolean" },
      background: { type: "boolean" },
      "no-browser": { type: "boolean" },
    },
    strict: true,
    allowPositionals: true,
  });
  for (const flag of [
    "scope",
    "client-id",
    "client-secret-env",
    "client-secret-file",
    "device",
    "background",
    "no-browser",
  ] as const) {
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
  if (sub === "login" && values.background) {
    return backgroundSignIn(io, serverUrl, {
      subject: subject ?? "default",
      scope: loginScope(values.scope),
      device: values.device === true,
      browser: values["no-browser"] !== true,
      clientFor: clientOf(
        values["client-id"],
        values["client-secret-env"],
        values["client-secret-file"],
        io.env,
      ),
    });
  }
  if (values["no-browser"]) {
    throw new UsageError(
      "--no-browser goes with 'mcp login --background' or 'mcp proxy' ('mcp login' opens nothing: it prints the URL)",
    );
  }
  switch (sub) {
    case "login":
      return mcpLogin(io, {
        serverUrl,
        subject,
        scope: loginScope(values.scope),
        clientFor: clientOf(
          nonEmpty(values["client-id"], "--client-id"),
          values["client-secret-env"],
          values["client-secret-file"],
          io.env,
        ),
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
 * The MCP server's URL as given on the command line, through the one check every MCP server URL takes
 * (`canonicalMcpServerUrl`): absolute https (http only on loopback), no user name or password (a URL in argv is
 * visible to every user, and the credential would end up in the vault key), no query. The value is never echoed: it
 * may be exactly such a secret. The check's codes are the usage error's codes.
 */
export function mcpServerUrl(input: string): URL {
  try {
    return canonicalMcpServerUrl(input);
  } catch (error) {
    if (!(error instanceof McpServerUrlError)) throw error;
    // The rule's example, unless the message already gives one.
    const hint =
      error.code === "invalid_server_url" && !error.message.includes("e.g.") ? ` ${URL_RULE}` : "";
    throw new UsageError(`${lowerFirst(error.message)}${hint}`, undefined, error.code);
  }
}

/** A usage error reads "agentauth: the server URL must …"; the check's messages start a sentence. */
function lowerFirst(text: string): string {
  return text.replace(/^The MCP server URL/, "the MCP server URL");
}

function nonEmpty(value: string | undefined, flag: string): string | undefined {
  if (value === undefined) return undefined;
  if (value.trim() === "") throw new UsageError(`${flag} needs a value`);
  return value.trim();
}

/** --scope for login: the same RFC 6749 scope names as example-server's, so a stray quote never reaches the URL. */
function loginScope(value: string | undefined): string | undefined {
  if (value === undefined) return undefined;
  if (value.trim() === "") throw new UsageError("--scope needs a value");
  return scopeList(value, "--scope", []).join(" ");
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
  const { values, positionals } = parseFlags({
    args: argv,
    options: {
      issuer: { type: "string" },
      port: { type: "string", default: "0" },
      scope: { type: "string" },
      "step-up-scope": { type: "string" },
      "issuer-wait": { type: "string", default: "30" },
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
  const waitSeconds = parseInteger(values["issuer-wait"], "--issuer-wait", 0, 600);
  // Loaded only here, so `agentauth` runs without the optional MCP SDK for every other command; loaded before the
  // issuer check, so a missing SDK is said at once rather than after waiting for the issuer.
  const { loadMcpServerSdk } = await import("../../mcp/sdk.ts");
  const sdk = await loadMcpServerSdk("The example MCP server");
  await checkExampleIssuer(values.issuer, { waitSeconds, notice: io.stderr });
  const { startExampleMcpServer } = await import("../../mcp/server/example-server.ts");
  const server = await startExampleMcpServer({
    issuer: values.issuer,
    port,
    scopes,
    stepUpScope,
    loadSdk: async () => sdk,
  });
  // Listen for the end before saying ready: whoever reads the ready line may stop us at once.
  const terminated = untilTerminated();
  io.stdout(
    jsonLine({
      event: "ready",
      url: server.url,
      issuer: values.issuer,
      scopes: server.scopes,
      stepUpScope: server.stepUpScope,
    }),
  );
  await terminated;
  await server.close();
  return EXIT.ok;
}
