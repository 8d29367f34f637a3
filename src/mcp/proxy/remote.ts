/**
 * The proxy's transport to the remote MCP server, built from the official client SDK's: Streamable HTTP (MCP
 * 2025-03-26 and later) or the HTTP+SSE transport of 2024-11-05, or the first then the other. With `http-first` (the
 * default) an `initialize` POST answered 400, 404 or 405 moves the connection to SSE, as the spec's backwards-
 * compatibility section says; `sse-first` is the reverse; `http-only` and `sse-only` never move. It starts on the
 * first message, and a start that failed (a sign-in needed, the server down) is made again on the next one. Every request goes
 * through `fetchWith` (the extra headers, then the provider's fetch, which presents tokens and notes answers).
 */

import type { FetchLike, JSONRPCMessage, Transport } from "@modelcontextprotocol/client";
import type { AgentAuthProvider } from "../client/provider.ts";
import { loadMcpClientSdk } from "../sdk.ts";

export type RemoteTransportMode = "http-first" | "sse-first" | "http-only" | "sse-only";
export const REMOTE_TRANSPORT_MODES: readonly RemoteTransportMode[] = [
  "http-first",
  "sse-first",
  "http-only",
  "sse-only",
];

export interface RemoteOptions {
  serverUrl: URL;
  mode: RemoteTransportMode;
  /** Undefined when the user gave the server's credential as an `Authorization` header (no OAuth then). */
  authProvider?: AgentAuthProvider;
  headers: Record<string, string>;
}

/**
 * The transport to the server, per `mode`. Not started yet: it starts on the first message (an SSE transport
 * connects then, and a sign-in it needs is handled like any other request's).
 */
export async function connectRemote(options: RemoteOptions): Promise<Transport> {
  const sdk = await loadMcpClientSdk("agentauth mcp proxy");
  const base: FetchLike = options.authProvider?.fetch ?? fetch;
  const fetchWith: FetchLike = (url, init) => {
    const headers = new Headers(init?.headers);
    for (const [name, value] of Object.entries(options.headers)) headers.set(name, value);
    return base(url, { ...init, headers });
  };
  const auth = options.authProvider ? { authProvider: options.authProvider } : {};
  const http = () =>
    new sdk.StreamableHTTPClientTransport(options.serverUrl, { ...auth, fetch: fetchWith });
  const sse = () => new sdk.SSEClientTransport(options.serverUrl, { ...auth, fetch: fetchWith });
  switch (options.mode) {
    case "http-only":
      return new RemoteTransport(http);
    case "sse-only":
      return new RemoteTransport(sse);
    case "http-first":
      return new RemoteTransport(http, sse);
    case "sse-first":
      return new RemoteTransport(sse, http);
  }
}

/** Statuses that say "not this transport" to a first `initialize` (never 401/403: those are about the token). */
const WRONG_TRANSPORT = new Set([400, 404, 405]);

/**
 * One SDK transport, started on the first send; when its start or the first `initialize` is refused as the wrong
 * transport (and there is another), the other. A start that fails otherwise (a sign-in needed, the server down)
 * leaves nothing behind: the next send builds and starts a fresh one. Messages and callbacks pass through;
 * `setProtocolVersion` and the session calls go to whichever is current.
 */
class RemoteTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage) => void;
  #make: () => Transport;
  #other?: () => Transport;
  #current?: Transport;
  #starting?: Promise<Transport>;
  #settled = false;
  #protocolVersion?: string;

  constructor(make: () => Transport, other?: () => Transport) {
    this.#make = make;
    this.#other = other;
  }

  get sessionId(): string | undefined {
    return this.#current?.sessionId;
  }

  /** Nothing to do until the first message. */
  async start(): Promise<void> {}

  #started(): Promise<Transport> {
    if (this.#current) return Promise.resolve(this.#current);
    this.#starting ??= (async () => {
      for (;;) {
        const transport = this.#wire(this.#make());
        try {
          await transport.start();
        } catch (error) {
          transport.onclose = undefined;
          await transport.close().catch(() => {});
          if (!this.#settled && this.#other && wrongTransport(error)) {
            this.#useOther();
            continue;
          }
          throw error;
        }
        if (this.#protocolVersion) transport.setProtocolVersion?.(this.#protocolVersion);
        this.#current = transport;
        return transport;
      }
    })().finally(() => {
      this.#starting = undefined;
    });
    return this.#starting;
  }

  #wire(transport: Transport): Transport {
    transport.onmessage = (message) => this.onmessage?.(message);
    transport.onerror = (error) => this.onerror?.(error);
    transport.onclose = () => this.onclose?.();
    return transport;
  }

  #useOther(): void {
    this.#make = this.#other as () => Transport;
    this.#other = undefined;
  }

  async send(message: JSONRPCMessage, options?: Parameters<Transport["send"]>[1]): Promise<void> {
    const transport = await this.#started();
    try {
      await transport.send(message, options);
      if (isInitialize(message)) this.#settled = true;
    } catch (error) {
      if (this.#settled || !this.#other || !isInitialize(message) || !wrongTransport(error))
        throw error;
      this.#useOther();
      transport.onclose = undefined;
      this.#current = undefined;
      await transport.close().catch(() => {});
      await (await this.#started()).send(message, options);
      this.#settled = true;
    }
  }

  setProtocolVersion(version: string): void {
    this.#protocolVersion = version;
    this.#current?.setProtocolVersion?.(version);
  }

  async terminateSession(): Promise<void> {
    await (
      this.#current as (Transport & { terminateSession?: () => Promise<void> }) | undefined
    )?.terminateSession?.();
  }

  async close(): Promise<void> {
    await this.#current?.close();
  }
}

function isInitialize(message: JSONRPCMessage): boolean {
  return (message as { method?: unknown }).method === "initialize";
}

function wrongTransport(error: unknown): boolean {
  const status =
    (error as { status?: unknown; code?: unknown } | undefined)?.status ??
    (error as { code?: unknown })?.code;
  return typeof status === "number" && WRONG_TRANSPORT.has(status);
}
