/** What every command shares: output streams, usage errors, error reporting with exit codes (0, 1, 2, 130). */

import { jsonLine, peerText } from "../core/display.ts";
import { AgentAuthError } from "../core/errors.ts";
import { describeSystemError } from "./system-errors.ts";

export interface CliIo {
  stdout: (text: string) => void;
  stderr: (text: string) => void;
  env: NodeJS.ProcessEnv;
  /** True when stderr is a terminal: spinners and colours only then. */
  interactive: boolean;
}

export const processIo = (): CliIo => ({
  stdout: (text) => process.stdout.write(text),
  stderr: (text) => process.stderr.write(text),
  env: process.env,
  interactive: Boolean(process.stderr.isTTY),
});

// The CLI prints JSON only through these (test/cli/json-output.test.ts); the rule lives with the peer-text rules.
export { jsonLine, jsonText } from "../core/display.ts";

/**
 * A mistake in how the command was called: exit code 2. `code` defaults to "usage"; a flag whose value a library
 * refused keeps the library's stable code (`provider_host_invalid`), so `--json` callers can still tell them apart.
 */
export class UsageError extends AgentAuthError {
  /** Printed after the message instead of the one-line hint (e.g. the usage of the area that lacks a subcommand). */
  readonly usage: string | undefined;

  constructor(message: string, usage?: string, code = "usage") {
    super(code, message);
    this.usage = usage;
  }
}

/**
 * 130 = 128 + SIGINT, what shells report for a command ended with Ctrl-C. `loginRequired` (3) and `temporary` (4)
 * are used by `agentauth token`, whose callers are scripts that must tell "sign in again" from "try again later".
 */
export const EXIT = {
  ok: 0,
  failure: 1,
  usage: 2,
  loginRequired: 3,
  temporary: 4,
  interrupted: 130,
} as const;

export interface ReportOptions {
  /** The command words the error belongs to (`"vault"`, `"rap tool serve"`), for the `--help` hint. */
  command?: string;
  /** The command was run with --json: the error goes to stdout as `{"error":{"code","message"}}`. */
  json?: boolean;
  /**
   * Where a `--json` error goes (default stdout). `agentauth token` sends it to stderr: its stdout is the token
   * alone, so `TOKEN=$(agentauth token ID --json)` can never capture an error as a token.
   */
  jsonTo?: "stdout" | "stderr";
  /** Picks the exit code of a failure that is not a usage error (default 1). */
  exitFor?: (error: unknown) => number | undefined;
}

/**
 * Prints an error without secrets (typed errors carry none; unknown ones print only their class, or what a Node
 * system error means and what to do about it) and picks the exit code. Messages may quote what a peer sent (an
 * `error_description`), so they pass through `peerText` like everything else a peer says.
 */
export function reportError(io: CliIo, error: unknown, options: ReportOptions = {}): number {
  const described = describe(error);
  const { code, message, usage } = described;
  const exit =
    described.exit === EXIT.failure ? (options.exitFor?.(error) ?? described.exit) : described.exit;
  const text = peerText(message, { multiline: true, max: 2000 });
  if (options.json) {
    const line = jsonLine({ error: { code, message: text } });
    if (options.jsonTo === "stderr") io.stderr(line);
    else io.stdout(line);
    return exit;
  }
  if (exit === EXIT.usage) {
    const help = `agentauth ${options.command ? `${options.command} ` : ""}--help`;
    io.stderr(
      usage ? `agentauth: ${text}\n\n${usage}\n` : `agentauth: ${text}\nRun '${help}' for usage.\n`,
    );
    return exit;
  }
  io.stderr(`agentauth: ${text} [${code}]\n`);
  return exit;
}

function describe(error: unknown): { code: string; message: string; exit: number; usage?: string } {
  if (error instanceof UsageError) {
    return { code: error.code, message: error.message, exit: EXIT.usage, usage: error.usage };
  }
  if (error instanceof AgentAuthError) {
    return { code: error.code, message: error.message, exit: EXIT.failure };
  }
  const known = describeSystemError(error);
  if (known) return { ...known, exit: EXIT.failure };
  const name = error instanceof Error ? error.name : "Error";
  return {
    code: "unexpected",
    message: `unexpected ${name}; run with AGENTAUTH_LOG_LEVEL=debug for details.`,
    exit: EXIT.failure,
  };
}
