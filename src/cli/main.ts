#!/usr/bin/env node
/** The `agentauth` command: parses the command line and hands each command to the library. */

import { readFileSync } from "node:fs";
import { createLogger } from "../core/log.ts";
import { DATABASE_URL_ENV, isPostgresUrl } from "../db/url.ts";
import { ACP_HELP, ACP_USAGE } from "./commands/acp-help.ts";
import { AHP_HELP, AHP_USAGE } from "./commands/ahp-help.ts";
import { CONSOLE_HELP, CONSOLE_USAGE } from "./commands/console-help.ts";
import { DEMO_HELP, DEMO_USAGE } from "./commands/demo-help.ts";
import { IDP_HELP, IDP_USAGE } from "./commands/idp-help.ts";
import { LOGIN_HELP, LOGIN_USAGE } from "./commands/login-help.ts";
import { MCP_HELP, MCP_USAGE } from "./commands/mcp-help.ts";
import { PROVIDERS_HELP, PROVIDERS_USAGE } from "./commands/providers-help.ts";
import { RAP_HELP, RAP_USAGE } from "./commands/rap-help.ts";
import { TOKEN_HELP, TOKEN_USAGE } from "./commands/token-help.ts";
import { VAULT_HELP, VAULT_USAGE } from "./commands/vault-help.ts";
import {
  isParseArgsError,
  UnknownOptionError,
  unknownFlagOf,
  unknownOptionMessage,
} from "./flags.ts";
import { type Area, commandWords, helpFor, subcommandsAfter, subcommandsOf } from "./help.ts";
import { type CliIo, EXIT, processIo, reportError, UsageError } from "./io.ts";
import { watchInterrupt } from "./lifecycle.ts";

type Run = Area["run"];

/**
 * A command's code is imported when it runs, not at startup: `--version`, `--help` and a command's `--help` load only
 * the help texts (commands/*-help.ts), and a command loads only what it uses (issue 20 §3: `agentauth --version`
 * loaded ~900 modules, the OAuth engine, oidc-provider, pg and the ACP SDK among them).
 */
const lazy =
  (load: () => Promise<Run>): Run =>
  async (argv, io) =>
    (await load())(argv, io);

/** `token`'s exit codes 3 and 4 are read from its errors, once it has run. */
let token: typeof import("./commands/token.ts") | undefined;

const AREAS: Area[] = [
  {
    name: "demo",
    usage: DEMO_USAGE,
    help: DEMO_HELP,
    run: lazy(async () => (await import("./commands/demo.ts")).demoCommand),
  },
  {
    name: "console",
    usage: CONSOLE_USAGE,
    help: CONSOLE_HELP,
    run: lazy(async () => (await import("./commands/console.ts")).consoleCommand),
  },
  {
    name: "login",
    usage: LOGIN_USAGE,
    help: LOGIN_HELP,
    run: lazy(async () => (await import("./commands/login.ts")).loginCommand),
  },
  {
    name: "providers",
    usage: PROVIDERS_USAGE,
    help: PROVIDERS_HELP,
    run: lazy(async () => (await import("./commands/providers.ts")).providersCommand),
  },
  {
    name: "token",
    usage: TOKEN_USAGE,
    help: TOKEN_HELP,
    run: lazy(async () => {
      token = await import("./commands/token.ts");
      return token.tokenCommand;
    }),
    report: { jsonTo: "stderr", exitFor: (error) => token?.tokenExitFor(error) },
  },
  {
    name: "vault",
    usage: VAULT_USAGE,
    help: VAULT_HELP,
    run: lazy(async () => (await import("./commands/vault.ts")).vaultCommand),
  },
  {
    name: "acp",
    usage: ACP_USAGE,
    help: ACP_HELP,
    run: lazy(async () => (await import("./commands/acp.ts")).acpCommand),
  },
  {
    name: "ahp",
    usage: AHP_USAGE,
    help: AHP_HELP,
    run: lazy(async () => (await import("./commands/ahp.ts")).ahpCommand),
  },
  {
    name: "rap",
    usage: RAP_USAGE,
    help: RAP_HELP,
    run: lazy(async () => (await import("./commands/rap.ts")).rapCommand),
  },
  {
    name: "mcp",
    usage: MCP_USAGE,
    help: MCP_HELP,
    run: lazy(async () => (await import("./commands/mcp.ts")).mcpCommand),
  },
  {
    name: "idp",
    usage: IDP_USAGE,
    help: IDP_HELP,
    run: lazy(async () => (await import("./commands/idp.ts")).idpCommand),
  },
];

export const USAGE = `agentauth: authentication for agent protocols (ACP, AHP, RAP)

Usage:
${AREAS.map((area) => area.usage).join("\n\n")}

agentauth <command> [<subcommand>] --help    the full usage of one command, with every flag and an example
agentauth --version                          the installed version

All local state lives under $AGENTAUTH_HOME (default: the platform's data directory).
The vault key comes from $AGENTAUTH_VAULT_KEY (32 bytes, base64) or a key file created there (mode 0600).
--database-url postgres://user@host:port/db (any command) or $AGENTAUTH_DATABASE_URL keeps the vault and the
RAP state in PostgreSQL instead, shared by every instance; the flag refuses a password (other users see argv):
put it in $PGPASSWORD or in $AGENTAUTH_DATABASE_URL.
With --json, results and errors are JSON on stdout; an error is {"error":{"code":"…","message":"…"}}.
Exit codes: 0 success, 1 failure, 2 usage error, 130 interrupted (Ctrl-C); 'agentauth token' adds 3 (sign in
again) and 4 (temporary failure, try again later).
`;

/** The package version, read from package.json two folders up (the same from src/cli and dist/cli). */
export function version(): string {
  const pkg = JSON.parse(readFileSync(new URL("../../package.json", import.meta.url), "utf8"));
  return String(pkg.version);
}

export async function main(argv: string[], baseIo: CliIo = processIo()): Promise<number> {
  let io = baseIo;
  let databaseUrl: string | undefined;
  try {
    ({ argv, databaseUrl } = takeDatabaseUrl(argv));
  } catch (error) {
    return reportError(io, error, { json: beforeDashes(argv).includes("--json") });
  }
  // Every command opens its stores from io.env, so this one setting moves them all to PostgreSQL.
  if (databaseUrl) io = { ...io, env: { ...io.env, [DATABASE_URL_ENV]: databaseUrl } };
  const [command, ...rest] = argv;
  if (!command) {
    io.stderr(USAGE);
    return EXIT.usage;
  }
  if (command === "--help" || command === "-h") {
    io.stdout(USAGE);
    return EXIT.ok;
  }
  if (command === "--version" || command === "-V") {
    io.stdout(`${version()}\n`);
    return EXIT.ok;
  }
  // `agentauth help vault list` is `agentauth vault list --help`.
  if (command === "help") return printHelp(io, rest);
  const area = AREAS.find((a) => a.name === command);
  // Only flags before `--` are ours: `acp status -- some-agent --help` passes --help to the agent.
  const ours = beforeDashes(rest);
  const words = commandWords(ours);
  const json = ours.includes("--json");
  try {
    if (!area) {
      throw new UsageError(
        `unknown command '${command}'; the commands are ${AREAS.map((a) => a.name).join(", ")}`,
      );
    }
    if (ours.includes("--help") || ours.includes("-h")) return printHelp(io, [command, ...words]);
    checkSubcommand(area, ours);
    return await area.run(rest, io);
  } catch (error) {
    // Details only on request (AGENTAUTH_LOG_LEVEL=debug), as the hint printed by reportError promises.
    createLogger().debug("cli.error", { error });
    const forHelp = area ? [area.name, helpFor(area, words).key].join(" ").trim() : undefined;
    const reported = asUsageError(error, forHelp ?? command, json, ours);
    return reportError(io, reported, { command: forHelp, json, ...area?.report });
  }
}

function beforeDashes(args: string[]): string[] {
  return args.includes("--") ? args.slice(0, args.indexOf("--")) : args;
}

/**
 * The global `--database-url <url>` (or `--database-url=<url>`), accepted anywhere before `--` and removed from
 * argv. A URL with a password is refused: argv is visible to every user of the machine (`ps`), the environment
 * is not.
 */
function takeDatabaseUrl(argv: string[]): { argv: string[]; databaseUrl: string | undefined } {
  const end = argv.includes("--") ? argv.indexOf("--") : argv.length;
  const kept: string[] = [];
  let databaseUrl: string | undefined;
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (i >= end || (arg !== "--database-url" && !arg.startsWith("--database-url="))) {
      kept.push(arg);
      continue;
    }
    const value = arg === "--database-url" ? argv[++i] : arg.slice("--database-url=".length);
    if (value === undefined || i >= end || value.trim() === "") {
      throw new UsageError("--database-url needs a value: postgres://user@host:port/database");
    }
    databaseUrl = checkDatabaseUrl(value.trim());
  }
  return { argv: kept, databaseUrl };
}

function checkDatabaseUrl(value: string): string {
  let url: URL | undefined;
  try {
    url = new URL(value);
  } catch {
    url = undefined;
  }
  // The value is never echoed: it may hold a password even when malformed.
  if (!url || !isPostgresUrl(value)) {
    throw new UsageError(
      "--database-url must be a PostgreSQL URL such as postgres://agentauth@db.example:5432/agentauth",
      undefined,
      "database_url_invalid",
    );
  }
  const queryPassword = [...url.searchParams.keys()].some((k) => /password/i.test(k));
  if (url.password !== "" || queryPassword) {
    throw new UsageError(
      "--database-url must not carry a password: every user on this machine can read a command line. Put the " +
        "password in PGPASSWORD (or ~/.pgpass), or give the whole URL in AGENTAUTH_DATABASE_URL instead.",
      undefined,
      "database_url_password",
    );
  }
  return value;
}

/** `agentauth vault` (no subcommand) prints the vault's usage; `agentauth vault bogus` names the valid ones. */
function checkSubcommand(area: Area, ours: string[]): void {
  const subs = subcommandsOf(area);
  if (subs.length === 0) return;
  const [first] = ours;
  if (first === undefined || first.startsWith("-")) {
    throw new UsageError(
      `'agentauth ${area.name}' needs a subcommand: ${subs.join(", ")}.`,
      `Usage:\n${area.usage}\n\nRun 'agentauth ${area.name} <subcommand> --help' for its flags.`,
    );
  }
  if (!subs.includes(first)) {
    throw new UsageError(
      `unknown ${area.name} command '${first}'; the ${area.name} commands are ${subs.join(", ")}`,
    );
  } // Two-word commands (`rap tool serve`, `ahp host serve`): the same for the second word.
  const next = subcommandsAfter(area, first);
  if (next.length === 0) return;
  const second = ours[1];
  const words = `${area.name} ${first}`;
  if (second === undefined || second.startsWith("-")) {
    throw new UsageError(`'agentauth ${words}' needs a subcommand: ${next.join(", ")}.`);
  }
  if (!next.includes(second)) {
    throw new UsageError(
      `unknown ${words} command '${second}'; the ${words} commands are ${next.join(", ")}`,
    );
  }
}

/**
 * node:util parseArgs throws TypeErrors with ERR_PARSE_ARGS_* codes for unknown or malformed flags. An unknown one
 * (from `parseFlags`, or node's own from a parser that does not use it) is said the same way for every command:
 * the flag, the command, the closest option, its options, and under --json its --help too (the text output prints
 * that hint on its own line).
 */
function asUsageError(error: unknown, command: string, json: boolean, argv: string[]): unknown {
  let unknown: { flag: string; options: readonly string[] } | undefined;
  if (error instanceof UnknownOptionError) unknown = error;
  else if (isParseArgsError(error, "ERR_PARSE_ARGS_UNKNOWN_OPTION")) {
    unknown = { flag: unknownFlagOf(error as Error, argv), options: [] };
  } else if (isParseArgsError(error)) return new UsageError((error as Error).message);
  else return error;
  const help = json ? `. Run 'agentauth ${command} --help' for usage.` : "";
  const message = unknownOptionMessage(unknown.flag, unknown.options, command);
  return new UsageError(`${message}${help}`);
}

function printHelp(io: CliIo, words: string[]): number {
  const [name, ...sub] = words;
  if (!name) {
    io.stdout(USAGE);
    return EXIT.ok;
  }
  const area = AREAS.find((a) => a.name === name);
  if (!area) return reportError(io, new UsageError(`no help for unknown command '${name}'`));
  const text = helpFor(area, sub).text;
  io.stdout(text.endsWith("\n") ? text : `${text}\n`);
  return EXIT.ok;
}

/** The whole process: Ctrl-C turns any outcome into exit code 130 (after the command closed what it opened). */
export async function cli(argv: string[]): Promise<number> {
  const watch = watchInterrupt({ stderr: (text) => process.stderr.write(text) });
  try {
    const code = await main(argv);
    return watch.interrupted ? EXIT.interrupted : code;
  } finally {
    watch.dispose();
  }
}

if (import.meta.main) {
  process.exitCode = await cli(process.argv.slice(2));
}
