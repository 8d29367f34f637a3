/**
 * Test support: a raw JSON-RPC 2.0 peer over a child's stdio, one JSON value per line (ACP's stdio framing). It
 * writes exactly the bytes a test gives it, keeps every line the child prints, answers the child's own requests
 * when told how, and kills the child when the test ends.
 */

import { type ChildProcessWithoutNullStreams, spawn } from "node:child_process";

export type JsonRpcId = string | number;

export interface JsonRpcError {
  code: number;
  message: string;
  data?: unknown;
}

/** Any message the child printed: a response (`id` and `result`/`error`), a request, or a notification. */
export interface JsonRpcMessage {
  jsonrpc?: string;
  id?: JsonRpcId | null;
  method?: string;
  params?: unknown;
  result?: unknown;
  error?: JsonRpcError;
}

export interface PeerExit {
  code: number | null;
  signal: NodeJS.Signals | null;
}

/** What a test registers cleanup with: a `TestContext` (`t.after`) or an object wrapping node:test's `after`. */
export interface Cleanup {
  after(fn: () => unknown): void;
}

export interface SpawnPeerOptions {
  args?: string[];
  env?: NodeJS.ProcessEnv;
  cwd?: string;
}

/**
 * How long one wait (`waitFor`, `waitForStderr`, and everything built on them) lasts before it fails with what it
 * waited for. Below the tests' own timeouts (30 s and up), so a message that never comes fails the wait with its
 * name and the child's stderr, instead of the whole test timing out without either (or, in a test without a
 * timeout, hanging the run while the child stays alive). Far above what any awaited message takes on a loaded
 * machine (well under a few seconds).
 */
export const WAIT_BOUND_MS = 20_000;

/** How the test answers one of the child's requests: a `result`, or an `error` when it returns `{ error }`. */
export type RequestHandler = (
  message: JsonRpcMessage,
) => unknown | { error: JsonRpcError } | Promise<unknown>;

export class JsonlPeer {
  readonly #child: ChildProcessWithoutNullStreams;
  readonly #listeners = new Set<() => void>();
  readonly #handlers = new Map<string, RequestHandler>();
  #buffer = "";
  #stdout = "";
  #stderr = "";
  #nextId = 1;
  #closed: PeerExit | undefined;
  /** Every complete stdout line, raw, in order. */
  readonly lines: string[] = [];
  /** Every line that parsed as a JSON-RPC object, in order (index = arrival order). */
  readonly messages: JsonRpcMessage[] = [];
  /** Lines that were not a JSON object: the framing was broken if this is not empty. */
  readonly garbage: string[] = [];
  readonly exited: Promise<PeerExit>;

  constructor(command: string, options: SpawnPeerOptions, cleanup: Cleanup) {
    this.#child = spawn(command, options.args ?? [], {
      cwd: options.cwd,
      env: options.env,
      stdio: ["pipe", "pipe", "pipe"],
    });
    cleanup.after(() => this.kill());
    this.#child.stdout.setEncoding("utf8");
    this.#child.stderr.setEncoding("utf8");
    this.#child.stdout.on("data", (chunk: string) => this.#onStdout(chunk));
    this.#child.stderr.on("data", (chunk: string) => {
      this.#stderr += chunk;
      this.#notify();
    });
    // A child that exits while we still write gets EPIPE; the test sees the exit instead.
    this.#child.stdin.on("error", () => {});
    // "close" (not "exit"): both pipes are drained, so nothing printed is still on its way.
    this.exited = new Promise((resolve, reject) => {
      this.#child.once("error", reject);
      this.#child.once("close", (code, signal) => {
        this.#closed = { code, signal };
        resolve(this.#closed);
        this.#notify();
      });
    });
  }

  get pid(): number | undefined {
    return this.#child.pid;
  }

  /** Everything printed so far. */
  get stdout(): string {
    return this.#stdout;
  }

  get stderr(): string {
    return this.#stderr;
  }

  /** The next request id this peer would use. */
  nextId(): number {
    return this.#nextId++;
  }

  /**
   * Writes bytes as they are: malformed lines, partial lines, oversized lines. Resolves once they were handed to
   * the pipe (awaiting is optional).
   */
  writeRaw(text: string | Uint8Array): Promise<void> {
    return new Promise((resolve) => {
      this.#child.stdin.write(text, () => resolve());
    });
  }

  /** Writes one message as one JSON line. */
  send(message: Record<string, unknown>): void {
    void this.writeRaw(`${JSON.stringify(message)}\n`);
  }

  notify(method: string, params: unknown = {}): void {
    this.send({ jsonrpc: "2.0", method, params });
  }

  /** Sends a request and resolves with the whole response message (result or error). */
  request(
    method: string,
    params: unknown = {},
    id: JsonRpcId = this.nextId(),
  ): Promise<JsonRpcMessage> {
    const response = this.response(id);
    this.send({ jsonrpc: "2.0", id, method, params });
    return response;
  }

  /** Sends a request and resolves with its `result`; fails the test with the error when it was an error. */
  async call(method: string, params: unknown = {}): Promise<unknown> {
    const response = await this.request(method, params);
    if (response.error)
      throw new Error(
        `${method} failed: ${JSON.stringify(response.error)}\nstderr: ${this.#stderr}`,
      );
    return response.result;
  }

  /** The response to `id`, whether it already arrived or not. */
  response(id: JsonRpcId | null): Promise<JsonRpcMessage> {
    return this.waitFor(
      (m) => m.id === id && m.method === undefined && ("result" in m || "error" in m),
      `the response to request ${JSON.stringify(id)}`,
    );
  }

  /**
   * The first message (already received or still to come) that matches, looking only at messages from index
   * `from` on (see `mark`); rejects if the child exits first, or after `boundMs` (default `WAIT_BOUND_MS`).
   */
  waitFor(
    predicate: (message: JsonRpcMessage) => boolean,
    what = "a matching message",
    from = 0,
    boundMs = WAIT_BOUND_MS,
  ): Promise<JsonRpcMessage> {
    return this.#until(
      () => this.messages.slice(from).find(predicate),
      what,
      (exit) => `the child exited (${exit}) before ${what}`,
      boundMs,
    );
  }

  /** How many messages arrived so far: pass it to `waitFor`/`notification` to wait only for newer ones. */
  mark(): number {
    return this.messages.length;
  }

  /** The first notification (no id) with this method, from message index `from` on. */
  notification(method: string, from = 0): Promise<JsonRpcMessage> {
    return this.waitFor(
      (m) => m.method === method && m.id === undefined,
      `a ${method} notification`,
      from,
    );
  }

  /** Notifications received so far, optionally of one method. */
  notifications(method?: string): JsonRpcMessage[] {
    return this.messages.filter(
      (m) =>
        m.id === undefined &&
        m.method !== undefined &&
        (method === undefined || m.method === method),
    );
  }

  /** The child's requests to us (they carry a method and an id), optionally of one method. */
  requests(method?: string): JsonRpcMessage[] {
    return this.messages.filter(
      (m) =>
        m.id !== undefined &&
        m.method !== undefined &&
        (method === undefined || m.method === method),
    );
  }

  /** Resolves with the first matching stderr text; rejects if the child exits first, or after `boundMs`. */
  waitForStderr(pattern: RegExp, boundMs = WAIT_BOUND_MS): Promise<RegExpExecArray> {
    const what = `${pattern} on stderr`;
    return this.#until(
      () =>
        new RegExp(pattern.source, pattern.flags.replace("g", "")).exec(this.#stderr) ?? undefined,
      what,
      (exit) => `the child exited (${exit}) before printing ${what}`,
      boundMs,
    );
  }

  /**
   * Resolves with `found()` once it returns something (checked now and on every output); rejects when the child
   * exits first (`exited` says so) or after `boundMs`, naming `what`; both with the child's stderr.
   */
  #until<T>(
    found: () => T | undefined,
    what: string,
    exited: (exit: string) => string,
    boundMs: number,
  ): Promise<T> {
    return new Promise((resolve, reject) => {
      let timer: ReturnType<typeof setTimeout> | undefined;
      const settle = (outcome: () => void) => {
        this.#listeners.delete(check);
        clearTimeout(timer);
        outcome();
      };
      const check = () => {
        const value = found();
        if (value !== undefined) settle(() => resolve(value));
        else if (this.#closed) {
          const exit = JSON.stringify(this.#closed);
          settle(() => reject(new Error(`${exited(exit)}\nstderr: ${this.#stderr}`)));
        }
      };
      this.#listeners.add(check);
      check();
      if (!this.#listeners.has(check)) return;
      timer = setTimeout(
        () =>
          settle(() =>
            reject(
              new Error(
                `waited ${boundMs / 1000} s for ${what}; it did not come (${this.messages.length} messages so far)\nstderr: ${this.#stderr}`,
              ),
            ),
          ),
        boundMs,
      );
      // The bound must not keep the test process alive on its own.
      timer.unref();
    });
  }

  /**
   * Answers the child's future requests of `method` automatically. Requests without a handler are left for the
   * test to answer with `respond`.
   */
  handle(method: string, handler: RequestHandler): void {
    this.#handlers.set(method, handler);
  }

  respond(id: JsonRpcId, result: unknown): void {
    this.send({ jsonrpc: "2.0", id, result });
  }

  respondError(id: JsonRpcId, error: JsonRpcError): void {
    this.send({ jsonrpc: "2.0", id, error });
  }

  /** Closes the child's stdin (end of the conversation) and waits for it to exit. */
  async close(): Promise<PeerExit> {
    this.#child.stdin.end();
    return this.exited;
  }

  /** Kills the child if it still runs and waits until its pipes are closed. Safe to call twice. */
  async kill(): Promise<void> {
    if (this.#child.exitCode === null && this.#child.signalCode === null)
      this.#child.kill("SIGKILL");
    await this.exited.catch(() => {});
  }

  #onStdout(chunk: string): void {
    this.#stdout += chunk;
    this.#buffer += chunk;
    for (let end = this.#buffer.indexOf("\n"); end >= 0; end = this.#buffer.indexOf("\n")) {
      const line = this.#buffer.slice(0, end).replace(/\r$/, "");
      this.#buffer = this.#buffer.slice(end + 1);
      if (line.trim() === "") continue;
      this.lines.push(line);
      let parsed: unknown;
      try {
        parsed = JSON.parse(line);
      } catch {
        this.garbage.push(line);
        continue;
      }
      if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) {
        this.garbage.push(line);
        continue;
      }
      const message = parsed as JsonRpcMessage;
      this.messages.push(message);
      if (message.method !== undefined && message.id !== undefined && message.id !== null)
        this.#answer(message);
    }
    this.#notify();
  }

  #answer(message: JsonRpcMessage): void {
    const handler = this.#handlers.get(message.method ?? "");
    if (!handler) return;
    const id = message.id as JsonRpcId;
    Promise.resolve()
      .then(() => handler(message))
      .then(
        (answer) => {
          const error = (answer as { error?: JsonRpcError } | undefined)?.error;
          if (error) this.respondError(id, error);
          else this.respond(id, answer ?? {});
        },
        (error: unknown) =>
          this.respondError(id, {
            code: -32603,
            message: error instanceof Error ? error.message : String(error),
          }),
      );
  }

  #notify(): void {
    for (const listener of [...this.#listeners]) listener();
  }
}

/** Spawns `command` with piped stdio; the child is killed when `cleanup` runs (end of the test or file). */
export function spawnPeer(command: string, options: SpawnPeerOptions, cleanup: Cleanup): JsonlPeer {
  return new JsonlPeer(command, options, cleanup);
}
