/**
 * Test support: worker OS processes that talk in JSON lines (orders on stdin, reports on stdout), with bounded waits
 * so a stuck worker fails the test instead of hanging it, and a SIGKILL for every worker still alive when the test
 * ends.
 */

import { type ChildProcess, spawn } from "node:child_process";
import { createInterface } from "node:readline";
import type { TestContext } from "node:test";

const NODE = process.execPath;

export interface FleetWorker {
  pid: number;
  /** Every JSON line printed so far, in order. */
  lines: Record<string, unknown>[];
  /** The first line (seen or to come) that has `field`; rejects after `timeoutMs` or when the worker ends first. */
  waitFor<T = unknown>(field: string, timeoutMs?: number): Promise<T>;
  /** Writes one line to the worker's stdin. */
  send(line: string): void;
  /** Resolves with the exit code and signal when the process has ended. */
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  kill(signal?: NodeJS.Signals): void;
  /** What the worker wrote on stderr (last 8 KB), for failure messages. */
  stderr(): string;
}

/**
 * Starts `script` with `env` as its whole environment (secrets go there or on stdin, never in argv). The worker is
 * killed with SIGKILL after the test if it is still running.
 */
export function startWorker(
  t: Pick<TestContext, "after">,
  script: string,
  env: NodeJS.ProcessEnv,
): FleetWorker {
  const child: ChildProcess = spawn(NODE, ["--no-warnings", script], {
    env,
    stdio: ["pipe", "pipe", "pipe"],
  });
  t.after(() => {
    if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
  });
  const lines: Record<string, unknown>[] = [];
  const waiters = new Set<() => void>();
  let err = "";
  child.stderr?.on("data", (chunk: Buffer) => {
    err = (err + chunk.toString()).slice(-8192);
  });
  // A killed worker's stdin is a broken pipe; writes to it must not crash the test process.
  child.stdin?.on("error", () => {});
  createInterface({ input: child.stdout as NodeJS.ReadableStream }).on("line", (text) => {
    try {
      lines.push(JSON.parse(text) as Record<string, unknown>);
    } catch {
      lines.push({ unparsed: text });
    }
    for (const wake of waiters) wake();
  });
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once("close", (code, signal) => {
      resolve({ code, signal });
      for (const wake of waiters) wake();
    }),
  );
  let ended = false;
  exited.then(() => {
    ended = true;
  });

  const worker: FleetWorker = {
    pid: child.pid ?? -1,
    lines,
    exited,
    stderr: () => err,
    send(line) {
      child.stdin?.write(`${line}\n`);
    },
    kill(signal = "SIGKILL") {
      child.kill(signal);
    },
    waitFor<T>(field: string, timeoutMs = 60_000): Promise<T> {
      return new Promise<T>((resolve, reject) => {
        const check = () => {
          const found = lines.find((line) => field in line);
          if (found) return finish(() => resolve(found[field] as T));
          if (ended || child.exitCode !== null || child.signalCode !== null) {
            return finish(() =>
              reject(
                new Error(
                  `worker ${worker.pid} ended before printing "${field}": ${JSON.stringify(lines)} ${err}`,
                ),
              ),
            );
          }
        };
        const timer = setTimeout(
          () =>
            finish(() =>
              reject(
                new Error(
                  `worker ${worker.pid} printed no "${field}" within ${timeoutMs} ms: ${JSON.stringify(lines)} ${err}`,
                ),
              ),
            ),
          timeoutMs,
        );
        // The worker's own handles keep the test alive while it matters; a pending wait alone must not.
        timer.unref();
        const finish = (settle: () => void) => {
          clearTimeout(timer);
          waiters.delete(check);
          settle();
        };
        waiters.add(check);
        check();
      });
    },
  };
  return worker;
}
