#!/usr/bin/env node
/** The `agentauth` command: parses the command line and hands each command to the library. */

import { readFileSync } from "node:fs";
import { createLogger } from "../core/log.ts";
import * as acp from "./commands/acp.ts";
import * as ahp from "./commands/ahp.ts";
import { CONSOLE_HELP, CONSOLE_USAGE, consoleCommand } from "./commands/console.ts";
import { DEMO_HELP, DEMO_USAGE, demoCommand } from "./commands/demo.ts";
import { IDP_HELP, IDP_USAGE, idpCommand } from "./commands/idp.ts";
import { LOGIN_HELP, LOGIN_USAGE, loginCommand } from "./commands/login.ts";
import { PROVIDERS_HELP, PROVIDERS_USAGE, providersCommand } from "./commands/providers.ts";
import * as rap from "./commands/rap.ts";
import { TOKEN_HELP, TOKEN_USAGE, tokenCommand, tokenExitFor } from "./commands/token.ts";
import * as vault from "./commands/vault.ts";
import {
  type Area,
  commandWords,
  helpExport,
  helpFor,
  subcommandsAfter,
  subcommandsOf,
} from "./help.ts";
import { type CliIo, EXIT, processIo, reportError, UsageError } from "./io.ts";
import { watchInterrupt } from "./lifecycle.ts";

const AREAS: Area[] = [
  { name: "demo", usage: DEMO_USAGE, help: DEMO_HELP, run: demoCommand },
  { name: "console", usage: CONSOLE_USAGE, help: CONSOLE_HELP, run: consoleCommand },
  { name: "login", usage: LOGIN_USAGE, help: LOGIN_HELP, run: loginCommand },
  { name: "providers", usage: PROVIDERS_USAGE, help: PROVIDERS_HELP, run: providersCommand },
  {
    name: "token",
    usage: TOKEN_USAGE,
    help: TOKEN_HELP,
    run: tokenCommand,
    report: { jsonTo: "stderr", exitFor: tokenExitFor },
  },
  {
    name: "vault",
    usage: vault.VAULT_USAGE,
    help: helpExport(vault, "VAULT_HELP"),
    run: vault.vaultCommand,
  },
  { name: "acp", usage: acp.ACP_USAGE, help: helpExport(acp, "ACP_HELP"), run: acp.acpCommand },
  { name: "ahp", usage: ahp.AHP_USAGE, help: helpExport(ahp, "AHP_HELP"), run: ahp.ahpCommand },
  { name: "rap", usage: rap.RAP_USAGE, help: helpExport(rap, "RAP_HELP"), run: rap.rapCommand },
  { name: "idp", usage: IDP_USAGE, help: IDP_HELP, run: idpCommand },
];

export const USAGE = `agentauth: authentication for agent protocols (ACP, AHP, RAP)

Usage:
${AREAS.map((area) => area.usage).join("\n\n")}

agentauth <command> [<subcommand>] --help    the full usage of one command, with every flag and an example
agentauth --version                          the installed version

All local state lives under $AGENTAUTH_HOME (default: the platform's data directory).
The vault key comes from $AGENTAUTH_VAULT_KEY (32 bytes, base64) or a key file created there (mode 0600).
With --json, results and errors are JSON on stdout; an error is {"error":{"code":"…","message":"…"}}.
Exit codes: 0 success, 1 failure, 2 usage error, 130 interrupted (Ctrl-C); 'agentauth token' adds 3 (sign in
again) and 4 (temporary failure, try again later).
`;

/** The package version, read from package.json two folders up (the same from src/cli and dist/cli). */
export function version(): string {
  const pkg = JSON.parse(readFileSync(new URL("../../package.json", import.meta.url), "utf8"));
  return String(pkg.version);
}

export async function main(argv: string[], io: CliIo = processIo()): Promise<number> {
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
  const ours = rest.includes("--") ? rest.slice(0, rest.indexOf("--")) : rest;
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
    return reportError(io, asUsageError(error), { command: forHelp, json, ...area?.report });
  }
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

/** node:util parseArgs throws TypeErrors with ERR_PARSE_ARGS_* codes for unknown or malformed flags. */
function asUsageError(error: unknown): unknown {
  const code = (error as { code?: unknown } | undefined)?.code;
  if (typeof code === "string" && code.startsWith("ERR_PARSE_ARGS")) {
    return new UsageError((error as Error).message);
  }
  return error;
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
