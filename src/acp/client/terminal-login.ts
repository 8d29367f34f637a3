/**
 * One terminal login, start to end: confirm a command the agent named itself (legacy `_meta["terminal-auth"]`,
 * issue 8 §3.7), stop the agent, run the login with a time limit (§3.4), restart the agent, and read the exit status
 * (0 is success, as the spec says; anything else, a kill, or no status is a failure).
 */

import { basename } from "node:path";
import { peerText } from "../../core/display.ts";
import type { AdvertisedAuthMethod } from "./auth-methods.ts";
import {
  AcpCancelledError,
  AcpCommandNotConfirmedError,
  AcpTerminalLoginError,
  AcpTimeoutError,
} from "./errors.ts";
import type { ConnectAgentOptions } from "./options.ts";
import {
  commandLine,
  type TerminalInvocation,
  type TerminalResult,
  type TerminalRunner,
} from "./terminal.ts";

/** setTimeout's ceiling (2^31-1 ms): a larger timeout would fire at once. */
const MAX_TIMER_MS = 2_147_483_647;

export interface TerminalLoginContext {
  invocation: TerminalInvocation;
  /** The agent's name for messages (agentDisplayName). */
  name: string;
  /** The configured agent command, for what to run when a command the agent named is not on PATH. */
  agentCommand: string;
  runner: TerminalRunner;
  confirm: ConnectAgentOptions["confirmCommand"];
  show?: ConnectAgentOptions["showCommand"];
  timeoutMs: number;
  signal?: AbortSignal;
  /** Stops the agent process before the login runs (the login is the same program). */
  stopAgent: () => Promise<void>;
  /** Starts and initializes the agent again afterwards, whatever the outcome (unless cancelled). */
  restartAgent: () => Promise<void>;
}

export async function runTerminalLogin(
  method: AdvertisedAuthMethod,
  context: TerminalLoginContext,
): Promise<void> {
  const { invocation, signal } = context;
  // Every terminal login is shown. One that runs a command the agent named, or sets variables the agent chose
  // (LD_PRELOAD, NODE_OPTIONS, PATH, BASH_ENV… change what the configured program does), runs only once confirmed.
  if (needsConsent(invocation)) await confirmAgentCommand(invocation, context);
  else context.show?.(invocation, commandLine(invocation));
  await context.stopAgent();
  const timeout = AbortSignal.timeout(Math.min(context.timeoutMs, MAX_TIMER_MS));
  const ended = signal ? AbortSignal.any([signal, timeout]) : timeout;
  let result: TerminalResult | undefined;
  let failure: unknown;
  try {
    result = await context.runner(invocation, ended);
  } catch (error) {
    failure = error;
  }
  if (signal?.aborted) throw new AcpCancelledError("The terminal login was cancelled.");
  await context.restartAgent();
  const id = peerText(method.id, { max: 60 });
  if (timeout.aborted) {
    throw new AcpTimeoutError(
      `The terminal login "${id}" did not finish within ${context.timeoutMs / 1000} s and was stopped; ` +
        "run it again with more time, or in a terminal where you can answer its prompts.",
    );
  }
  if (!result) {
    const why = peerText((failure as Error | undefined)?.message ?? failure, { max: 120 });
    throw new AcpTerminalLoginError(
      `Could not run the terminal login "${id}": ${why}.${notFoundHint(failure, context)}`,
      { exitCode: null, cause: failure },
    );
  }
  if (result.exitCode !== 0) {
    const how =
      result.exitCode === null
        ? "ended without an exit status"
        : `exited with code ${result.exitCode}`;
    throw new AcpTerminalLoginError(`The terminal login "${id}" ${how}; nothing was signed in.`, {
      exitCode: result.exitCode,
    });
  }
}

export function needsConsent(invocation: TerminalInvocation): boolean {
  return invocation.agentNamed || Object.keys(invocation.extraEnv).length > 0;
}

/** Never silently: the caller's `confirm` must answer true, else nothing runs. */
async function confirmAgentCommand(
  invocation: TerminalInvocation,
  context: TerminalLoginContext,
): Promise<void> {
  const line = commandLine(invocation);
  if (context.confirm && (await context.confirm(invocation, line))) return;
  const what = invocation.agentNamed ? "" : " (with environment variables the agent chose)";
  throw new AcpCommandNotConfirmedError(
    `${context.name} asks to run ${line}${what} to sign in; it was not run because nobody confirmed it. Run it ` +
      "yourself if you trust it, or allow it when asked.",
  );
}

/**
 * opencode names its login as `opencode auth login`: a bare program name, found only when it is on PATH, which a
 * local install (node_modules/.bin, npx) is not. When the agent was started by a path ending in that name, the same
 * program with the agent's arguments is what to run.
 */
function notFoundHint(failure: unknown, context: TerminalLoginContext): string {
  const { invocation, agentCommand } = context;
  if ((failure as { code?: unknown } | undefined)?.code !== "ENOENT" || !invocation.agentNamed)
    return "";
  const named = peerText(invocation.command, { max: 100 });
  if (invocation.command.includes("/"))
    return ` ${context.name} named "${named}", which does not exist.`;
  const same = basename(agentCommand) === invocation.command && agentCommand !== invocation.command;
  const instead = same
    ? `run ${commandLine({ command: agentCommand, args: invocation.args, extraEnv: invocation.extraEnv })} in a terminal (the program this agent was started with), or put its folder on PATH.`
    : `put the folder holding "${named}" on PATH, or run its login yourself.`;
  return ` "${named}" is not on PATH: ${context.name} names the program without its folder. Instead, ${instead}`;
}
