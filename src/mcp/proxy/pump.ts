/**
 * The message pump between the MCP client (the stdio server transport) and the remote MCP server (an HTTP client
 * transport): every JSON-RPC message is forwarded as it is, both ways. Requests go out concurrently (each is its own
 * POST); a notification is sent before anything that follows it (so `initialized` precedes the next request, and a
 * cancellation is not overtaken). It reads only:
 * - the client's `initialize` request, kept to open a new session when the server loses its own (it restarted: 404
 *   to the session id), and its answer's `protocolVersion`, which the HTTP transport sends as a header from then on;
 * - the failure of a send: a sign-in needed (the coordinator starts or joins one, then the message is sent again or
 *   the request is answered with what to do), a lost session (reopened, then sent again; a send cut short because
 *   another request reopened the session is sent again too: it never reached a server that knew the session),
 *   anything else (the request is answered with a JSON-RPC error);
 * - the end of a request's response stream without its answer (the server died mid-call): answered with an error
 *   that says the outcome is unknown, never sent again (it may have run).
 * A request is never left unanswered.
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
  /** Called when a send failed for want of a sign-in; `signal` aborts when the proxy closes. */
  signIn: (message: { method?: string }, signal: AbortSignal) => Promise<SignInOutcome>;
  /** Told the client's `initialize` params (its capabilities), once per `initialize`. */
  onInitialize?: (params: unknown) => void;
  log: Logger;
}

/** JSON-RPC: the server failed the request (the proxy could not deliver it or get an answer). */
export const PROXY_ERROR = -32603;
const REPLAY_PREFIX = "agentauth-proxy-reopen-";
/** How long a reopened session's `initialize` may take before the requests waiting on it are answered. */
const REOPEN_TIMEOUT_MS = 30_000;
/** How long closing waits for requests still in the sign-in coordinator or on their way. */
const CLOSE_GRACE_MS = 2_000;

type Message = JSONRPCMessage & {
  id?: string | number;
  method?: string;
  params?: unknown;
  result?: unknown;
};

/** A client request the server has not answered: the transport it went out on, and where its answer stands. */
interface RequestState {
  message: Message;
  on: number;
  /** The send returned: the answer comes on the response stream (or already came). */
  streaming: boolean;
  /** The response stream ended. */
  ended: boolean;
}

export interface Pump {
  /** Resolves when the client's side closed (the client ended the process's stdin) and the server's was closed. */
  readonly closed: Promise<void>;
  close(): Promise<void>;
}

export async function startPump(options: PumpOptions): Promise<Pump> {
  const { client, log } = options;
  // Which transport a send went out on: a send cut short after the session was reopened is sent again.
  let generation = 0;
  let remote = await attach(await options.connectRemote());
  let initialize: Message | undefined;
  let reopening: Promise<void> | undefined;
  let replays = 0;
  const waiting = new Map<string, (message: Message) => void>();
  /** The client's requests on their way to the server or waiting for its answer, by id. */
  const requests = new Map<string | number, RequestState>();
  const inFlight = new Set<Promise<void>>();
  let lastNotification: Promise<void> = Promise.resolve();
  const stopping = new AbortController();
  let finish: () => void = () => {};
  const closed = new Promise<void>((resolve) => {
    finish = resolve;
  });
  let closing = false;

  function attach(transport: Transport): Transport {
    generation++;
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
    if (id !== undefined && message.method === undefined) requests.delete(id);
    if (initialize && id === initialize.id && message.result !== undefined) {
      const version = (message.result as { protocolVersion?: unknown }).protocolVersion;
      if (typeof version === "string") remote.setProtocolVersion?.(version);
    }
    toClient(message);
  }

  function toClient(message: JSONRPCMessage): void {
    client
      .send(message)
      .catch((error: unknown) => log.warn("mcp.proxy.client_write_failed", { error }));
  }

  /** A new session with the server: the client's `initialize` again (its answer kept here), then `initialized`. */
  function reopen(): Promise<void> {
    reopening ??= (async () => {
      const old = remote;
      remote = attach(await options.connectRemote());
      await old.close().catch(() => {});
      // Requests whose answer was streaming on the old session: the server lost them, and they may have run. (Those
      // still being sent there fail, see a new generation in `deliver`, and are sent again: they never ran.)
      for (const state of [...requests.values()]) {
        if (state.on !== generation && state.streaming) {
          answerWithError(state.message, {
            code: PROXY_ERROR,
            message:
              "The MCP server lost the session while this request was running (it restarted); whether it ran is unknown. Try it again if that is safe.",
          });
        }
      }
      if (!initialize) return;
      const id = `${REPLAY_PREFIX}${++replays}`;
      const answered = new Promise<Message>((resolve, reject) => {
        waiting.set(id, resolve);
        setTimeout(() => {
          waiting.delete(id);
          reject(new Error("the MCP server did not answer a new initialize"));
        }, REOPEN_TIMEOUT_MS).unref();
      });
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
    const on = generation;
    const hadSession = remote.sessionId !== undefined;
    const state: RequestState | undefined =
      message.method !== undefined && message.id !== undefined
        ? { message, on, streaming: false, ended: false }
        : undefined;
    if (state) requests.set(message.id as string | number, state);
    try {
      await remote.send(
        message as JSONRPCMessage,
        state ? { onRequestStreamEnd: () => streamEnded(state) } : undefined,
      );
      if (state) {
        state.streaming = true;
        if (state.ended) unanswered(state);
      }
    } catch (error) {
      if (state && requests.get(message.id as string | number) === state)
        requests.delete(message.id as string | number);
      const lost = hadSession && sessionLost(error);
      if (attempt < 2 && (lost || generation !== on)) {
        // 404 to the session, or cut short because another request reopened it: it never ran; send it again.
        if (lost && generation === on) await reopen();
        return deliver(message, attempt + 1);
      }
      if (attempt === 0 && signInNeeded(error)) {
        const outcome = await options.signIn(message, stopping.signal);
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

  /** The response stream of a request ended (answers are delivered before the end is, hence the microtask). */
  function streamEnded(state: RequestState): void {
    queueMicrotask(() => {
      state.ended = true;
      if (state.streaming) unanswered(state);
    });
  }

  /** A request whose stream ended without its answer: it may have run, so it is not sent again. */
  function unanswered(state: RequestState): void {
    if (requests.get(state.message.id as string | number) !== state) return;
    answerWithError(state.message, {
      code: PROXY_ERROR,
      message:
        "The MCP server ended its answer to this request without a result (it may have failed or restarted mid-call); whether it ran is unknown. Try it again if that is safe.",
    });
  }

  function answerWithError(
    message: Message,
    error: { code: number; message: string; data?: unknown },
  ): void {
    if (message.id !== undefined && message.method !== undefined) requests.delete(message.id);
    // Only a request has someone waiting; a notification or a response that could not be delivered is logged.
    if (message.method === undefined || message.id === undefined) return;
    toClient({ jsonrpc: "2.0", id: message.id, error } as JSONRPCMessage);
  }

  function track(message: Message): void {
    // A notification goes out before whatever follows it; requests and responses go out concurrently.
    const previous = lastNotification;
    const run = previous.then(() =>
      deliver(message).catch((error: unknown) => {
        log.warn("mcp.proxy.deliver_failed", { method: message.method, error });
        answerWithError(message, {
          code: PROXY_ERROR,
          message: `agentauth mcp proxy could not deliver the request: ${describe(error)}`,
        });
      }),
    );
    if (message.method !== undefined && message.id === undefined) lastNotification = run;
    inFlight.add(run);
    void run.finally(() => inFlight.delete(run));
  }

  client.onmessage = (message) => {
    const m = message as Message;
    if (closing) return;
    if (m.method === "initialize" && m.id !== undefined) {
      initialize = m;
      options.onInitialize?.(m.params);
    }
    track(m);
  };
  client.onclose = () => {
    void close();
  };
  client.onerror = (error) => log.warn("mcp.proxy.client_error", { error });

  async function close(): Promise<void> {
    if (closing) return closed;
    closing = true;
    // Requests waiting for a sign-in stop waiting; the others get a moment to finish before the session ends.
    stopping.abort();
    const grace = new Promise<void>((resolve) => setTimeout(resolve, CLOSE_GRACE_MS).unref());
    await Promise.race([Promise.allSettled([...inFlight]), grace]);
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
  const status = (error as { status?: unknown } | undefined)?.status;
  const prefix = typeof status === "number" ? `HTTP ${status}: ` : "";
  return peerText(`${prefix}${message}`, { max: 300 });
}
