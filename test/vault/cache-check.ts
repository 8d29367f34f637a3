/**
 * For the record cache tests: spawning test/vault/fixtures/cache-worker.ts with a pipe to talk to it, and the check
 * of a reader's log against a writer's: no read that started after a change returned may show an older state.
 */

import { type ChildProcess, spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import type { TestContext } from "node:test";

const WORKER = new URL("./fixtures/cache-worker.ts", import.meta.url).pathname;

export interface CacheWorker {
  child: ChildProcess;
  send(command: string): void;
  waitFor(predicate: (line: Record<string, unknown>) => boolean): Promise<Record<string, unknown>>;
  lines: Record<string, unknown>[];
  stderr(): string;
}

export function cacheWorker(t: TestContext, args: string[], env: NodeJS.ProcessEnv): CacheWorker {
  const child = spawn(process.execPath, ["--no-warnings", WORKER, ...args], {
    env: { PATH: process.env.PATH, ...env },
    stdio: ["pipe", "pipe", "pipe"],
  });
  t.after(() => {
    if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
  });
  const lines: Record<string, unknown>[] = [];
  const waiters: {
    predicate: (l: Record<string, unknown>) => boolean;
    resolve: (l: Record<string, unknown>) => void;
  }[] = [];
  let buffered = "";
  let stderr = "";
  child.stderr?.setEncoding("utf8").on("data", (chunk: string) => {
    stderr += chunk;
  });
  child.stdout?.setEncoding("utf8").on("data", (chunk: string) => {
    buffered += chunk;
    for (let nl = buffered.indexOf("\n"); nl >= 0; nl = buffered.indexOf("\n")) {
      const line = JSON.parse(buffered.slice(0, nl)) as Record<string, unknown>;
      buffered = buffered.slice(nl + 1);
      lines.push(line);
      for (const w of waiters.filter((w) => w.predicate(line))) {
        waiters.splice(waiters.indexOf(w), 1);
        w.resolve(line);
      }
    }
  });
  const exited = new Promise<void>((resolve) => child.on("close", () => resolve()));
  return {
    child,
    lines,
    stderr: () => stderr,
    send: (command) => child.stdin?.write(`${command}\n`),
    waitFor(predicate) {
      const seen = lines.find(predicate);
      if (seen) return Promise.resolve(seen);
      return new Promise((resolve, reject) => {
        waiters.push({ predicate, resolve });
        void exited.then(() =>
          reject(
            new Error(`worker ${args[0]} exited without the expected line; stderr: ${stderr}`),
          ),
        );
      });
    },
  };
}

export interface WriterOp {
  op: number;
  kind: "put" | "rotate" | "delete";
  /** hrtime (ns) when the change returned to the writer. */
  at: number;
}

export interface StaleRead {
  start: number;
  end: number;
  saw: number;
  /** The last change that had returned when the read started. */
  after: WriterOp;
}

/**
 * Reads whose result is older than the last change that returned before they started. State after change i: `at-i`
 * (tag i), absent after a delete. A read may also show any later state it overlapped: a state `at-j` with j after
 * that change, or absent when a delete after it could have been in flight before the read ended (the writer sent it
 * once the change before it had returned). A read that missed the cache spans a round trip, and on a loaded machine
 * several changes can commit between its start and the database's snapshot: only its start bounds what it may show.
 */
export function staleReads(
  ops: WriterOp[],
  readsFile: string,
): { stale: StaleRead[]; reads: number; seen: Set<number> } {
  const bytes = readFileSync(readsFile);
  const count = bytes.length / 20;
  const floats = (from: number) =>
    new Float64Array(
      bytes.buffer.slice(bytes.byteOffset + from, bytes.byteOffset + from + count * 8),
    );
  const starts = floats(0);
  const ends = floats(count * 8);
  const tags = new Int32Array(
    bytes.buffer.slice(bytes.byteOffset + count * 16, bytes.byteOffset + count * 20),
  );
  const sorted = [...ops].sort((a, b) => a.op - b.op);
  const stale: StaleRead[] = [];
  const seen = new Set<number>();
  let k = -1; // index into sorted of the last change returned before the read started
  for (let r = 0; r < count; r++) {
    const start = starts[r] as number;
    const end = ends[r] as number;
    const saw = tags[r] as number;
    if (saw === -2) continue; // the read failed: it showed nothing
    seen.add(saw);
    // Reads are in start order: advance to the last change that returned before this one started.
    while (k + 1 < sorted.length && (sorted[k + 1] as WriterOp).at < start) k++;
    if (k < 0) continue;
    const last = sorted[k] as WriterOp;
    const fine = saw >= 0 ? saw >= last.op : deleteOverlapping(sorted, k, end);
    if (!fine) stale.push({ start, end, saw, after: last });
  }
  return { stale, reads: count, seen };
}

/**
 * Whether the read could show absence: the change at `k` is a delete, or a later delete was sent before the read
 * ended (changes go one at a time, so change j is sent only after change j-1 returned).
 */
function deleteOverlapping(sorted: WriterOp[], k: number, end: number): boolean {
  for (let j = k; j < sorted.length; j++) {
    const op = sorted[j] as WriterOp;
    if (j > k && (sorted[j - 1] as WriterOp).at >= end) return false;
    if (op.kind === "delete") return true;
  }
  return false;
}
