/**
 * `agentauth mcp proxy <server-url>`: the command an MCP client starts (stdio) to reach a remote MCP server through
 * agentauth (src/mcp/proxy). This file parses flags, opens the vault, starts the proxy on the process's stdio, and
 * spawns the background sign-in (`agentauth mcp login <url> --background`, detached, so it outlives a proxy the
 * client restarts). stdout belongs to the MCP client: everything for people goes to stderr (JSON log lines).
 */

import { spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { createLogger } from "../../core/log.ts";
import { Secret } from "../../core/secret.ts";
import { displayMcpServerUrl } from "../../mcp/client/server-url.ts";
import {
  parseHeaders,
  REMOTE_TRANSPORT_MODES,
  type RemoteTransportMode,
  shellWord,
  startMcpProxy,
} from "../../mcp/proxy/index.ts";
import { isLoopback, type OAuthClient } from "../../oauth/index.ts";
import { openVault } from "../../vault/index.ts";
import { parseFlags, parseInteger } from "../flags.ts";
import { type CliIo, EXIT, UsageError } from "../io.ts";

export async function mcpProxy(
  argv: string[],
  io: CliIo,
  serverUrlOf: (input: string) => URL,
): Promise<number> {
  const { values, positionals } = parseFlags({
    args: argv,
    options: {
      subject: { type: "string" },
      header: { type: "string", multiple: true },
      "client-id": { type: "string" },
      "client-secret-env": { type: "string" },
      "client-secret-file": { type: "string" },
      scope: { type: "string" },
      device: { type: "boolean", default: false },
      "no-browser": { type: "boolean", default: false },
      transport: { type: "string", default: "http-first" },
      "allow-http": { type: "boolean", default: false },
      "sign-in-wait": { type: "string", default: "15" },
    },
    strict: true,
    allowPositionals: true,
  });
  if (positionals.length !== 1) {
    throw new UsageError("mcp proxy takes one <server-url>: agentauth mcp proxy <server-url>");
  }
  const serverUrl = serverUrlOf(positionals[0] as string);
  // mcp-remote's flag, taken for those moving over: plain http stays a loopback-only thing either way.
  if (values["allow-http"] && serverUrl.protocol === "http:" && !isLoopback(serverUrl)) {
    throw new UsageError("plain http is allowed only on loopback, --allow-http included");
  }
  const transport = values.transport as RemoteTransportMode;
  if (!REMOTE_TRANSPORT_MODES.includes(transport)) {
    throw new UsageError(`--transport is one of ${REMOTE_TRANSPORT_MODES.join(", ")}`);
  }
  let headers: Record<string, string>;
  try {
    headers = parseHeaders(values.header ?? [], io.env);
  } catch (error) {
    // A mistake in the call: exit 2 with the --help hint, under --json the usage code.
    throw new UsageError((error as Error).message.replace(/\.$/, ""));
  }
  const clientFor = clientOf(
    values["client-id"],
    values["client-secret-env"],
    values["client-secret-file"],
    io.env,
  );
  const waitMs = parseInteger(values["sign-in-wait"] ?? "15", "--sign-in-wait", 0, 120) * 1000;
  const subject = values.subject?.trim() || "default";
  const store = openVault({ env: io.env });
  const log = createLogger({ fields: { component: "mcp-proxy" } });
  try {
    const proxy = await startMcpProxy({
      serverUrl,
      store,
      subject,
      headers,
      clientFor,
      transport,
      signInWaitMs: waitMs,
      loginCommand: loginCommand(serverUrl, subject, values),
      startSignIn: () =>
        startBackgroundSignIn(serverUrl, {
          subject,
          scope: values.scope,
          device: values.device === true,
          browser: values["no-browser"] !== true,
          clientId: values["client-id"],
          secretEnv: values["client-secret-env"],
          secretFile: values["client-secret-file"],
          env: io.env,
        }),
      log,
    });
    await proxy.closed;
    return EXIT.ok;
  } finally {
    await store.close();
  }
}

/** What the person runs to sign in by hand: the same server, subject and client as this proxy. */
function loginCommand(
  serverUrl: URL,
  subject: string,
  values: {
    scope?: string;
    "client-id"?: string;
    "client-secret-env"?: string;
    "client-secret-file"?: string;
  },
): string {
  const words = [
    "npx agentauth mcp login",
    displayMcpServerUrl(serverUrl.href),
    "--subject",
    shellWord(subject),
  ];
  if (values.scope) words.push("--scope", shellWord(values.scope));
  if (values["client-id"]) words.push("--client-id", shellWord(values["client-id"]));
  if (values["client-secret-env"])
    words.push("--client-secret-env", shellWord(values["client-secret-env"]));
  if (values["client-secret-file"])
    words.push("--client-secret-file", shellWord(values["client-secret-file"]));
  return words.join(" ");
}

/** A pre-registered client, its secret from the environment or a file (never argv). */
function clientOf(
  clientId: string | undefined,
  secretEnv: string | undefined,
  secretFile: string | undefined,
  env: NodeJS.ProcessEnv,
): ((issuer: string) => OAuthClient | undefined) | undefined {
  if (secretEnv && secretFile) {
    throw new UsageError(
      "give the client secret once: --client-secret-env or --client-secret-file",
    );
  }
  if (!clientId) {
    if (secretEnv || secretFile) throw new UsageError("a client secret goes with --client-id");
    return undefined;
  }
  let secret: Secret | undefined;
  if (secretEnv) {
    const value = env[secretEnv];
    if (!value) throw new UsageError(`--client-secret-env ${secretEnv}: that variable is not set`);
    secret = new Secret(value);
  } else if (secretFile) {
    let text: string;
    try {
      text = readFileSync(secretFile, "utf8").trim();
    } catch {
      throw new UsageError(`--client-secret-file: cannot read that file`);
    }
    if (!text) throw new UsageError("--client-secret-file: the file is empty");
    secret = new Secret(text);
  }
  return () => ({ clientId, clientSecret: secret });
}

/**
 * `agentauth mcp login <url> --background …`, detached with its output ignored: it outlives this process (a client
 * restarting the proxy joins it), and ends itself when the sign-in is done or times out. Secrets stay out of argv:
 * the client secret is named by its variable or file, and the environment is passed on.
 */
function startBackgroundSignIn(
  serverUrl: URL,
  options: {
    subject: string;
    scope?: string;
    device: boolean;
    browser: boolean;
    clientId?: string;
    secretEnv?: string;
    secretFile?: string;
    env: NodeJS.ProcessEnv;
  },
): void {
  const args = [
    process.argv[1] as string,
    "mcp",
    "login",
    serverUrl.href,
    "--background",
    // Joined with `=`: a value starting with "-" stays a value.
    `--subject=${options.subject}`,
  ];
  if (options.scope) args.push(`--scope=${options.scope}`);
  if (options.device) args.push("--device");
  if (!options.browser) args.push("--no-browser");
  if (options.clientId) args.push(`--client-id=${options.clientId}`);
  if (options.secretEnv) args.push(`--client-secret-env=${options.secretEnv}`);
  if (options.secretFile) args.push(`--client-secret-file=${options.secretFile}`);
  const child = spawn(process.execPath, args, {
    detached: true,
    stdio: "ignore",
    env: options.env,
  });
  child.on("error", () => {});
  child.unref();
}

export { clientOf };
