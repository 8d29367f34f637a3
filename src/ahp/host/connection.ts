/**
 * One client connection: JSON-RPC framing (one message per text frame), the `initialize` handshake (`handshake.ts`),
 * root and session subscriptions, `authenticate`, the deprecated `setAuthToken`, and gated commands. Every request gets
 * a JSON-RPC answer, whatever it holds; params are never logged (they may carry a token).
 */

import type { Logger } from "../../core/log.ts";
import {
  AhpErrorCodes,
  AhpMethods,
  AuthenticateParamsOfficialSchema,
  AuthenticateParamsSeedSchema,
  type JsonRpcId,
  JsonRpcIncomingSchema,
  OfficialSessionMethods,
  ReconnectParamsSchema,
  ROOT_CHANNEL,
  SetAuthTokenParamsSchema,
  SubscribeParamsSchema,
} from "../wire.ts";
import { AuthSession } from "./auth-session.ts";
import { AhpCommandError, type HostContext } from "./context.ts";
import type { Notification } from "./dialect.ts";
import { handshake } from "./handshake.ts";
import type { McpSubscriber } from "./mcp/index.ts";
import type { Dialect } from "./negotiate.ts";
import { clip, idOf, invalid, invalidParams, isResponse, notFound, type Reply } from "./replies.ts";
import type { RegisteredResource } from "./resources.ts";

/** What the transport gives a connection: send one message, close. */
export interface Peer {
  send(message: unknown): void;
  /** Closes after pending sends. */
  close(code: number, reason: string): void;
}

const RESERVED = new Set<string>(Object.values(AhpMethods));

export function isReservedMethod(name: string): boolean {
  return RESERVED.has(name);
}

export class AhpConnection implements McpSubscriber {
  readonly id: string;
  readonly #host: HostContext;
  readonly #peer: Peer;
  readonly #log: Logger;
  #dialect: Dialect | undefined;
  #auth: AuthSession | undefined;
  #warnedSetAuthToken = false;
  /** Session channels this connection subscribed to (where session `action` notifications go). */
  readonly #subscriptions = new Set<string>();

  constructor(id: string, host: HostContext, peer: Peer) {
    this.id = id;
    this.#host = host;
    this.#peer = peer;
    this.#log = host.logger.child({ connection: id });
  }

  /** One frame. Binary frames are refused: AHP carries one JSON-RPC message per *text* frame. */
  async receive(data: string | Buffer, isBinary: boolean): Promise<void> {
    if (isBinary) {
      return this.#answer(
        null,
        invalid(
          AhpErrorCodes.InvalidRequest,
          "Binary frames are not accepted: send one JSON-RPC message per text frame.",
        ),
      );
    }
    const text = typeof data === "string" ? data : data.toString("utf8");
    if (Buffer.byteLength(text) > this.#host.maxMessageBytes) {
      return this.#answer(
        null,
        invalid(
          AhpErrorCodes.InvalidRequest,
          `Message too large (limit ${this.#host.maxMessageBytes} bytes).`,
        ),
      );
    }
    let raw: unknown;
    try {
      raw = JSON.parse(text);
    } catch {
      return this.#answer(
        null,
        invalid(AhpErrorCodes.ParseError, "Parse error: the frame is not valid JSON."),
      );
    }
    const parsed = JsonRpcIncomingSchema.safeParse(raw);
    if (!parsed.success) {
      // Answer the sender's id when it is a usable one; JSON-RPC batches are not part of AHP.
      if (isResponse(raw)) return; // a stray response: this host sends no requests
      const id = idOf(raw);
      return this.#answer(
        id ?? null,
        invalid(
          AhpErrorCodes.InvalidRequest,
          "Invalid Request: expected one JSON-RPC 2.0 request or notification object.",
        ),
      );
    }
    const { id, method, params } = parsed.data;
    if (id === undefined) return this.#notification(method, params);
    let reply: Reply;
    try {
      reply = await this.#request(method, params);
    } catch (error) {
      this.#log.error("ahp.request_failed", { method, error });
      reply = invalid(AhpErrorCodes.InternalError, "Internal error.");
    }
    this.#answer(id, reply);
  }

  /** A resource registered after this connection initialized. */
  resourceAdded(resource: RegisteredResource): void {
    this.#auth?.announceRequired(resource);
  }

  closed(): void {
    this.#auth?.close();
    this.#subscriptions.clear();
    this.#host.mcp?.connectionClosed(this.id);
    this.#log.info("ahp.disconnected");
  }

  async #request(method: string, params: unknown): Promise<Reply> {
    if (method === AhpMethods.ping) return { result: {} };
    if (method === AhpMethods.initialize) return this.#initialize(params);
    const auth = this.#auth;
    const dialect = this.#dialect;
    if (!auth || !dialect) {
      return invalid(AhpErrorCodes.InvalidRequest, "Send initialize first.");
    }
    if (method === AhpMethods.subscribe) return this.#subscribe(auth, params);
    if (method === AhpMethods.authenticate) return this.#authenticate(auth, dialect, params);
    // `unsubscribe` is a notification in the official types; a client sending it as a request gets `{}`.
    if (method === AhpMethods.unsubscribe) {
      await this.#notification(method, params);
      return { result: {} };
    }
    const command = this.#host.commands.get(method);
    if (!command) return notFound(method);
    const { requires, scopes } = command.options;
    const requirement = typeof requires === "function" ? requires(params) : requires;
    // Synchronous in the common case: awaiting only a real promise spares every gated call a microtask hop.
    let refusal = auth.check(requirement, scopes);
    if (refusal instanceof Promise) refusal = await refusal;
    if (refusal) return { error: refusal };
    const log = this.#log;
    const connectionId = this.id;
    try {
      const result = await command.handler(params, {
        connectionId,
        dialect,
        // Built only when a handler reads it (most never do): it copies every credential's scopes.
        get authenticated() {
          return auth.authenticated();
        },
        logger: log,
      });
      const answer =
        method === OfficialSessionMethods.reconnect ? this.#resubscribe(params, result) : result;
      // `createSession` answers `null` (channels-session/commands.ts): only an absent result becomes `{}`.
      return { result: answer === undefined ? {} : answer };
    } catch (error) {
      if (error instanceof AhpCommandError)
        return invalid(error.rpcCode, error.message, error.data);
      throw error;
    }
  }

  /**
   * Sends `notification` if this connection speaks the official dialect and holds every one of `resources` (root
   * session events go only to connections entitled to that agent, so they do not leak other agents' sessions).
   */
  announce(resources: readonly string[], notification: Notification): void {
    if (this.#dialect !== "official" || !this.#auth?.holds(resources)) return;
    this.#send(notification);
  }

  /**
   * A successful `reconnect` restores the client's session subscriptions (`common/commands.ts`): every one the
   * handler did not answer as `missing` (it checked existence and ownership), so session actions reach it again.
   * A replay "MUST include all replayed data": the MCP server changes of those sessions after `lastSeenServerSeq`.
   */
  #resubscribe(params: unknown, result: unknown): unknown {
    const p = ReconnectParamsSchema.safeParse(params);
    const replay = result as { type?: unknown; actions?: unknown; missing?: unknown } | null;
    const missing = replay?.missing;
    if (!p.success || !Array.isArray(missing)) return result;
    const resumed = p.data.subscriptions.filter(
      (uri) => uri.startsWith("ahp-session:") && !missing.includes(uri),
    );
    for (const uri of resumed) this.#subscriptions.add(uri);
    const mcp = this.#host.mcp;
    if (!mcp || replay?.type !== "replay" || !Array.isArray(replay.actions)) return result;
    const missed = resumed.flatMap((uri) => mcp.replay(uri, p.data.lastSeenServerSeq));
    if (missed.length === 0) return result;
    return {
      ...replay,
      actions: [...replay.actions, ...missed].sort(
        (a, b) => (a as { serverSeq: number }).serverSeq - (b as { serverSeq: number }).serverSeq,
      ),
    };
  }

  /**
   * A session belongs to the account that created it (`sessions.ts` principalOf): once this connection speaks for
   * another account (or revoked its agent token, or that token expired), the sessions it subscribed to as the first
   * one are left, so their MCP server states stop reaching it and it can no longer push a token the host would use
   * for them.
   */
  #keepOwnedSubscriptions(auth: AuthSession, reason: "owner_changed" | "credential_expired"): void {
    const sessions = this.#host.sessions;
    if (!sessions || this.#subscriptions.size === 0) return;
    const authenticated = auth.authenticated();
    for (const uri of [...this.#subscriptions]) {
      if (!sessions.getOwned(uri, authenticated)) {
        this.#subscriptions.delete(uri);
        this.#log.info("ahp.session_left", { reason });
      }
    }
  }

  isSubscribed(channel: string): boolean {
    return this.#subscriptions.has(channel);
  }

  /** A session channel's `action` notification, to an official-dialect connection subscribed to it. */
  deliver(channel: string, notification: Notification): void {
    if (this.#dialect !== "official" || !this.#subscriptions.has(channel)) return;
    this.#send(notification);
  }

  #initialize(params: unknown): Reply {
    if (this.#dialect) return invalid(AhpErrorCodes.InvalidRequest, "Already initialized.");
    const outcome = handshake(this.#host, params);
    if (outcome.start) this.#start(outcome.start.dialect, outcome.start.version);
    if (outcome.refused) {
      this.#log.info("ahp.unsupported_version", outcome.refused);
      setImmediate(() => this.#peer.close(1002, "unsupported protocol version"));
    }
    return outcome.reply;
  }

  #start(dialect: Dialect, version: string): void {
    this.#dialect = dialect;
    // An expired agent credential ends the account's hold on its sessions as a replaced one does.
    const auth = new AuthSession(
      this.#host,
      dialect,
      (n) => this.#send(n),
      this.#log,
      () => this.#keepOwnedSubscriptions(auth, "credential_expired"),
    );
    this.#auth = auth;
    this.#log.info("ahp.initialized", { dialect, protocolVersion: version });
  }

  async #subscribe(auth: AuthSession, params: unknown): Promise<Reply> {
    const p = SubscribeParamsSchema.safeParse(params);
    if (!p.success) return invalidParams(p.error);
    const channel = p.data.channel;
    if (channel === ROOT_CHANNEL) {
      return {
        result: {
          snapshot: {
            resource: ROOT_CHANNEL,
            state: this.#host.registry.rootState(),
            fromSeq: this.#host.mcp?.serverSeq ?? 0,
          },
        },
      };
    }
    const sessions = this.#host.sessions;
    if (sessions && channel.startsWith("ahp-session:")) {
      const summary = sessions.get(channel);
      if (!summary) return invalid(AhpErrorCodes.SessionNotFound, "Session not found.");
      const refusal = await auth.check(sessions.resourcesOf(summary.provider), undefined);
      if (refusal) return { error: refusal };
      // Another account's session is answered as missing (sessions.ts principalOf).
      if (!sessions.getOwned(channel, auth.authenticated()))
        return invalid(AhpErrorCodes.SessionNotFound, "Session not found.");
      this.#subscriptions.add(channel);
      const mcp = this.#host.mcp;
      const customizations = mcp?.customizationsOf(channel) ?? [];
      const state = {
        ...sessions.state(summary),
        ...(customizations.length > 0 ? { customizations } : {}),
      };
      return {
        result: { snapshot: { resource: channel, state, fromSeq: mcp?.serverSeq ?? 0 } },
      };
    }
    return invalid(AhpErrorCodes.NotFound, "No such channel.");
  }

  async #authenticate(auth: AuthSession, dialect: Dialect, params: unknown): Promise<Reply> {
    const limited = auth.takeRate();
    if (limited) return { error: limited };
    const registry = this.#host.registry;
    let resource: RegisteredResource | undefined;
    let token: string;
    let expiresIn: number | undefined;
    if (dialect === "official") {
      const p = AuthenticateParamsOfficialSchema.safeParse(params);
      if (!p.success) return invalidParams(p.error);
      resource = registry.byResource(p.data.resource);
      if (!resource) {
        // A resource an MCP server of a subscribed session advertised (McpServerAuthRequiredState.resource).
        const viaMcp = await this.#host.mcp?.authenticate(this, p.data);
        if (viaMcp) return viaMcp;
      }
      if (!resource)
        return invalid(
          AhpErrorCodes.InvalidParams,
          "Invalid params: resource is not one this host advertised.",
        );
      ({ token, expiresIn } = p.data);
      if (token === "") expiresIn = undefined;
    } else {
      const p = AuthenticateParamsSeedSchema.safeParse(params);
      if (!p.success) return invalidParams(p.error);
      resource = registry.bySchemeId(p.data.schemeId);
      if (!resource)
        return invalid(
          AhpErrorCodes.InvalidParams,
          "Invalid params: schemeId is not one this host advertised.",
        );
      token = p.data.token;
    }
    const outcome = await auth.authenticate(resource, token, expiresIn);
    if (!outcome.ok) return { error: outcome.error };
    this.#keepOwnedSubscriptions(auth, "owner_changed");
    if (outcome.announce) {
      const announce = outcome.announce;
      // After the response, which is sent once this promise settles.
      setImmediate(() => this.#send(announce));
    }
    return { result: dialect === "seed" ? { authenticated: token !== "" } : {} };
  }

  async #notification(method: string, params: unknown): Promise<void> {
    // Session subscriptions are kept for the MCP bridge's `action` notifications; `dispatchAction` targets state
    // this host does not hold.
    if (method === AhpMethods.unsubscribe) {
      const p = SubscribeParamsSchema.safeParse(params);
      if (p.success) this.#subscriptions.delete(p.data.channel);
      return;
    }
    if (method === AhpMethods.dispatchAction) return;
    if (method !== AhpMethods.setAuthToken || this.#dialect !== "seed" || !this.#auth) {
      this.#log.debug("ahp.notification_ignored", { method: clip(method) });
      return;
    }
    if (!this.#warnedSetAuthToken) {
      this.#warnedSetAuthToken = true;
      this.#log.warn("ahp.deprecated_set_auth_token", {
        message:
          "setAuthToken is deprecated and will be removed in the next protocol version; use authenticate.",
      });
    }
    const p = SetAuthTokenParamsSchema.safeParse(params);
    if (!p.success || this.#auth.takeRate()) return; // fire-and-forget: nothing to answer
    const registry = this.#host.registry;
    const targets = p.data.schemeId
      ? [registry.bySchemeId(p.data.schemeId)].filter((r) => r !== undefined)
      : registry.all();
    // The old model fanned one token out to every provider; audience-bound tokens verify for one resource only.
    for (const resource of targets) {
      const outcome = await this.#auth.authenticate(resource, p.data.token, undefined);
      if (outcome.ok && outcome.announce) this.#send(outcome.announce);
    }
  }

  #answer(id: JsonRpcId | null, reply: Reply): void {
    this.#send({ jsonrpc: "2.0", id, ...reply });
  }

  #send(message: Notification | Record<string, unknown>): void {
    const framed =
      "method" in message && !("jsonrpc" in message) ? { jsonrpc: "2.0", ...message } : message;
    this.#peer.send(framed);
  }
}
