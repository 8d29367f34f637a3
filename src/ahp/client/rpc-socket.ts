/**
 * JSON-RPC 2.0 over one WebSocket, as AHP's transport section asks: each *text* frame carries exactly one message.
 * A thin shell: requests with ids and time limits, notifications to a handler, host requests refused politely.
 */

import WebSocket from "ws";
import {
  AhpClosedError,
  AhpConnectError,
  AhpProtocolError,
  AhpRequestError,
  AhpTimeoutError,
  clip,
} from "./errors.ts";

export interface RpcError {
  code: number;
  message: string;
  data?: unknown;
}

/** A JSON-RPC error answer, kept whole so callers can read `code` and `data` (-32005, -32007). */
export class RpcErrorAnswer extends Error {
  readonly rpc: RpcError;
  constructor(rpc: RpcError) {
    super(`JSON-RPC error ${rpc.code}: ${clip(rpc.message)}`);
    this.rpc = rpc;
  }
}

export type NotificationHandler = (method: string, params: unknown) => void;

export interface RpcSocketOptions {
  /** Per-request time limit. Default 30 s. */
  timeoutMs?: number;
  /** How long the WebSocket opening handshake may take. Default 10 s. */
  connectTimeoutMs?: number;
  /** Extra headers for the upgrade request (AHP gates the endpoint itself at the transport, before `initialize`). */
  headers?: Record<string, string>;
}

interface Pending {
  resolve: (value: unknown) => void;
  reject: (error: Error) => void;
  timer: NodeJS.Timeout;
}

export class RpcSocket {
  readonly #ws: WebSocket;
  readonly #pending = new Map<number, Pending>();
  readonly #timeoutMs: number;
  #nextId = 1;
  #closed: Error | undefined;
  #onNotification: NotificationHandler = () => {};
  #onClose: (error: Error) => void = () => {};

  private constructor(ws: WebSocket, timeoutMs: number) {
    this.#ws = ws;
    this.#timeoutMs = timeoutMs;
    ws.on("message", (data, isBinary) => this.#receive(data, isBinary));
    ws.on("close", (code) =>
      this.#fail(
        new AhpConnectError(`The AHP host closed the connection (WebSocket code ${code}).`),
      ),
    );
    ws.on("error", (error) =>
      this.#fail(new AhpConnectError("The AHP connection failed.", { cause: error })),
    );
  }

  static async open(url: string, options: RpcSocketOptions = {}): Promise<RpcSocket> {
    const parsed = URL.parse(url);
    if (!parsed || (parsed.protocol !== "ws:" && parsed.protocol !== "wss:")) {
      throw new AhpConnectError(`Not a WebSocket URL: ${clip(url)} (expected ws:// or wss://).`);
    }
    const ws = new WebSocket(parsed, {
      headers: options.headers,
      handshakeTimeout: options.connectTimeoutMs ?? 10_000,
      maxPayload: 16 * 1024 * 1024,
    });
    await new Promise<void>((resolve, reject) => {
      const onError = (error: Error) => {
        cleanup();
        reject(
          new AhpConnectError(
            `Could not connect to the AHP host at ${parsed.origin} (${clip(error.message)}). Check the URL and that the host is running.`,
            { cause: error },
          ),
        );
      };
      const onOpen = () => {
        cleanup();
        resolve();
      };
      const cleanup = () => {
        ws.off("error", onError);
        ws.off("open", onOpen);
      };
      ws.on("error", onError);
      ws.on("open", onOpen);
    });
    return new RpcSocket(ws, options.timeoutMs ?? 30_000);
  }

  get closed(): boolean {
    return this.#closed !== undefined;
  }

  onNotification(handler: NotificationHandler): void {
    this.#onNotification = handler;
  }

  /** Told once when the connection ends for any reason other than `close()`. */
  onClose(handler: (error: Error) => void): void {
    this.#onClose = handler;
  }

  /** Sends a request; resolves with `result`, rejects with RpcErrorAnswer for an error answer. */
  request(method: string, params: unknown, timeoutMs = this.#timeoutMs): Promise<unknown> {
    if (this.#closed) return Promise.reject(this.#closed);
    const id = this.#nextId++;
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.#pending.delete(id);
        reject(
          new AhpTimeoutError(`The AHP host did not answer ${method} within ${timeoutMs} ms.`),
        );
      }, timeoutMs);
      this.#pending.set(id, { resolve, reject, timer });
      this.#send({ jsonrpc: "2.0", id, method, params });
    });
  }

  notify(method: string, params: unknown): void {
    if (!this.#closed) this.#send({ jsonrpc: "2.0", method, params });
  }

  async close(): Promise<void> {
    if (!this.#closed) this.#fail(new AhpClosedError(), false);
    if (this.#ws.readyState === WebSocket.CLOSED) return;
    await new Promise<void>((resolve) => {
      this.#ws.once("close", () => resolve());
      this.#ws.close(1000);
      setTimeout(() => {
        this.#ws.terminate();
        resolve();
      }, 1000).unref();
    });
  }

  #send(message: object): void {
    this.#ws.send(JSON.stringify(message));
  }

  #receive(data: WebSocket.RawData, isBinary: boolean): void {
    if (isBinary) {
      this.#violation("a binary frame (AHP messages are text frames)");
      return;
    }
    let message: unknown;
    try {
      message = JSON.parse(data.toString());
    } catch {
      this.#violation("a frame that is not JSON");
      return;
    }
    if (!isObject(message) || message.jsonrpc !== "2.0") {
      this.#violation("a frame that is not a JSON-RPC 2.0 message");
      return;
    }
    if (typeof message.method === "string") {
      if (message.id === undefined) {
        this.#onNotification(message.method, message.params);
      } else {
        // The client offers no methods to the host; say so rather than leave the host waiting.
        this.#send({
          jsonrpc: "2.0",
          id: message.id,
          error: { code: -32601, message: "Method not found" },
        });
      }
      return;
    }
    const pending = typeof message.id === "number" ? this.#pending.get(message.id) : undefined;
    if (!pending) return;
    this.#pending.delete(message.id as number);
    clearTimeout(pending.timer);
    if (isObject(message.error)) {
      const { code, message: text, data: extra } = message.error;
      pending.reject(
        typeof code === "number" && typeof text === "string"
          ? new RpcErrorAnswer({ code, message: text, data: extra })
          : new AhpProtocolError("The AHP host sent a malformed error answer."),
      );
    } else if ("result" in message) {
      pending.resolve(message.result);
    } else {
      pending.reject(new AhpProtocolError("The AHP host answered with neither result nor error."));
    }
  }

  #violation(what: string): void {
    this.#fail(new AhpProtocolError(`The AHP host sent ${what}; closing the connection.`));
    this.#ws.terminate();
  }

  #fail(error: Error, notify = true): void {
    if (this.#closed) return;
    this.#closed = error;
    for (const pending of this.#pending.values()) {
      clearTimeout(pending.timer);
      pending.reject(error);
    }
    this.#pending.clear();
    if (notify) this.#onClose(error);
  }
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** A host's JSON-RPC error answer as the client's typed error (its message clipped through `peerText`). */
export function mapError(error: unknown, method: string): Error {
  if (error instanceof RpcErrorAnswer) {
    return new AhpRequestError(
      `The host refused ${method}: ${clip(error.rpc.message)} (${error.rpc.code}).`,
      {
        rpcCode: error.rpc.code,
      },
    );
  }
  return error as Error;
}
