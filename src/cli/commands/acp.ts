/**
 * `agentauth acp status|login|logout -- <agent command…>`: the ACP client journey against any agent launched over
 * stdio. Thin: parses arguments, prints, and calls `connectAgent` (src/acp/client). SIGINT/SIGTERM close the agent
 * and everything it started, then exit 130.
 */

import { runExampleAgent } from "../../acp/agent/index.ts";
import {
  type AcpAuthClient,
  AcpCancelledError,
  AcpEnvVarsMissingError,
  AcpSignInUnknownError,
  type ConnectAgentOptions,
  connectAgent,
  killAllGroups,
  type LoginOutcome,
  needsMet,
  type ProtocolVersion,
  runInheritedTerminal,
  type UrlPrompt,
} from "../../acp/client/index.ts";
import { peerText } from "../../core/display.ts";
import { type Secret, secret } from "../../core/secret.ts";
import { selfArgv } from "../../core/self-command.ts";
import { parseFlags } from "../flags.ts";
import { type CliIo, EXIT, jsonLine, UsageError } from "../io.ts";
import { agentName, signedInAs, statusJson, statusText, textLinks } from "./acp-output.ts";
import { askEnvVars, askLine, confirmCommand, readStdinSecret, stdinIsTty } from "./acp-prompts.ts";

/** Exit status of a command ended by Ctrl-C or SIGTERM (128 + SIGINT), as shells report it. */
const EXIT_CANCELLED = 130;

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
  const { values } = parseFlags({
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
  const { values } = parseFlags({ args: options, options: COMMON, strict: true });
  const session = { protocol: protocolOf(values.protocol), json: values.json };
  return withAgent(agent, io, session, async ({ client, name, signal }) => {
    const status = await client.status({ signal });
    if (values.json) io.stdout(jsonLine(statusJson(client, status)));
    else io.stdout(statusText(client, name, status));
    return EXIT.ok;
  });
}

const LOGIN_OPTIONS = {
  ...COMMON,
  method: { type: "string" },
  force: { type: "boolean", default: false },
  yes: { type: "boolean", default: false },
  "force-terminal": { type: "boolean", default: false },
  timeout: { type: "string" },
  "api-key-env": { type: "string" },
  "api-key-stdin": { type: "boolean", default: false },
} as const;

async function loginCommand(options: string[], agent: string[], io: CliIo): Promise<number> {
  // A key on the command line is visible to every user of the machine (ps, /proc): refused before parsing, so the
  // value is never echoed in a parse error either.
  if (options.some((o) => o === "--api-key" || o.startsWith("--api-key="))) {
    throw new UsageError(
      "API keys are not taken on the command line (other users can read it); use --api-key-env VAR, " +
        "--api-key-stdin, or type it when asked on a terminal",
    );
  }
  const { values } = parseFlags({ args: options, options: LOGIN_OPTIONS, strict: true });
  const timeoutMs = timeoutOf(values.timeout);
  const keyFromEnv = values["api-key-env"];
  if (keyFromEnv !== undefined && values["api-key-stdin"]) {
    throw new UsageError(
      "give the API key one way: --api-key-env VAR or --api-key-stdin, not both",
    );
  }
  let apiKey: Secret | undefined;
  if (keyFromEnv !== undefined) {
    const value = io.env[keyFromEnv]?.trim();
    if (!value) throw new UsageError(`--api-key-env: ${keyFromEnv} is not set (or empty)`);
    apiKey = secret(value);
  } else if (values["api-key-stdin"]) {
    const value = await readStdinSecret();
    if (!value) throw new UsageError("--api-key-stdin: stdin held no key (expected one line)");
    apiKey = secret(value);
  }
  const session = {
    protocol: protocolOf(values.protocol),
    json: values.json,
    yes: values.yes,
    forceTerminal: values["force-terminal"],
    ...(timeoutMs ? { timeoutMs } : {}),
  };
  return withAgent(
    agent,
    io,
    session,
    async ({ client, name, signal, methodShown, linksShown }) => {
      if (!values.force) {
        // Without --method (or a key), agentauth chooses the method, and a variable set for something else
        // (GEMINI_API_KEY, OPENAI_API_KEY…) can make it choose one that replaces a working sign-in: a signed-in
        // agent stops the login, and such a choice is not made for an agent whose sign-in cannot be told.
        const choosing = values.method === undefined && apiKey === undefined;
        const before = choosing
          ? await client.signedIn({ signal })
          : { signedIn: undefined, by: "state" as const, status: await client.status({ signal }) };
        const signedIn = before.signedIn ?? before.status.state === "authenticated";
        const methods = client.profile.authMethods
          .map((m) => peerText(m.id, { max: 60 }))
          .join(", ");
        if (signedIn) {
          const how =
            before.by === "session"
              ? " (it reports no state, but it opened a session)"
              : signedInAs(before.status);
          if (values.json) {
            io.stdout(
              jsonLine({
                ...statusJson(client, before.status),
                outcome: "already_signed_in",
                by: before.by,
              }),
            );
          } else {
            io.stdout(
              `Already signed in to ${name}${how}; nothing was changed. To sign in again, pass --force; to ` +
                `switch methods, --force --method ID (${name} advertises: ${methods || "none"}).\n`,
            );
          }
          return EXIT.ok;
        }
        if (
          choosing &&
          before.signedIn === undefined &&
          client.plan(undefined, { keyGiven: false }).byEnvironment
        ) {
          throw new AcpSignInUnknownError(
            `agentauth cannot tell whether ${name} is signed in: it reports no state, and ` +
              `${before.reason ?? "a session could not tell"}. The method agentauth would choose is chosen only ` +
              `because variables it reads are set, which may be for something else, and could replace the ` +
              `sign-in ${name} has, so nothing was sent. Pass --method ID to sign in with one (${name} advertises: ` +
              `${methods || "none"}), or --force to let agentauth choose.`,
          );
        }
      }
      // Asked on a terminal only once the login's own checks say the method takes a key and lacks one (its
      // variables unset, or not known: the kit's api-key); never for a method that runs in the terminal.
      const wanted =
        !apiKey &&
        values.method !== undefined &&
        stdinIsTty() &&
        keyWanted(client, values.method, io);
      if (wanted) {
        const typed = await askLine(
          `API key for ${name} (${peerText(wanted, { max: 80 })}, not shown): `,
          true,
        );
        if (typed) apiKey = secret(typed);
      }
      let linksAtWait = 0;
      const outcome = await client
        .login(values.method, {
          signal,
          ...(apiKey ? { apiKey } : {}),
          onWaiting: (method) => {
            methodShown(method.name);
            linksAtWait = linksShown();
            io.stderr(
              `Waiting for ${name} to finish ${signingIn(method.name)}… (Ctrl-C cancels)\n`,
            );
          },
          // A link the agent printed on stderr or stdout already told the person where to go.
          onStillWaiting: ({ message }) => {
            if (linksShown() === linksAtWait) io.stderr(`${message} (Ctrl-C cancels.)\n`);
          },
        })
        .catch((error: unknown) => {
          throw withFlagHint(error);
        });
      return reportLogin(io, name, outcome, values.json);
    },
  );
}

/**
 * The method's name when a login with `methodId` and no key would lack the key the method takes (checked by the
 * login's own plan, nothing sent); undefined when no key is needed, or when the plan refuses for another reason (the
 * login then says why).
 */
function keyWanted(client: AcpAuthClient, methodId: string, io: CliIo): string | undefined {
  let plan: ReturnType<AcpAuthClient["plan"]>;
  try {
    plan = client.plan(methodId, { keyGiven: false });
  } catch (error) {
    if (!(error instanceof AcpEnvVarsMissingError) || !error.acceptsKey) return undefined;
    plan = client.plan(methodId, { keyGiven: true });
    return plan.method.name;
  }
  const { needs, kind, method } = plan;
  if (kind === "terminal" || !needs.route) return undefined;
  const envHas = (variable: string) => Boolean(io.env[variable]);
  return needs.anyOf.length === 0 || !needsMet(needs, envHas, false) ? method.name : undefined;
}

/** A refusal for unset variables, with how this command supplies them. */
function withFlagHint(error: unknown): unknown {
  if (!(error instanceof AcpEnvVarsMissingError) || error.missing.length === 0) return error;
  const how = error.acceptsKey
    ? " Set what it needs in the environment agentauth runs in (the agent inherits it), or pass the key with --api-key-env VAR or --api-key-stdin."
    : " Set what it needs in the environment agentauth runs in (the agent inherits it).";
  return new AcpEnvVarsMissingError(`${error.message}${how}`, error.missing, {
    acceptsKey: error.acceptsKey,
  });
}

function reportLogin(io: CliIo, name: string, outcome: LoginOutcome, json: boolean): number {
  const { method, status, note } = outcome;
  if (json) {
    io.stdout(
      jsonLine({
        outcome: outcome.outcome,
        method,
        state: status.state,
        accounts: status.accounts,
        source: status.source,
        ...(status.reason ? { reason: status.reason } : {}),
        ...(note ? { note } : {}),
      }),
    );
  }
  if (outcome.outcome === "still_signed_out") {
    const why =
      status.state === "unauthenticated" ? "still reports unauthenticated" : status.reason;
    io.stderr(
      `agentauth: the login with ${peerText(method.id, { max: 60 })} finished, but ${name} ${why}; ` +
        "check the account or try another method (agentauth acp status lists them).\n",
    );
    return EXIT.failure;
  }
  if (json) return EXIT.ok;
  const said = note ? ` ${note}` : "";
  if (outcome.outcome === "session_opened") {
    io.stdout(
      `${name} accepted the sign-in with "${peerText(method.name)}" (${peerText(method.id)}) and a session opened; ` +
        `it does not report its state otherwise.${said}\n`,
    );
  } else if (outcome.outcome === "accepted_unverified") {
    io.stdout(
      `${name} accepted the sign-in request but does not report its state; try a session to confirm.${said}\n`,
    );
  } else {
    io.stdout(
      `Logged in to ${name} with "${peerText(method.name)}" (${peerText(method.id)})${signedInAs(status)}; state: ${status.state}.${said}\n`,
    );
  }
  return EXIT.ok;
}

async function logoutCommand(options: string[], agent: string[], io: CliIo): Promise<number> {
  const { values } = parseFlags({ args: options, options: COMMON, strict: true });
  const session = { protocol: protocolOf(values.protocol), json: values.json };
  return withAgent(agent, io, session, async ({ client, name, signal }) => {
    const status = await client.logout({ signal });
    if (values.json) io.stdout(jsonLine(statusJson(client, status)));
    else io.stdout(`Logged out of ${name}; state: ${status.state}.\n`);
    return EXIT.ok;
  });
}

interface Session {
  protocol: ProtocolVersion;
  json: boolean;
  yes?: boolean;
  forceTerminal?: boolean;
  timeoutMs?: number;
}

interface Connected {
  client: AcpAuthClient;
  name: string;
  signal: AbortSignal;
  /** Tells the URL printer which method is signing in (for "To sign in to <agent> (<method>)"). */
  methodShown: (name: string) => void;
  /** How many links the agent printed (stderr, stray stdout) or sent so far. */
  linksShown: () => number;
}

/**
 * Connects with everything a terminal user has (URLs on stderr, terminal logins in this terminal, prompts), with
 * SIGINT/SIGTERM handlers that close the client (the agent's whole process group) and exit 130. A second signal
 * kills what is left at once.
 */
async function withAgent(
  agent: string[],
  io: CliIo,
  session: Session,
  run: (connected: Connected) => Promise<number>,
): Promise<number> {
  // `agentauth` as the agent is this same agentauth (this Node, this build), found whether or not it is on PATH:
  // `npx agentauth acp status -- agentauth acp example-agent` works from a project that installed it.
  const [command = "", ...args] =
    agent[0] === "agentauth" ? [...selfArgv(), ...agent.slice(1)] : agent;
  const controller = new AbortController();
  let signals = 0;
  const onSignal = () => {
    signals++;
    if (signals > 1) {
      killAllGroups();
      process.exit(EXIT_CANCELLED);
    }
    controller.abort();
  };
  process.on("SIGINT", onSignal);
  process.on("SIGTERM", onSignal);
  let client: AcpAuthClient | undefined;
  const shown = { name: "", method: "", links: 0 };
  const debug = io.env.AGENTAUTH_LOG_LEVEL === "debug";
  const showLink = (url: string) => {
    shown.links++;
    io.stderr(`${shown.name || "The agent"} printed a link: ${url}\n`);
  };
  const strayLinks = textLinks(showLink);
  const options: ConnectAgentOptions = {
    protocolVersion: session.protocol,
    env: io.env,
    signal: controller.signal,
    onUrl: (prompt) => {
      shown.links++;
      showUrl(io, prompt, shown);
    },
    runTerminal: runInheritedTerminal,
    ...(stdinIsTty() || session.forceTerminal
      ? {}
      : {
          // A login that runs an agent-named command or agent-chosen variables needs --yes as well: there is no
          // terminal to confirm it on either.
          terminalRefusal: (_method, needsConsent) =>
            "stdin is not a terminal, so nobody could answer its prompts; run agentauth in a terminal, or pass " +
            `--force-terminal${needsConsent ? " --yes" : ""} to run it anyway`,
        }),
    confirmCommand: (_invocation, line) =>
      confirmCommand(io, shown.name || "The agent", line, session.yes === true),
    showCommand: (_invocation, line) => io.stderr(`${shown.name || "The agent"} runs: ${line}\n`),
    onEnvVars: (request) => askEnvVars(io, request),
    // The agent's own log lines only when asked for (they may say anything); otherwise only links it prints, on
    // stderr or among the stdout lines that are not ACP (gemini-cli's oauth-personal prints its URL there).
    stderr: debug ? "inherit" : textLinks(showLink),
    onStrayStdout: (line) => strayLinks(`${line}\n`),
    ...(session.timeoutMs
      ? {
          timeouts: {
            loginMs: session.timeoutMs,
            terminalMs: session.timeoutMs,
            // The word on a silent login comes after 15 s, or halfway through a shorter timeout.
            silentMs: Math.min(15_000, session.timeoutMs / 2),
          },
        }
      : {}),
  };
  try {
    client = await connectAgent(command, args, options);
    shown.name = agentName(client, command);
    return await run({
      client,
      name: shown.name,
      signal: controller.signal,
      methodShown: (method) => {
        shown.method = method;
      },
      linksShown: () => shown.links,
    });
  } catch (error) {
    // A signal, or Ctrl-C at one of our prompts (raw mode turns it into a character): both are cancellations.
    if (!controller.signal.aborted && !(error instanceof AcpCancelledError)) throw error;
    // Whatever the interrupted step reported, the person cancelled it.
    const cancelled = new AcpCancelledError(
      `${error instanceof AcpCancelledError ? error.message : "The command was cancelled."} ` +
        "The agent and everything it started were stopped.",
    );
    if (session.json) {
      io.stdout(jsonLine({ error: { code: cancelled.code, message: cancelled.message } }));
    } else {
      io.stderr(`agentauth: ${cancelled.message} [${cancelled.code}]\n`);
    }
    return EXIT_CANCELLED;
  } finally {
    await client?.close();
    process.off("SIGINT", onSignal);
    process.off("SIGTERM", onSignal);
  }
}

function showUrl(io: CliIo, prompt: UrlPrompt, shown: { name: string; method: string }): void {
  const who = shown.name || "the agent";
  // A method called just "Sign in" adds nothing to "To sign in to <agent>".
  const what = shown.method && !/^(sign|log) ?in$/i.test(shown.method) ? ` (${shown.method})` : "";
  // The agent's own words only when they add something: they often repeat the URL (and misname the product).
  const words =
    prompt.message && !prompt.message.includes(prompt.url)
      ? `${who} says: ${prompt.message}\n`
      : "";
  io.stderr(
    `To sign in to ${who}${what}:\n\n  Open: ${prompt.url}\n` +
      (prompt.userCode ? `  Code: ${prompt.userCode}\n` : "") +
      `\n${words}`,
  );
}

/** "signing in", "signing in with GitHub" (method "Sign in with GitHub"), "signing in with Codex login". */
export function signingIn(method: string): string {
  const rest = method.replace(/^(sign|log) ?in\b\s*/i, "");
  if (rest === "") return "signing in";
  if (rest !== method)
    return /^with\b/i.test(rest) ? `signing in ${rest}` : `signing in (${method})`;
  return `signing in with ${method}`;
}

function protocolOf(value: string | undefined): ProtocolVersion {
  if (value === "1" || value === undefined) return 1;
  if (value === "2") return 2;
  throw new UsageError(`--protocol must be 1 or 2, not '${value}'`);
}

function timeoutOf(value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  const seconds = Number(value);
  if (!Number.isFinite(seconds) || seconds <= 0 || seconds > 24 * 3600) {
    throw new UsageError(`--timeout takes seconds between 1 and 86400, not '${value}'`);
  }
  return seconds * 1000;
}
