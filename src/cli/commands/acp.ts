/**
 * `agentauth acp status|login|logout -- <agent command…>`: the ACP client journey against any agent launched over
 * stdio. Thin: parses arguments, prints, and calls `connectAgent` (src/acp/client).
 */

import { createInterface } from "node:readline";
import { parseArgs } from "node:util";
import { runExampleAgent } from "../../acp/agent/index.ts";
import {
  type AcpAuthClient,
  AcpCancelledError,
  AcpEnvVarsMissingError,
  type AuthStatus,
  type ConnectAgentOptions,
  connectAgent,
  type EnvVarRequest,
  type EnvVarSpec,
  type ProtocolVersion,
  runInheritedTerminal,
  type UrlPrompt,
} from "../../acp/client/index.ts";
import { type CliIo, EXIT, UsageError } from "../io.ts";

export const ACP_USAGE = `agentauth acp status [--json] [--protocol 1|2] -- <agent command…>
  Starts the agent, asks for its sign-in state (auth/status, else getAuthState), lists its auth methods.
agentauth acp login [--method ID] [--json] [--protocol 1|2] -- <agent command…>
  Signs in to the agent with the method given, or the best one it offers; prints any URL and code to stderr.
agentauth acp example-agent [--issuer URL] [--session-policy require-auth|terminate|keep]
  The reference echo agent (ACP v1 and v2 on stdio) whose sessions require sign-in at the issuer
  (default $AGENTAUTH_ISSUER or http://127.0.0.1:4444); its terminal method is --login.
agentauth acp logout [--json] [--protocol 1|2] -- <agent command…>
  Signs out, when the agent supports logout.`;

type Subcommand = (options: string[], agent: string[], io: CliIo) => Promise<number>;

/** One entry per `agentauth acp <name>`; each receives its own options and the agent command after `--`. */
export const ACP_SUBCOMMANDS: Record<string, { run: Subcommand; needsAgent: boolean }> = {
  status: { run: statusCommand, needsAgent: true },
  login: { run: loginCommand, needsAgent: true },
  logout: { run: logoutCommand, needsAgent: true },
  "example-agent": { run: exampleAgentCommand, needsAgent: false },
};

/** `agentauth acp example-agent [--issuer URL] [--login]`: the reference agent on stdio (stdout is ACP only). */
async function exampleAgentCommand(
  options: string[],
  _agent: string[],
  io: CliIo,
): Promise<number> {
  const { values } = parseArgs({
    args: options,
    options: {
      issuer: { type: "string", default: io.env.AGENTAUTH_ISSUER ?? "http://127.0.0.1:4444" },
      "session-policy": { type: "string", default: "require-auth" },
      login: { type: "boolean", default: false },
    },
    strict: true,
    allowPositionals: false,
  });
  const policy = values["session-policy"];
  if (policy !== "require-auth" && policy !== "terminate" && policy !== "keep") {
    throw new UsageError("--session-policy must be require-auth, terminate or keep");
  }
  return runExampleAgent({
    issuer: values.issuer,
    env: io.env,
    sessionPolicy: policy,
    argv: values.login ? ["--login"] : [],
  });
}

export async function acpCommand(argv: string[], io: CliIo): Promise<number> {
  const [name, ...rest] = argv;
  const sub = name ? ACP_SUBCOMMANDS[name] : undefined;
  if (!sub) {
    const known = Object.keys(ACP_SUBCOMMANDS).join(", ");
    throw new UsageError(
      name ? `unknown acp command '${name}' (one of: ${known})` : `acp needs a command: ${known}`,
    );
  }
  const split = rest.indexOf("--");
  const options = split === -1 ? rest : rest.slice(0, split);
  const agent = split === -1 ? [] : rest.slice(split + 1);
  if (sub.needsAgent && agent.length === 0) {
    throw new UsageError(
      `acp ${name} needs the agent command after --, e.g. agentauth acp ${name} -- my-agent --acp`,
    );
  }
  return sub.run(options, agent, io);
}

const COMMON = {
  protocol: { type: "string", default: "1" },
  json: { type: "boolean", default: false },
} as const;

async function statusCommand(options: string[], agent: string[], io: CliIo): Promise<number> {
  const { values } = parseArgs({
    args: options,
    options: COMMON,
    strict: true,
    allowPositionals: false,
  });
  return withAgent(agent, io, protocolOf(values.protocol), undefined, async (client) => {
    const status = await client.status();
    if (values.json) io.stdout(`${JSON.stringify(statusJson(client, status))}\n`);
    else io.stdout(statusText(client, status));
    return EXIT.ok;
  });
}

async function loginCommand(options: string[], agent: string[], io: CliIo): Promise<number> {
  const { values } = parseArgs({
    args: options,
    options: { ...COMMON, method: { type: "string" } },
    strict: true,
    allowPositionals: false,
  });
  const controller = new AbortController();
  const onSignal = () => controller.abort();
  process.once("SIGINT", onSignal);
  try {
    return await withAgent(
      agent,
      io,
      protocolOf(values.protocol),
      controller.signal,
      async (client) => {
        const outcome = await client.login(values.method, { signal: controller.signal });
        const name = agentName(client);
        if (values.json)
          io.stdout(
            `${JSON.stringify({ ...statusJson(client, outcome.status), method: outcome.method })}\n`,
          );
        if (!outcome.authenticated) {
          io.stderr(
            `agentauth: the login with ${outcome.method.id} finished, but ${name} still reports unauthenticated.\n`,
          );
          return EXIT.failure;
        }
        if (!values.json) {
          io.stdout(
            `Logged in to ${name} with "${oneLine(outcome.method.name)}" (${outcome.method.id}); state: ${outcome.status.state}.\n`,
          );
        }
        return EXIT.ok;
      },
    );
  } finally {
    process.off("SIGINT", onSignal);
  }
}

async function logoutCommand(options: string[], agent: string[], io: CliIo): Promise<number> {
  const { values } = parseArgs({
    args: options,
    options: COMMON,
    strict: true,
    allowPositionals: false,
  });
  return withAgent(agent, io, protocolOf(values.protocol), undefined, async (client) => {
    const status = await client.logout();
    if (values.json) io.stdout(`${JSON.stringify(statusJson(client, status))}\n`);
    else io.stdout(`Logged out of ${agentName(client)}; state: ${status.state}.\n`);
    return EXIT.ok;
  });
}

/** Connects with everything a terminal user has: URLs on stderr, terminal logins in this terminal, prompts. */
async function withAgent(
  agent: string[],
  io: CliIo,
  protocolVersion: ProtocolVersion,
  signal: AbortSignal | undefined,
  run: (client: AcpAuthClient) => Promise<number>,
): Promise<number> {
  const [command = "", ...args] = agent;
  const options: ConnectAgentOptions = {
    protocolVersion,
    env: io.env,
    signal,
    onUrl: (prompt) => showUrl(io, prompt),
    runTerminal: runInheritedTerminal,
    onEnvVars: (request) => askEnvVars(io, request),
    // The agent's own log lines only when asked for: they may say anything.
    stderr: io.env.AGENTAUTH_LOG_LEVEL === "debug" ? "inherit" : "ignore",
  };
  const client = await connectAgent(command, args, options);
  try {
    return await run(client);
  } finally {
    await client.close();
  }
}

function showUrl(io: CliIo, prompt: UrlPrompt): void {
  io.stderr(
    `${prompt.message ? `${prompt.message}\n` : ""}\n  Open: ${prompt.url}\n` +
      (prompt.userCode ? `  Code: ${prompt.userCode}\n` : "") +
      "\nWaiting for the sign-in to finish…\n",
  );
}

/**
 * The legacy `env_var` method's variables: asked on the terminal (secrets without echo); with no terminal, the
 * only source is this command's environment, which the agent already inherits, so being asked means they are absent.
 */
async function askEnvVars(io: CliIo, request: EnvVarRequest): Promise<Record<string, string>> {
  if (!process.stdin.isTTY) {
    throw new AcpEnvVarsMissingError(
      `The auth method "${request.method.id}" needs ${request.missing.join(", ")}; there is no terminal to ask on, ` +
        `so set ${request.missing.length === 1 ? "it" : "them"} in the environment of agentauth.`,
      request.missing,
    );
  }
  io.stderr(
    `${oneLine(request.method.name)} needs ${request.missing.join(", ")}` +
      `${request.method.link ? ` (get ${request.missing.length === 1 ? "it" : "them"} at ${oneLine(request.method.link)})` : ""}.\n`,
  );
  const values: Record<string, string> = {};
  for (const spec of request.vars.filter((v) => request.missing.includes(v.name) || v.optional)) {
    if (spec.optional && io.env[spec.name]) continue;
    const value = await askLine(promptFor(spec), spec.secret);
    if (value) values[spec.name] = value;
  }
  return values;
}

function promptFor(spec: EnvVarSpec): string {
  return `${spec.label ? `${oneLine(spec.label)} (${spec.name})` : spec.name}${spec.optional ? " [optional]" : ""}: `;
}

/** One line from the terminal, the question on stderr; a secret is read in raw mode, without echo. */
function askLine(question: string, hidden: boolean): Promise<string> {
  if (hidden) return readHidden(question);
  const rl = createInterface({ input: process.stdin, output: process.stderr, terminal: true });
  return new Promise((resolve) =>
    rl.question(question, (answer) => {
      rl.close();
      resolve(answer.trim());
    }),
  );
}

/** Raw mode: nothing is echoed; Enter ends, Backspace deletes, Ctrl-C cancels (raw mode turns off SIGINT). */
function readHidden(question: string): Promise<string> {
  const stdin = process.stdin;
  process.stderr.write(question);
  stdin.setRawMode(true);
  stdin.setEncoding("utf8");
  stdin.resume();
  let value = "";
  return new Promise((resolve, reject) => {
    const finish = (error?: Error) => {
      stdin.off("data", onData);
      stdin.setRawMode(false);
      stdin.pause();
      process.stderr.write("\n");
      if (error) reject(error);
      else resolve(value.trim());
    };
    const onData = (chunk: string) => {
      for (const char of chunk) {
        if (char === "\r" || char === "\n" || char === "\u0004") return finish();
        if (char === "\u0003") return finish(new AcpCancelledError("Cancelled at the prompt."));
        if (char === "\u007f" || char === "\b") value = value.slice(0, -1);
        else if (char >= " ") value += char;
      }
    };
    stdin.on("data", onData);
  });
}

/** `status --json`: built field by field from what we parsed; nothing the agent sent (`_meta`) is passed through. */
function statusJson(client: AcpAuthClient, status: AuthStatus) {
  const { profile } = client;
  return {
    protocolVersion: profile.protocolVersion,
    agent: profile.agent ? { name: profile.agent.name, version: profile.agent.version } : null,
    authMethods: profile.authMethods.map((m) => ({ id: m.id, name: m.name, type: m.type })),
    capabilities: {
      logout: profile.capabilities.logout,
      status: profile.capabilities.status,
      getAuthState: profile.capabilities.getAuthState,
    },
    state: status.state,
    accounts: status.accounts,
    source: status.source,
    ...(status.reason ? { reason: status.reason } : {}),
    ...(status.unrecognizedState ? { unrecognizedState: status.unrecognizedState } : {}),
    ...(status.hint ? { hint: { state: status.hint.state, label: status.hint.label } } : {}),
  };
}

function statusText(client: AcpAuthClient, status: AuthStatus): string {
  const { profile } = client;
  const lines = [
    `${agentName(client)}${profile.agent?.version ? ` ${oneLine(profile.agent.version)}` : ""} (ACP v${profile.protocolVersion})`,
    `State:    ${status.state}${status.source === "none" ? "" : ` (from ${status.source})`}`,
  ];
  if (status.reason) lines.push(`          ${oneLine(status.reason)}`);
  if (status.hint)
    lines.push(
      `Hint:     ${status.hint.state}${status.hint.label ? ` (${oneLine(status.hint.label)})` : ""}`,
    );
  for (const a of status.accounts) {
    const who = [
      a.name,
      a.email ? `<${a.email}>` : undefined,
      a.organization ? `(${a.organization})` : undefined,
    ]
      .filter(Boolean)
      .join(" ");
    lines.push(
      `Account:  ${oneLine(a.label)}${who ? ` ${oneLine(who)}` : ""}${a.active ? " [active]" : ""}`,
    );
  }
  for (const m of profile.authMethods)
    lines.push(`Method:   ${oneLine(m.id)} (${oneLine(m.type)}) ${oneLine(m.name)}`);
  if (profile.authMethods.length === 0) lines.push("Method:   none advertised");
  lines.push(`Logout:   ${profile.capabilities.logout ? "supported" : "not supported"}`);
  return `${lines.join("\n")}\n`;
}

function agentName(client: AcpAuthClient): string {
  return oneLine(client.profile.agent?.title ?? client.profile.agent?.name ?? "the agent");
}

/** Agent-supplied text on a terminal: one line, no control characters (no escape sequences), bounded. */
function oneLine(text: string): string {
  const clean = text.replace(CONTROL_CHARS, " ").trim();
  return clean.length > 200 ? `${clean.slice(0, 200)}…` : clean;
}

const CONTROL_CHARS =
  // biome-ignore lint/suspicious/noControlCharactersInRegex: matching them is the point.
  /[\u0000-\u001f\u007f-\u009f]+/g;

function protocolOf(value: string | undefined): ProtocolVersion {
  if (value === "1" || value === undefined) return 1;
  if (value === "2") return 2;
  throw new UsageError(`--protocol must be 1 or 2, not '${value}'`);
}
