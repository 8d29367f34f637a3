/**
 * The agent as a child process speaking ACP over stdio: spawned in a process group of its own, Web streams for the
 * SDK, exit tracking, and a stop that ends stdin first (ACP stdio transport: the client closes the agent's input),
 * then signals the whole group. codex-acp's npm bin is a Node shim around a native binary that ignores end of stdin;
 * signalling only the shim left the binary running for good (issue 8 §3.1), so every stop reaches the group.
 */

import { type ChildProcess, spawn } from "node:child_process";
import { Readable, Writable } from "node:stream";
import type { AnyMessage } from "@agentclientprotocol/sdk/unstable";
import { peerText } from "../../core/display.ts";
import { AcpSpawnError } from "./errors.ts";
import { stopGroup, trackGroup } from "./process-group.ts";
import { jsonRpcMessages, StrayOutput } from "./stdout-lines.ts";

export interface AgentLaunch {
  command: string;
  args: readonly string[];
  env: NodeJS.ProcessEnv;
  cwd?: string;
}

export interface AgentExit {
  code: number | null;
  signal: NodeJS.Signals | null;
}

/** What happens to the agent's stderr: dropped, shared with ours, or handed to a function chunk by chunk. */
export type AgentStderr = "ignore" | "inherit" | ((text: string) => void);

export interface AgentProcess {
  readonly pid: number | undefined;
  /** The agent's stdin, for the SDK to write to. */
  readonly input: WritableStream<Uint8Array>;
  /**
   * The agent's JSON-RPC messages from stdout; other lines are dropped into `stray`. `onUnterminated` sees the open
   * end of stdout after each chunk (stdout-lines.ts).
   */
  readonly messages: (
    maxMessageBytes: number,
    onUnterminated?: (tail: string | undefined) => void,
  ) => ReadableStream<AnyMessage>;
  readonly exited: Promise<AgentExit>;
  /** Set once the process has exited. */
  readonly exit: AgentExit | undefined;
  /** Lines on stdout that were not JSON-RPC. */
  readonly stray: StrayOutput;
  /** The last lines the agent wrote on its stderr (sanitised), for errors about its exit; [] when inherited. */
  stderrTail(): string[];
  /** Resolves when the agent's stderr has closed (everything it wrote is in the tail). */
  readonly stderrClosed: Promise<void>;
  /**
   * Ends stdin, waits up to `graceMs` for the agent to leave, then SIGTERM to its process group, then SIGKILL.
   * Resolves when no process of the group remains. Idempotent.
   */
  stop(graceMs?: number): Promise<void>;
}

/** How long an agent gets to leave after its stdin ends, and after SIGTERM. */
export const STOP_GRACE_MS = 1000;

export async function spawnAgent(
  launch: AgentLaunch,
  stderr: AgentStderr,
  onStrayLine?: (line: string) => void,
): Promise<AgentProcess> {
  let child: ChildProcess;
  try {
    child = spawn(launch.command, [...launch.args], {
      cwd: launch.cwd,
      env: launch.env,
      // Piped unless shared with ours: the last lines say why an agent that exits early failed.
      stdio: ["pipe", "pipe", stderr === "inherit" ? "inherit" : "pipe"],
      // Its own process group (POSIX): the group can be signalled as one, grandchildren included. Windows has no
      // groups; there `detached` would open a console, so the child stays attached.
      detached: process.platform !== "win32",
    });
  } catch (error) {
    // Synchronous failures: invalid arguments (a NUL byte in the command, a bad cwd type).
    throw spawnError(launch, error);
  }
  await new Promise<void>((resolve, reject) => {
    child.once("spawn", resolve);
    child.once("error", (error) => reject(spawnError(launch, error)));
  });
  const untrack = trackGroup(child);
  // A write to a process that has gone fails with EPIPE on the stream; the SDK sees the rejected write.
  child.stdin?.on("error", () => {});
  let tail = "";
  child.stderr?.setEncoding("utf8");
  child.stderr?.on("data", (text: string) => {
    tail = (tail + text).slice(-STDERR_TAIL_CHARS);
    if (typeof stderr === "function") stderr(text);
  });
  const stderrClosed = new Promise<void>((resolve) => {
    if (!child.stderr) resolve();
    child.stderr?.once("close", () => resolve());
  });
  let exit: AgentExit | undefined;
  const exited = new Promise<AgentExit>((resolve) => {
    child.once("exit", (code, signal) => {
      exit = { code, signal };
      resolve(exit);
    });
  });
  const stray = new StrayOutput(onStrayLine);
  const stdout = child.stdout;
  const stdin = child.stdin;
  if (!stdout || !stdin) throw spawnError(launch, new Error("no stdio pipes"));
  let stopping: Promise<void> | undefined;
  return {
    pid: child.pid,
    input: Writable.toWeb(stdin) as WritableStream<Uint8Array>,
    messages: (maxMessageBytes, onUnterminated) =>
      jsonRpcMessages(Readable.toWeb(stdout) as ReadableStream<Uint8Array>, {
        maxMessageBytes,
        stray,
        ...(onUnterminated ? { onUnterminated } : {}),
      }),
    exited,
    get exit() {
      return exit;
    },
    stray,
    stderrTail: () => lastLines(tail),
    stderrClosed,
    stop(graceMs = STOP_GRACE_MS) {
      stopping ??= stopGroup(child, exited, graceMs).finally(untrack);
      return stopping;
    },
  };
}

/** How much of the agent's stderr is kept, and how many of its last lines an error quotes. */
const STDERR_TAIL_CHARS = 4096;
const STDERR_TAIL_LINES = 5;

/** Pure: the last non-empty lines of `text`, each through peerText (no escape sequence, bidi or invisible text). */
export function lastLines(text: string, count = STDERR_TAIL_LINES): string[] {
  return text
    .split(/\r?\n|\r/)
    .map((line) => peerText(line, { max: 200 }).trim())
    .filter((line) => line.length > 0)
    .slice(-count);
}

function spawnError(launch: AgentLaunch, error: unknown): AcpSpawnError {
  const code = (error as { code?: unknown }).code;
  const why =
    typeof code === "string" ? code : peerText((error as Error).message ?? error, { max: 100 });
  const hint = code === "ENOENT" ? " Check the command name and PATH." : "";
  return new AcpSpawnError(
    `Could not start the agent "${peerText(launch.command, { max: 100 })}" (${why}).${hint}`,
    { cause: error },
  );
}
