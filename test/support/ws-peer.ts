/**
 * Test support: a raw JSON-RPC 2.0 peer over a WebSocket, one message per text frame. It sends exactly the frames a
 * test gives it (bytes, binary frames, oversized ones), keeps every message it receives in order, and waits for the
 * ones a test names with a bounded wait.
 */

import { WebSocket } from "ws";

export type JsonRpcId = string | number;

export interface JsonRpcMessage {
  jsonrpc?: string;
  id?: JsonRpcId | null;
  method?: string;
  params?: unknown;
  result?: unknown;
  error?: { code: number; message: string; data?: unknown };
}

export interface ConnectOptions {
  headers?: Record<string, string>;
  origin?: string;
}

export type UpgradeOutcome =
  | { ok: true; peer: WsPeer }
  | { ok: false; status: number; headers: Record<string, string | string[] | undefined> };

const DEFAULT_WAIT_MS = 10_000;

export class WsPeer {
  readonly messages: JsonRpcMessage[] = [];
  readonly #ws: WebSocket;
  readonly #waiters = new Set<() => void>();
  #nextId = 1;
  #closed: { code: number; reason: string } | undefined;

  private constructor(ws: WebSocket) {
    this.#ws = ws;
    ws.on("message", (data, isBinary) => {
      const text = Buffer.isBuffer(data) ? data.toString("utf8") : String(data);
      this.messages.push(isBinary ? { method: "<binary>" } : (JSON.parse(text) as JsonRpcMessage));
      this.#wake();
    });
    ws.on("close", (code, reason) => {
      this.#closed = { code, reason: reason.toString() };
      this.#wake();
    });
    ws.on("error", () => {});
  }

  /** Connects, or says how the upgrade was refused. */
  static connectOutcome(url: string, options: ConnectOptions = {}): Promise<UpgradeOutcome> {
    return new Promise((resolve, reject) => {
      const ws = new WebSocket(url, { headers: options.headers, origin: options.origin });
      ws.once("open", () => resolve({ ok: true, peer: new WsPeer(ws) }));
      ws.once("unexpected-response", (_req, res) => {
        resolve({ ok: false, status: res.statusCode ?? 0, headers: res.headers });
        res.resume();
        ws.terminate();
      });
      ws.once("error", reject);
    });
  }

  static async connect(url: string, options: ConnectOptions = {}): Promise<WsPeer> {
    const outcome = await WsPeer.connectOutcome(url, options);
    if (!outcome.ok) throw new Error(`upgrade refused with ${outcome.status}`);
    return outcome.peer;
  }

  get closed(): { code: number; reason: string } | undefined {
    return this.#closed;
  }

  /** Sends one frame exactly as given. */
  sendRaw(data: string | Buffer, options: { binary?: boolean } = {}): void {
    this.#ws.send(data, { binary: options.binary ?? false });
  }

  send(message: unknown): void {
    this.sendRaw(JSON.stringify(message));
  }

  /** Sends a request with the next id and returns its response. */
  async request(method: string, params?: unknown, timeoutMs?: number): Promise<JsonRpcMessage> {
    const id = this.#nextId++;
    this.send({ jsonrpc: "2.0", id, method, ...(params === undefined ? {} : { params }) });
    return this.response(id, timeoutMs);
  }

  notify(method: string, params?: unknown): void {
    this.send({ jsonrpc: "2.0", method, ...(params === undefined ? {} : { params }) });
  }

  response(id: JsonRpcId | null, timeoutMs?: number): Promise<JsonRpcMessage> {
    return this.waitFor((m) => m.id === id && ("result" in m || "error" in m), timeoutMs);
  }

  /** The first message (already received or to come) that matches, within a bounded wait. */
  waitFor(
    match: (m: JsonRpcMessage) => boolean,
    timeoutMs = DEFAULT_WAIT_MS,
    from = 0,
  ): Promise<JsonRpcMessage> {
    return this.#until(() => this.messages.slice(from).find(match), timeoutMs, "message");
  }

  notifications(method: string): JsonRpcMessage[] {
    return this.messages.filter((m) => m.method === method && m.id === undefined);
  }

  waitForClose(timeoutMs = DEFAULT_WAIT_MS): Promise<{ code: number; reason: string }> {
    return this.#until(() => this.#closed, timeoutMs, "close");
  }

  close(): Promise<void> {
    if (this.#closed) return Promise.resolve();
    this.#ws.close();
    return this.waitForClose().then(() => undefined);
  }

  #until<T>(probe: () => T | undefined, timeoutMs: number, what: string): Promise<T> {
    return new Promise((resolve, reject) => {
      const check = () => {
        const found = probe();
        if (found !== undefined) {
          cleanup();
          resolve(found);
        } else if (this.#closed && what !== "close") {
          cleanup();
          reject(new Error(`connection closed (${this.#closed.code}) before the awaited ${what}`));
        }
      };
      const timer = setTimeout(() => {
        cleanup();
        reject(new Error(`no ${what} within ${timeoutMs} ms`));
      }, timeoutMs);
      const cleanup = () => {
        clearTimeout(timer);
        this.#waiters.delete(check);
      };
      this.#waiters.add(check);
      check();
    });
  }

  #wake(): void {
    for (const waiter of [...this.#waiters]) waiter();
  }
}
