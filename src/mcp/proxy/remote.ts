/**
 * The proxy's transport to the remote MCP server, built from the official client SDK's: Streamable HTTP (MCP
 * 2025-03-26 and later) or the HTTP+SSE transport of 2024-11-05, or the first then the other. With `http-first` (the
 * default) an `initialize` POST answered 400, 404 or 405 moves the connection to SSE, as the spec's backwards-
 * compatibility section says; `sse-first` is the reverse; `http-only` and `sse-only` never move. Every request goes
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

/** A started transport to the server, per `mode`. */
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
  const transport =
    options.mode === "http-only"
      ? http()
      : options.mode === "sse-only"
        ? sse()
        : new FallbackTransport(
            options.mode === "http-first" ? http : sse,
            options.mode === "http-first" ? sse : http,
          );
  await transport.start();
  return transport;
}

/** Statuses that say "not this transport" to a first `initialize` (never 401/403: those are about the token). */
const WRONG_TRANSPORT = new Set([400, 404, 405]);

/**
 * One transport until the first `initialize` is refused as the wrong transport, then the other. Messages and
 * callbacks pass through; `setProtocolVersion` and the session calls go to whichever is current.
 */
class FallbackTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage) => void;
  #current: Transport;
  #other?: () => Transport;
  #settled = false;

  constructor(first: () => Transport, other: () => Transport) {
    this.#current = this.#wire(first());
    this.#other = other;
  }

  #wire(transport: Transport): Transport {
    transport.onmessage = (message) => this.onmessage?.(message);
    transport.onerror = (error) => this.onerror?.(error);
    transport.onclose = () => this.onclose?.();
    return transport;
  }

  get sessionId(): string | undefined {
    return this.#current.sessionId;
  }

  start(): Promise<void> {
    // An SSE transport connects at start; a refusal there moves to the other transport at once.
    return this.#current.start().catch(async (error: unknown) => {
      if (!this.#other || !wrongTransport(error)) throw error;
      await this.#switch();
    });
  }

  async send(message: JSONRPCMessage, options?: Parameters<Transport["send"]>[1]): Promise<void> {
    try {
      await this.#current.send(message, options);
      if (isInitialize(message)) this.#settled = true;
    } catch (error) {
      if (this.#settled || !this.#other || !isInitialize(message) || !wrongTransport(error))
        throw error;
      await this.#switch();
      await this.#current.send(message, options);
      this.#settled = true;
    }
  }

  async #switch(): Promise<void> {
    const next = this.#other as () => Transport;
    this.#other = undefined;
    const previous = this.#current;
    previous.onclose = undefined;
    await previous.close().catch(() => {});
    this.#current = this.#wire(next());
    await this.#current.start();
  }

  setProtocolVersion(version: string): void {
    this.#current.setProtocolVersion?.(version);
  }

  async terminateSession(): Promise<void> {
    await (
      this.#current as Transport & { terminateSession?: () => Promise<void> }
    ).terminateSession?.();
  }

  close(): Promise<void> {
    return this.#current.close();
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
