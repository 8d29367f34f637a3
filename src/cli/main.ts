#!/usr/bin/env node
/** The `agentauth` command: parses the command line and hands each command to the library. */

import { createLogger } from "../core/log.ts";
import { ACP_USAGE, acpCommand } from "./commands/acp.ts";
import { AHP_USAGE, ahpCommand } from "./commands/ahp.ts";
import { DEMO_USAGE, demoCommand } from "./commands/demo.ts";
import { IDP_USAGE, idpCommand } from "./commands/idp.ts";
import { LOGIN_USAGE, loginCommand } from "./commands/login.ts";
import { RAP_USAGE, rapCommand } from "./commands/rap.ts";
import { VAULT_USAGE, vaultCommand } from "./commands/vault.ts";
import { type CliIo, EXIT, processIo, reportError, UsageError } from "./io.ts";

export const USAGE = `agentauth: authentication for agent protocols (ACP, AHP, RAP)

Usage:
${[DEMO_USAGE, LOGIN_USAGE, VAULT_USAGE, ACP_USAGE, AHP_USAGE, RAP_USAGE, IDP_USAGE].join("\n\n")}

All local state lives under $AGENTAUTH_HOME (default: the platform's data directory).
The vault key comes from $AGENTAUTH_VAULT_KEY (32 bytes, base64) or a key file created there (mode 0600).
Exit codes: 0 success, 1 failure, 2 usage error.
`;

const COMMANDS: Record<string, (argv: string[], io: CliIo) => Promise<number>> = {
  demo: demoCommand,
  login: loginCommand,
  vault: vaultCommand,
  idp: idpCommand,
  acp: acpCommand,
  rap: rapCommand,
  ahp: ahpCommand,
};

export async function main(argv: string[], io: CliIo = processIo()): Promise<number> {
  const [command, ...rest] = argv;
  if (!command || command === "--help" || command === "-h" || command === "help") {
    io.stdout(USAGE);
    return command ? EXIT.ok : EXIT.usage;
  }
  const run = COMMANDS[command];
  try {
    if (!run) throw new UsageError(`unknown command '${command}'`);
    // Only flags before `--` are ours: `acp status -- some-agent --help` passes --help to the agent.
    const ours = rest.includes("--") ? rest.slice(0, rest.indexOf("--")) : rest;
    if (ours.includes("--help") || ours.includes("-h")) {
      io.stdout(USAGE);
      return EXIT.ok;
    }
    return await run(rest, io);
  } catch (error) {
    // node:util parseArgs throws TypeErrors with ERR_PARSE_ARGS_* codes for unknown or malformed flags.
    const code = (error as { code?: string }).code;
    if (typeof code === "string" && code.startsWith("ERR_PARSE_ARGS")) {
      return reportError(io, new UsageError((error as Error).message));
    }
    // Details only on request (AGENTAUTH_LOG_LEVEL=debug), as the hint printed by reportError promises.
    createLogger().debug("cli.error", { error });
    return reportError(io, error);
  }
}

if (import.meta.main) {
  process.exitCode = await main(process.argv.slice(2));
}
