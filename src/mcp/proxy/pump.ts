/**
 * The message pump between the MCP client (the stdio server transport) and the remote MCP server (an HTTP client
 * transport): every JSON-RPC message is forwarded as it is, both ways, in the order it arrived. It reads only:
 * - the client's `initialize` request, kept to open a new session when the server loses its own (it restarted: 404
 *   to the session id), and its answer's `protocolVersion`, which the HTTP transport sends as a header from then on;
 * - the failure of a send: a sign-in needed (the coordinator starts or joins one, then the message is sent again or
 *   the request is answered with what to do), a lost session (reopened, then sent again), anything else (the request
 *   is answered with a JSON-RPC error). A request is never left unanswered.
 * Text from the server that ends up in an error message is made safe for a terminal and a model (peerText).
 */

import type { JSONRPCMessage, Transport } from "@modelcontextprotocol/client";
import { peerText } from "../../core/display.ts";
import type { Logger } from "../../core/log.ts";

/** What the coordinator decided: the credential is there now (send again), or the answer to give the client. */
export type SignInOutcome =
  | { retry: true }
  | { retry: false; error: { code: number; message: string; data?: unknown } };

export interface PumpOptions {
  client: Transport;
  /** A new transport to the server, started, with no session yet. */
  connectRemote: () => Promise<Transport>;
  /** Called when a send failed for want of a sign-in. */
  signIn: () => Promise<SignInOutcome>;
  /** Told the client's `initialize` params (its capabilities), once per `initialize`. */
  onInitialize?: (params: unknown) => void;
  log: Logger;
}

/** JSON-RPC: the server failed the request (the proxy could not deliver it or get an answer). */
export const PROXY_ERROR = -32603;
const REPLAY_PREFIX = "agentauth-proxy-reopen-";

type Message = JSONRPCMessage & {
  id?: string | number;
  method?: string;
  params?: unknown;
  result?: unknown;
};

export interface Pump {
  /** Resolves when the client's side closed (the client ended the process's stdin) and the server's was closed. */
  readonly closed: Promise<void>;
  close(): Promise<void>;
}

export async function startPump(options: PumpOptions): Promise<Pump> {
  const { client, log } = options;
  let remote = await attach(await options.connectRemote());
  let initialize: Message | undefined;
  let reopening: Promise<void> | undefined;
  let replays = 0;
  const waiting = new Map<string, (message: Message) => void>();
  let finish: () => void = () => {};
  const closed = new Promise<void>((resolve) => {
    finish = resolve;
  });
  let closing = false;

  function attach(transport: Transport): Transport {
    transport.onmessage = (message) => fromServer(message as Message);
    transport.onerror = (error) => {
      // A sign-in needed is the coordinator's to handle and say; the provider's own words are for library users.
      if (!signInNeeded(error)) log.warn("mcp.proxy.server_error", { error });
    };
    return transport;
  }

  function fromServer(message: Message): void {
    const id = message.id;
    if (typeof id === "string" && waiting.has(id)) {
      waiting.get(id)?.(message);
      waiting.delete(id);
      return;
    }
    if (initialize && id === initialize.id && message.result !== undefined) {
      const version = (message.result as { protocolVersion?: unknown }).protocolVersion;
      if (typeof version === "string") remote.setProtocolVersion?.(version);
    }
    void client
      .send(message)
      .catch((error: unknown) => log.warn("mcp.proxy.client_write_failed", { error }));
  }

  /** A new session with the server: the client's `initialize` again (its answer kept here), then `initialized`. */
  function reopen(): Promise<void> {
    reopening ??= (async () => {
      await remote.close().catch(() => {});
      remote = attach(await options.connectRemote());
      if (!initialize) return;
      const id = `${REPLAY_PREFIX}${++replays}`;
      const answered = new Promise<Message>((resolve) => waiting.set(id, resolve));
      await remote.send({ ...initialize, id } as JSONRPCMessage);
      const answer = await answered;
      const version = (answer.result as { protocolVersion?: unknown } | undefined)?.protocolVersion;
      if (typeof version === "string") remote.setProtocolVersion?.(version);
      await remote.send({ jsonrpc: "2.0", method: "notifications/initialized" } as JSONRPCMessage);
      log.info("mcp.proxy.session_reopened", {});
    })().finally(() => {
      reopening = undefined;
    });
    return reopening;
  }

  async function deliver(message: Message, attempt = 0): Promise<void> {
    if (reopening) await reopening.catch(() => {});
    try {
      await remote.send(message as JSONRPCMessage);
    } catch (error) {
      if (attempt === 0 && sessionLost(error)) {
        await reopen();
        return deliver(message, attempt + 1);
      }
      if (attempt === 0 && signInNeeded(error)) {
        const outcome = await options.signIn();
        if (outcome.retry) return deliver(message, attempt + 1);
        return answerWithError(message, outcome.error);
      }
      log.warn("mcp.proxy.send_failed", { method: message.method, error });
      return answerWithError(message, {
        code: PROXY_ERROR,
        message: `agentauth mcp proxy could not get an answer from the MCP server: ${describe(error)}`,
      });
    }
  }

  function answerWithError(
    message: Message,
    error: { code: number; message: string; data?: unknown },
  ) {
    // Only a request has someone waiting; a notification or a response that could not be delivered is logged.
    if (message.method === undefined || message.id === undefined) return;
    return client.send({ jsonrpc: "2.0", id: message.id, error } as JSONRPCMessage);
  }

  client.onmessage = (message) => {
    const m = message as Message;
    if (m.method === "initialize" && m.id !== undefined) {
      initialize = m;
      options.onInitialize?.(m.params);
    }
    void deliver(m);
  };
  client.onclose = () => {
    void close();
  };
  client.onerror = (error) => log.warn("mcp.proxy.client_error", { error });

  async function close(): Promise<void> {
    if (closing) return closed;
    closing = true;
    await terminate(remote);
    await client.close().catch(() => {});
    finish();
    return closed;
  }

  await client.start();
  return { closed, close };
}

/** Streamable HTTP: end the session at the server (DELETE), then close; other transports just close. */
async function terminate(transport: Transport): Promise<void> {
  const session = transport as Transport & {
    terminateSession?: () => Promise<void>;
    sessionId?: string;
  };
  if (session.sessionId && session.terminateSession)
    await session.terminateSession().catch(() => {});
  await transport.close().catch(() => {});
}

/** The server no longer knows the session (HTTP 404 to a request carrying one: it restarted). */
function sessionLost(error: unknown): boolean {
  return (error as { status?: unknown } | undefined)?.status === 404;
}

/** The provider could not get a token without a person (`login_required`), anywhere along the cause chain. */
function signInNeeded(error: unknown): boolean {
  for (
    let e = error as { code?: unknown; cause?: unknown } | undefined;
    e;
    e = e.cause as typeof e
  ) {
    if (e.code === "login_required") return true;
  }
  return false;
}

function describe(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  return peerText(message, { max: 300 });
}
