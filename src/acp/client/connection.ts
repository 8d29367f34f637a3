/**
 * One live ACP connection to one agent process: the SDK's client app (v1 `/unstable` or v2 `/experimental/v2/unstable`)
 * over `ndJsonStream`, the client-side handlers the auth journey needs, `initialize`, and requests whose failures
 * come back typed (exited, oversized message, timeout, cancelled) or as the agent's own `RequestError`.
 */

import * as acp2 from "@agentclientprotocol/sdk/experimental/v2/unstable";
import * as acp from "@agentclientprotocol/sdk/unstable";
import { peerText } from "../../core/display.ts";
import { LOGIN_PROMPT } from "../wire.ts";
import {
  type AgentLaunch,
  type AgentProcess,
  type AgentStderr,
  spawnAgent,
} from "./agent-process.ts";
import { type AgentProfile, readInitializeResponse } from "./agent-profile.ts";
import { isRecord } from "./auth-methods.ts";
import {
  type AuthStatus,
  type AuthStatusHint,
  readAuthStatus,
  readStatusHint,
} from "./auth-status.ts";
import {
  AcpAgentExitedError,
  AcpAgentPromptedError,
  AcpCancelledError,
  AcpInitializeError,
  AcpProtocolError,
  AcpTimeoutError,
} from "./errors.ts";
import {
  type AdvertisedClientAbilities,
  type ClientIdentity,
  initializeParams,
  type ProtocolVersion,
} from "./protocol.ts";
import { agentDetail } from "./rpc-errors.ts";
import { watchForPrompt } from "./stdin-prompt.ts";
import type { StrayOutput } from "./stdout-lines.ts";
import { promptFromElicitation, promptFromLoginPrompt, type UrlPrompt } from "./url-prompt.ts";

export interface ConnectionHooks {
  onUrl?: (prompt: UrlPrompt) => void | Promise<void>;
  /** `auth/status_update`, called in wire order (before any later response is seen). */
  onStatusUpdate: (status: AuthStatus) => void;
  /** The vendor `_auth/status_update` extension. */
  onStatusHint: (hint: AuthStatusHint) => void;
  /** Every `session/update` notification's params, unread (the caller validates what it uses). */
  onSessionUpdate?: (params: unknown) => void;
}

export interface ConnectionOptions {
  version: ProtocolVersion;
  abilities: AdvertisedClientAbilities;
  clientInfo: ClientIdentity;
  hooks: ConnectionHooks;
  stderr: AgentStderr;
  /** Each stdout line that is not JSON-RPC (dropped), unsanitised. */
  onStrayLine?: (line: string) => void;
  maxMessageBytes: number;
  initializeTimeoutMs: number;
  /** Ends every request of this connection (the client's lifetime signal). */
  signal?: AbortSignal;
}

export interface CallOptions {
  /** Names the step in messages ("auth/status", "the login"). */
  what: string;
  signal?: AbortSignal;
  timeoutMs?: number;
}

/** What the SDK's v1 and v2 client connections have in common, as far as we use them. */
interface SdkPeer {
  request(method: string, params: unknown, options: acp.SendRequestOptions): Promise<unknown>;
  readonly signal: AbortSignal;
  close(error?: unknown): void;
}

export interface AgentConnection {
  readonly profile: AgentProfile;
  /** What the agent printed on stdout that was not JSON-RPC (dropped before the SDK). */
  readonly stray: StrayOutput;
  /** A request to the agent. Rejects with the agent's `RequestError`, or one of our typed errors. */
  call(method: string, params: unknown, options: CallOptions): Promise<unknown>;
  close(): Promise<void>;
}

/** Spawns the agent and initializes it; on any failure the process is stopped before the error is thrown. */
export async function openConnection(
  launch: AgentLaunch,
  options: ConnectionOptions,
): Promise<AgentConnection> {
  if (options.signal?.aborted)
    throw new AcpCancelledError("Connecting to the agent was cancelled.");
  const agentProcess = await spawnAgent(launch, options.stderr, options.onStrayLine);
  const seen: WireFacts = {};
  // A question on stdout that the agent waits to have answered on stdin (stdin-prompt.ts): every request ends with
  // AcpAgentPromptedError and the agent is stopped at once, before anything more is written to its stdin (closing the
  // peer rejects the requests without sending `$/cancel_request`).
  const onPrompt = (prompt: string) => {
    peer.close(new AgentPrompted(prompt));
    void agentProcess.stop();
  };
  const peer = connectPeer(agentProcess, options, seen, watchForPrompt(onPrompt));
  // A process that exits while something still holds its stdout open would leave requests waiting: close the
  // connection shortly after the exit, once whatever it printed last has been read.
  void agentProcess.exited.then(() => setTimeout(() => peer.close(new AgentGone()), 250).unref());
  const call = (method: string, params: unknown, callOptions: CallOptions) =>
    request(peer, agentProcess, options.signal, method, params, callOptions);
  let raw: unknown;
  try {
    raw = await call(
      "initialize",
      initializeParams(options.version, options.abilities, options.clientInfo),
      { what: "initialize", timeoutMs: options.initializeTimeoutMs },
    );
  } catch (error) {
    peer.close();
    await agentProcess.stop();
    throw initializeFailure(error, agentProcess, options, seen);
  }
  const profile = readInitializeResponse(raw, options.version);
  if (profile.protocolVersion !== options.version) {
    peer.close();
    await agentProcess.stop();
    throw new AcpInitializeError(
      `The agent answered protocol version ${profile.protocolVersion} to a version ${options.version} initialize; ` +
        `connect with protocolVersion: ${profile.protocolVersion === 2 ? 2 : 1}.`,
    );
  }
  return {
    profile,
    stray: agentProcess.stray,
    call,
    async close() {
      peer.close();
      await agentProcess.stop();
    },
  };
}

/** What the tap noticed on the wire before the SDK validated it. */
interface WireFacts {
  /** `protocolVersion` of the first answer that carried one (the `initialize` result). */
  protocolVersion?: unknown;
}

function connectPeer(
  agentProcess: AgentProcess,
  options: ConnectionOptions,
  seen: WireFacts,
  onUnterminated: (tail: string | undefined) => void,
): SdkPeer {
  // The SDK writes; we read (stdout-lines.ts drops what is not JSON-RPC instead of answering it into stdin).
  const nothing = new ReadableStream<Uint8Array>({ start: (controller) => controller.close() });
  const stream = acp.ndJsonStream(agentProcess.input, nothing, {
    maxMessageBytes: options.maxMessageBytes,
  });
  const tapped = {
    writable: stream.writable,
    readable: agentProcess
      .messages(options.maxMessageBytes, onUnterminated)
      .pipeThrough(wireTap(options.hooks, seen)),
  };
  const elicit = async (params: unknown) => {
    const prompt = promptFromElicitation(params);
    // Form mode, other modes, unsafe URLs, or a caller that cannot show URLs (we did not advertise it): decline.
    if (!prompt || !options.hooks.onUrl) return { action: "decline" as const };
    try {
      await options.hooks.onUrl(prompt);
    } catch {
      return { action: "cancel" as const };
    }
    return { action: "accept" as const };
  };
  const loginPrompt = async (params: unknown) => {
    const prompt = promptFromLoginPrompt(params);
    if (prompt) await options.hooks.onUrl?.(prompt);
  };
  const passThrough = (params: unknown) => params;
  if (options.version === 1) {
    const connection = acp
      .client({ name: options.clientInfo.name })
      .onRequest(acp.methods.client.elicitation.create, ({ params }) => elicit(params))
      .onNotification(LOGIN_PROMPT, passThrough, ({ params }) => loginPrompt(params))
      .connect(tapped);
    return {
      request: (method, params, opts) => connection.agent.request(method, params, opts),
      signal: connection.signal,
      close: (error) => connection.close(error),
    };
  }
  const connection = acp2
    .client({ name: options.clientInfo.name })
    .onRequest(acp2.methods.client.elicitation.create, ({ params }) => elicit(params))
    .onNotification(LOGIN_PROMPT, passThrough, ({ params }) => loginPrompt(params))
    .connect(tapped);
  return {
    request: (method, params, opts) => connection.agent.request(method, params, opts),
    signal: connection.signal,
    close: (error) => connection.close(error),
  };
}

/**
 * Reads status notifications as messages pass from the stream to the SDK, so they reach the cache in wire order:
 * a notification the agent sent before answering `auth/status` is recorded before that answer resolves (the
 * epoch guard in auth-status.ts depends on it). Also notes the `initialize` answer's version, which the v2 SDK
 * rejects without saying when a v1 agent answers. The SDK still sees every message.
 */
function wireTap(
  hooks: ConnectionHooks,
  seen: WireFacts,
): TransformStream<acp.AnyMessage, acp.AnyMessage> {
  return new TransformStream({
    transform(message, controller) {
      const result =
        isRecord(message) && "id" in message ? (message as { result?: unknown }).result : undefined;
      if (seen.protocolVersion === undefined && isRecord(result))
        seen.protocolVersion = result.protocolVersion;
      if (isRecord(message) && !("id" in message) && typeof message.method === "string") {
        if (message.method === "auth/status_update") {
          hooks.onStatusUpdate(readAuthStatus(message.params, "auth/status_update"));
        } else if (message.method === "_auth/status_update") {
          const hint = readStatusHint(message.params);
          if (hint) hooks.onStatusHint(hint);
        } else if (message.method === "session/update") {
          try {
            hooks.onSessionUpdate?.((message as { params?: unknown }).params);
          } catch {
            // A caller's hook that throws must not end the connection; the SDK still gets the message.
          }
        }
      }
      controller.enqueue(message);
    },
  });
}

async function request(
  peer: SdkPeer,
  agentProcess: AgentProcess,
  lifetime: AbortSignal | undefined,
  method: string,
  params: unknown,
  options: CallOptions,
): Promise<unknown> {
  const timeout = options.timeoutMs ? AbortSignal.timeout(options.timeoutMs) : undefined;
  const signals = [options.signal, lifetime, timeout].filter(
    (s): s is AbortSignal => s !== undefined,
  );
  // stopWaitingOnCancel: send `$/cancel_request` and stop waiting at once; a hung agent cannot hold us.
  const sendOptions: acp.SendRequestOptions =
    signals.length > 0
      ? { cancellationSignal: AbortSignal.any(signals), stopWaitingOnCancel: true }
      : {};
  try {
    if (peer.signal.aborted) throw peer.signal.reason;
    return await peer.request(method, params, sendOptions);
  } catch (error) {
    if (timeout?.aborted) {
      throw new AcpTimeoutError(
        `The agent did not answer ${options.what} within ${seconds(options.timeoutMs ?? 0)} s.`,
      );
    }
    if (options.signal?.aborted || lifetime?.aborted)
      throw new AcpCancelledError(`${options.what} was cancelled.`);
    // The agent's own error answer (or an SDK validation of it): the caller decides what it means.
    if (error instanceof acp.RequestError) throw error;
    if (peer.signal.aborted) throw await connectionFailure(peer, agentProcess, options.what);
    throw error;
  }
}

/** Why the connection is gone: an oversized message, the agent's exit, or its stdout closing. */
async function connectionFailure(
  peer: SdkPeer,
  agentProcess: AgentProcess,
  what: string,
): Promise<AcpProtocolError | AcpAgentExitedError | AcpAgentPromptedError> {
  const reason = peer.signal.reason;
  if (reason instanceof AgentPrompted) {
    return new AcpAgentPromptedError(
      `The agent asked "${reason.prompt}" on its stdout during ${what} and waits for the answer on its stdin, ` +
        "which carries ACP: nobody can answer it from here. The agent was stopped before anything more was written to it.",
      reason.prompt,
    );
  }
  if (reason instanceof acp.MessageTooLargeError) {
    return new AcpProtocolError(
      `The agent sent a message over the ${reason.maxMessageBytes}-byte limit during ${what}; its stdout is not usable ACP.`,
      { cause: reason },
    );
  }
  const exit = agentProcess.exit ?? (await Promise.race([agentProcess.exited, wait(1000)]));
  if (exit) {
    const how = exit.signal ? `was killed by ${exit.signal}` : `exited with code ${exit.code}`;
    // An agent's last words are often written just before it exits: read its stderr to the end (bounded, since a
    // grandchild may hold it open).
    await Promise.race([agentProcess.stderrClosed, wait(1000)]);
    const lines = agentProcess.stderrTail();
    const said = lines.length > 0 ? ` Its last lines on stderr:\n  ${lines.join("\n  ")}` : "";
    return new AcpAgentExitedError(
      `The agent ${how} during ${what}.${strayNote(agentProcess)}${said}`,
      {
        exitCode: exit.code,
        signal: exit.signal,
      },
    );
  }
  const why =
    reason instanceof Error && !(reason instanceof AgentGone)
      ? ` (${peerText(reason.message, { max: 120 })})`
      : "";
  return new AcpProtocolError(
    `The connection to the agent closed during ${what}${why}.${strayNote(agentProcess)}`,
    {
      cause: reason,
    },
  );
}

function initializeFailure(
  error: unknown,
  agentProcess: AgentProcess,
  options: ConnectionOptions,
  seen: WireFacts,
): Error {
  const answered = seen.protocolVersion;
  if (typeof answered === "number" && answered !== options.version) {
    return new AcpInitializeError(
      `The agent speaks ACP protocol version ${answered}, not ${options.version}; connect with protocolVersion: ${answered === 2 ? 2 : 1}.`,
      { cause: error },
    );
  }
  if (error instanceof AcpTimeoutError) {
    return new AcpInitializeError(
      `The agent did not answer initialize within ${seconds(options.initializeTimeoutMs)} s; is it an ACP agent speaking ` +
        `JSON-RPC on stdout?${strayNote(agentProcess)}`,
    );
  }
  if (error instanceof acp.RequestError) {
    return new AcpInitializeError(
      `The agent refused initialize: ${peerText(error.message)} (JSON-RPC ${error.code}).${agentDetail(error)}`,
      { cause: error },
    );
  }
  return error instanceof Error ? error : new AcpInitializeError("initialize failed.");
}

function strayNote(agentProcess: AgentProcess): string {
  return agentProcess.stray.note();
}

function seconds(ms: number): number {
  return Number((ms / 1000).toFixed(1));
}

function wait(ms: number): Promise<undefined> {
  return new Promise((resolve) => setTimeout(() => resolve(undefined), ms).unref());
}

/** The close reason we give the SDK when the agent asked a question on stdout (stdin-prompt.ts). */
class AgentPrompted extends Error {
  readonly prompt: string;
  constructor(prompt: string) {
    super("the agent asked a question on its stdout");
    this.prompt = prompt;
  }
}

/** The close reason we give the SDK when the process has exited. */
class AgentGone extends Error {
  constructor() {
    super("the agent process exited");
  }
}
