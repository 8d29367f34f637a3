/** What every command shares: output streams, usage errors, error reporting with exit codes (0, 1, 2). */

import { AgentAuthError } from "../core/errors.ts";

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

/** A mistake in how the command was called: exit code 2. */
export class UsageError extends AgentAuthError {
  constructor(message: string) {
    super("usage", message);
  }
}

export const EXIT = { ok: 0, failure: 1, usage: 2 } as const;

/** Prints an error without secrets (typed errors carry none; unknown ones print only their class) and picks the exit code. */
export function reportError(io: CliIo, error: unknown): number {
  if (error instanceof UsageError) {
    io.stderr(`agentauth: ${error.message}\nRun 'agentauth --help' for usage.\n`);
    return EXIT.usage;
  }
  if (error instanceof AgentAuthError) {
    io.stderr(`agentauth: ${error.message} [${error.code}]\n`);
    return EXIT.failure;
  }
  const name = error instanceof Error ? error.name : "Error";
  io.stderr(`agentauth: unexpected ${name}; run with AGENTAUTH_LOG_LEVEL=debug for details.\n`);
  return EXIT.failure;
}
