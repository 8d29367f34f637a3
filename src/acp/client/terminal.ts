/**
 * Terminal auth (ACP v1 since schema 1.21.0, v2 stable set): the client launches the same configured program with
 * the method's `args` appended and `env` overlaid, shows it to the person, and reads exit code 0 as success. The
 * descriptor cannot name a command (auth-methods RFD), so the invocation is built here from the launch config only.
 */

import { spawn } from "node:child_process";
import type { AgentLaunch } from "./agent-process.ts";
import type { AdvertisedAuthMethod } from "./auth-methods.ts";

export interface TerminalInvocation {
  command: string;
  args: string[];
  env: NodeJS.ProcessEnv;
  cwd?: string;
  /** The method being run, for a title or a message. */
  method: { id: string; name: string };
}

export interface TerminalResult {
  /** `null` when the process was killed or never reported a status: a failure, as the spec says. */
  exitCode: number | null;
}

/** Runs an invocation where a person can interact with it; resolves when it ends. */
export type TerminalRunner = (
  invocation: TerminalInvocation,
  signal: AbortSignal,
) => Promise<TerminalResult>;

/** Append, never replace (the registry docs once said "replace"; registry#498): the agent's base args come first. */
export function terminalInvocation(
  launch: AgentLaunch,
  method: AdvertisedAuthMethod,
): TerminalInvocation {
  return {
    command: launch.command,
    args: [...launch.args, ...method.args],
    env: { ...launch.env, ...method.env },
    cwd: launch.cwd,
    method: { id: method.id, name: method.name },
  };
}

/**
 * A runner for command-line callers: the program shares this process's terminal (stdin, stdout, stderr inherited).
 * Editors pass their own runner that opens a terminal pane.
 */
export const runInheritedTerminal: TerminalRunner = (invocation, signal) =>
  new Promise((resolve, reject) => {
    const child = spawn(invocation.command, invocation.args, {
      cwd: invocation.cwd,
      env: invocation.env,
      stdio: "inherit",
      signal,
    });
    child.once("error", (error) => {
      // An abort surfaces as an AbortError here, and then as a null exit status.
      if ((error as { name?: string }).name !== "AbortError") reject(error);
    });
    child.once("exit", (code) => resolve({ exitCode: code }));
  });
