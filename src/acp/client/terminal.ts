/**
 * Terminal auth (ACP v1 since schema 1.21.0, v2 stable set): the client launches the same configured program with
 * the method's `args` appended and `env` overlaid, shows it to the person, and reads exit code 0 as success. The
 * spec's descriptor cannot name a command (auth-methods RFD); the legacy `_meta["terminal-auth"]` one can, and such
 * an invocation is marked `agentNamed` so the caller asks the person first.
 */

import { spawn } from "node:child_process";
import { peerText } from "../../core/display.ts";
import type { AgentLaunch } from "./agent-process.ts";
import type { AdvertisedAuthMethod } from "./auth-methods.ts";
import { stopGroup, trackGroup } from "./process-group.ts";

export interface TerminalInvocation {
  command: string;
  args: string[];
  env: NodeJS.ProcessEnv;
  cwd?: string;
  /** The method being run, for a title or a message. */
  method: { id: string; name: string };
  /** The agent chose the command (legacy `_meta["terminal-auth"]`): run it only once a person agreed. */
  agentNamed: boolean;
  /** The variables the method sets on top of the configured environment (shown with the command). */
  extraEnv: Readonly<Record<string, string>>;
}

export interface TerminalResult {
  /** `null` when the process was killed or never reported a status: a failure, as the spec says. */
  exitCode: number | null;
}

/** Runs an invocation where a person can interact with it; resolves when it ends (or once stopped on abort). */
export type TerminalRunner = (
  invocation: TerminalInvocation,
  signal: AbortSignal,
) => Promise<TerminalResult>;

/** Append, never replace (the registry docs once said "replace"; registry#498): the agent's base args come first. */
export function terminalInvocation(
  launch: AgentLaunch,
  method: AdvertisedAuthMethod,
): TerminalInvocation {
  const base = { cwd: launch.cwd, method: { id: method.id, name: method.name } };
  const legacy = method.terminal;
  if (legacy?.style === "terminal-auth" && legacy.command) {
    return {
      ...base,
      command: legacy.command,
      args: [...legacy.args],
      env: { ...launch.env, ...legacy.env },
      agentNamed: true,
      extraEnv: { ...legacy.env },
    };
  }
  const extra = legacy ?? method;
  return {
    ...base,
    command: launch.command,
    args: [...launch.args, ...extra.args],
    env: { ...launch.env, ...extra.env },
    agentNamed: false,
    extraEnv: { ...extra.env },
  };
}

/**
 * The invocation as one line a person can read and check, in shell syntax: the method's variables first
 * (`NAME=value`, an agent could set `NODE_OPTIONS` or `LD_PRELOAD`), then the words, quoted where needed, sanitised.
 */
export function commandLine(
  invocation: Pick<TerminalInvocation, "command" | "args"> & {
    extraEnv?: TerminalInvocation["extraEnv"];
  },
): string {
  const quote = (word: string) => {
    const clean = peerText(word, { max: 300 });
    return /^[\w@%+=:,./-]+$/.test(clean) ? clean : `'${clean.replaceAll("'", "'\\''")}'`;
  };
  const env = Object.entries(invocation.extraEnv ?? {}).map(
    ([name, value]) => `${peerText(name, { max: 100 })}=${quote(value)}`,
  );
  return [...env, ...[invocation.command, ...invocation.args].map(quote)].join(" ");
}

/**
 * A runner for command-line callers: the program shares this process's terminal (stdin, stdout, stderr inherited).
 * With a terminal on stdin it must stay in our process group (only the foreground group may read the terminal);
 * without one it gets a group of its own, so an abort ends whatever it started too. Editors pass their own runner
 * that opens a terminal pane.
 */
export const runInheritedTerminal: TerminalRunner = (invocation, signal) =>
  new Promise((resolve, reject) => {
    const ownGroup = process.platform !== "win32" && !process.stdin.isTTY;
    const child = spawn(invocation.command, invocation.args, {
      cwd: invocation.cwd,
      env: invocation.env,
      stdio: "inherit",
      detached: ownGroup,
    });
    const untrack = trackGroup(child, ownGroup);
    const exited = new Promise<number | null>((done) => child.once("exit", (code) => done(code)));
    const onAbort = () => void stopGroup(child, exited, 1000, ownGroup);
    child.once("error", (error) => {
      untrack();
      reject(error);
    });
    child.once("spawn", () => {
      if (signal.aborted) onAbort();
      else signal.addEventListener("abort", onAbort, { once: true });
    });
    void exited.then((code) => {
      signal.removeEventListener("abort", onAbort);
      // After an abort, wait for the rest of the group too (stopGroup is idempotent per call, so call it again).
      const settle = signal.aborted ? stopGroup(child, exited, 1000, ownGroup) : Promise.resolve();
      void settle.then(() => {
        untrack();
        resolve({ exitCode: code });
      });
    });
  });
