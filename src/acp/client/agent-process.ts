/**
 * The agent as a child process speaking ACP over stdio: spawn, Web streams for the SDK's `ndJsonStream`, exit
 * tracking, and a stop that ends stdin first (ACP stdio transport: the client closes the agent's input) before
 * signals.
 */

import { type ChildProcess, spawn } from "node:child_process";
import { Readable, Writable } from "node:stream";
import { AcpSpawnError, clip } from "./errors.ts";

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

/** What happens to the agent's stderr: dropped, shared with ours, or handed to a function line by line. */
export type AgentStderr = "ignore" | "inherit" | ((text: string) => void);

export interface AgentProcess {
  readonly pid: number | undefined;
  /** The agent's stdin, for the SDK to write to. */
  readonly input: WritableStream<Uint8Array>;
  /** The agent's stdout, for the SDK to read from. */
  readonly output: ReadableStream<Uint8Array>;
  readonly exited: Promise<AgentExit>;
  /** Set once the process has exited. */
  readonly exit: AgentExit | undefined;
  /** Lines on stdout that could not be JSON-RPC (the SDK skips them): reported when the agent never answers. */
  readonly strayLines: number;
  /** Ends stdin, then SIGTERM after `graceMs`, then SIGKILL. Resolves when the process is gone. */
  stop(graceMs?: number): Promise<AgentExit>;
}

export async function spawnAgent(launch: AgentLaunch, stderr: AgentStderr): Promise<AgentProcess> {
  let child: ChildProcess;
  try {
    child = spawn(launch.command, [...launch.args], {
      cwd: launch.cwd,
      env: launch.env,
      stdio: ["pipe", "pipe", typeof stderr === "function" ? "pipe" : stderr],
    });
  } catch (error) {
    // Synchronous failures: invalid arguments (a NUL byte in the command, a bad cwd type).
    throw spawnError(launch, error);
  }
  await new Promise<void>((resolve, reject) => {
    child.once("spawn", resolve);
    child.once("error", (error) => reject(spawnError(launch, error)));
  });
  // A write to a process that has gone fails with EPIPE on the stream; the SDK sees the rejected write.
  child.stdin?.on("error", () => {});
  if (typeof stderr === "function") {
    child.stderr?.setEncoding("utf8");
    child.stderr?.on("data", stderr);
  }
  let exit: AgentExit | undefined;
  const exited = new Promise<AgentExit>((resolve) => {
    child.once("exit", (code, signal) => {
      exit = { code, signal };
      resolve(exit);
    });
  });
  const counter = strayLineCounter();
  const stdout = child.stdout;
  const stdin = child.stdin;
  if (!stdout || !stdin) throw spawnError(launch, new Error("no stdio pipes"));
  return {
    pid: child.pid,
    input: Writable.toWeb(stdin) as WritableStream<Uint8Array>,
    output: (Readable.toWeb(stdout) as ReadableStream<Uint8Array>).pipeThrough(counter.stream),
    exited,
    get exit() {
      return exit;
    },
    get strayLines() {
      return counter.count;
    },
    stop: (graceMs = 2000) => stopChild(child, exited, () => exit, graceMs),
  };
}

async function stopChild(
  child: ChildProcess,
  exited: Promise<AgentExit>,
  current: () => AgentExit | undefined,
  graceMs: number,
): Promise<AgentExit> {
  const done = current();
  if (done) return done;
  child.stdin?.end();
  for (const signal of ["SIGTERM", "SIGKILL"] as const) {
    const exit = await Promise.race([exited, delay(graceMs)]);
    if (exit) return exit;
    child.kill(signal);
  }
  return exited;
}

/** Unref'd: the child's own handles keep the process alive while it runs. */
function delay(ms: number): Promise<undefined> {
  return new Promise((resolve) => setTimeout(() => resolve(undefined), ms).unref());
}

function spawnError(launch: AgentLaunch, error: unknown): AcpSpawnError {
  const code = (error as { code?: unknown }).code;
  const why = typeof code === "string" ? code : clip((error as Error).message ?? error, 100);
  const hint = code === "ENOENT" ? " Check the command name and PATH." : "";
  return new AcpSpawnError(
    `Could not start the agent "${clip(launch.command, 100)}" (${why}).${hint}`,
    {
      cause: error,
    },
  );
}

/**
 * Counts stdout lines whose first non-blank byte cannot open a JSON-RPC message (`{`; ACP has no batches). Agents that log to stdout are a known interop problem; the SDK skips such lines, and we only count
 * them to explain a silent agent. Content is never kept: it may be anything, secrets included.
 */
function strayLineCounter(): { stream: TransformStream<Uint8Array, Uint8Array>; count: number } {
  const state = {
    stream: undefined as unknown as TransformStream<Uint8Array, Uint8Array>,
    count: 0,
  };
  let atLineStart = true;
  state.stream = new TransformStream({
    transform(chunk, controller) {
      for (let i = 0; i < chunk.length; i++) {
        const byte = chunk[i];
        if (atLineStart) {
          if (byte === SPACE || byte === TAB || byte === CR) continue;
          if (byte !== NEWLINE) {
            if (byte !== OPEN_BRACE) state.count++;
            atLineStart = false;
          }
        }
        if (!atLineStart) {
          const end = chunk.indexOf(NEWLINE, i);
          if (end === -1) break;
          i = end;
          atLineStart = true;
        }
      }
      controller.enqueue(chunk);
    },
  });
  return state;
}

const NEWLINE = 0x0a;
const CR = 0x0d;
const SPACE = 0x20;
const TAB = 0x09;
const OPEN_BRACE = 0x7b;
