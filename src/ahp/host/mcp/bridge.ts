/**
 * The host's MCP servers, per session: the host author adds them (`host.mcpServers(session).add({name, url})`), the
 * bridge tells the session's subscribers their state in the official shape (`action` notifications carrying
 * `session/customizationUpdated` / `session/mcpServerStateChanged`, official dialect only: the seed draft has no
 * session channels), and routes `authenticate` for a resource an MCP server advertised to the servers it belongs to.
 *
 * "Advertised" is per connection: a resource counts only for a connection subscribed to a session whose MCP server
 * asked for it (it saw `McpServerAuthRequiredState.resource`). With `serverName` (AHP PR #439, branch-only) the token
 * goes to that server only; without it, to every server in those sessions advertising the resource.
 */

import { peerText } from "../../../core/display.ts";
import type { Logger } from "../../../core/log.ts";
import { canonicalMcpServerUrl, McpServerUrlError } from "../../../mcp/client/index.ts";
import {
  type ActionEnvelope,
  AhpErrorCodes,
  type AuthenticateParamsOfficial,
  type SessionMcpAction,
} from "../../wire.ts";
import type { Notification } from "../dialect.ts";
import { invalid, type Reply } from "../replies.ts";
import type { SessionCatalog } from "../sessions.ts";
import { McpBridgeError } from "./errors.ts";
import { HostMcpServer, type McpServerSpec } from "./server.ts";
import { actionNotification, customizationRemoved, customizationUpdated } from "./state.ts";

/** What the bridge needs of a connection: its id, its session subscriptions, a way to send it a notification. */
export interface McpSubscriber {
  readonly id: string;
  isSubscribed(channel: string): boolean;
  /** Sends `notification` if this connection speaks the official dialect and is subscribed to `channel`. */
  deliver(channel: string, notification: Notification): void;
}

/** One session's MCP servers, as the host author handles them. */
export interface SessionMcpServers {
  /** Adds a server and connects once; resolves when its first state (ready, authRequired, error) is known. */
  add(spec: McpServerSpec): Promise<HostMcpServer>;
  get(name: string): HostMcpServer | undefined;
  list(): HostMcpServer[];
  remove(name: string): Promise<void>;
}

export interface McpBridgeDeps {
  subscribers(): Iterable<McpSubscriber>;
  sessions(): SessionCatalog | undefined;
  logger: Logger;
  now: () => number;
}

/** RFC 6750 §2.1 `b64token`: what an `Authorization: Bearer` header can carry. */
const B64TOKEN = /^[A-Za-z0-9\-._~+/]+=*$/;

/** Servers per session is bounded: each is a live client connection the host keeps. */
const MAX_SERVERS_PER_SESSION = 64;
/** Removals remembered per session for a reconnect's replay (older ones: the client keeps a `stopped` entry). */
const MAX_REMOVALS_KEPT = 256;

export class McpBridge {
  readonly #deps: McpBridgeDeps;
  readonly #bySession = new Map<string, Map<string, HostMcpServer>>();
  /** The `serverSeq` of each server's last action, so a reconnect replays what a client missed (no action log). */
  readonly #changedAt = new Map<string, number>();
  /** Servers removed from a session (id, `serverSeq` of the removal), for the same replay. */
  readonly #removed = new Map<string, Array<{ id: string; seq: number }>>();
  #seq = 0;
  #nextId = 1;

  constructor(deps: McpBridgeDeps) {
    this.#deps = deps;
  }

  /** The latest `serverSeq` this bridge stamped (a session snapshot's `fromSeq`). */
  get serverSeq(): number {
    return this.#seq;
  }

  serversOf(session: string): SessionMcpServers {
    const catalog = this.#deps.sessions();
    if (!catalog) {
      throw new McpBridgeError(
        "sessions_not_served",
        "MCP servers belong to sessions: call host.sessions() before host.mcpServers().",
      );
    }
    const gone = () =>
      new McpBridgeError(
        "session_not_found",
        "No such session on this host; MCP servers can be added to sessions clients created.",
      );
    if (!catalog.get(session)) throw gone();
    const servers = () => {
      let map = this.#bySession.get(session);
      if (!map) {
        map = new Map();
        this.#bySession.set(session, map);
      }
      return map;
    };
    return {
      add: async (spec) => {
        // A handle may outlive its session: a server added to a disposed one would never be closed.
        if (!catalog.get(session)) throw gone();
        const map = servers();
        const name = peerText(spec.name, { max: 100 });
        if (name === "")
          throw new McpBridgeError("invalid_server", "An MCP server needs a non-empty name.");
        if (map.has(name)) {
          throw new McpBridgeError(
            "server_name_taken",
            `The session already has an MCP server named '${name}'; choose another name.`,
          );
        }
        if (map.size >= MAX_SERVERS_PER_SESSION) {
          throw new McpBridgeError(
            "invalid_server",
            `A session holds at most ${MAX_SERVERS_PER_SESSION} MCP servers.`,
          );
        }
        const id = `mcp-${this.#nextId++}`;
        const server = new HostMcpServer(spec, name, canonicalUrl(spec.url), {
          id,
          emit: (action) => {
            this.#changedAt.set(id, this.#emit(session, action));
          },
          logger: this.#deps.logger.child({ session, mcpServer: name }),
          now: this.#deps.now,
        });
        map.set(name, server);
        try {
          await server.start();
        } catch (error) {
          map.delete(name);
          throw error;
        }
        if (this.#bySession.get(session) !== map) {
          // Disposed while it started (disposeSession closed it with the rest).
          await server.close();
          throw gone();
        }
        return server;
      },
      get: (name) => this.#bySession.get(session)?.get(name),
      list: () => [...(this.#bySession.get(session)?.values() ?? [])],
      remove: async (name) => {
        const server = this.#bySession.get(session)?.get(name);
        if (!server) return;
        await server.close();
        if (this.#bySession.get(session)?.get(name) !== server) return;
        this.#bySession.get(session)?.delete(name);
        this.#changedAt.delete(server.id);
        // The snapshot no longer lists it, so the action stream says so too (clients drop the entry).
        const seq = this.#emit(session, customizationRemoved(server.id));
        const removed = this.#removed.get(session) ?? [];
        removed.push({ id: server.id, seq });
        this.#removed.set(session, removed.slice(-MAX_REMOVALS_KEPT));
      },
    };
  }

  /** The MCP entries of a session's state snapshot (`SessionState.customizations`). */
  customizationsOf(session: string) {
    return [...(this.#bySession.get(session)?.values() ?? [])].map((s) => s.customization());
  }

  /**
   * `authenticate` for a resource no agent registered: the reply when an MCP server advertised it to this
   * connection, undefined otherwise (the caller answers "not advertised").
   */
  async authenticate(
    subscriber: McpSubscriber,
    params: AuthenticateParamsOfficial,
  ): Promise<Reply | undefined> {
    if (params.token === "" && params.serverName === undefined) {
      // Revoking is this connection's right wherever its token went, even after it unsubscribed.
      const holding = this.#holding(subscriber, params.resource);
      for (const server of holding) server.dropToken(subscriber.id);
      if (holding.length > 0) return { result: {} };
    }
    const advertising = this.#advertising(subscriber, params.resource);
    if (advertising.length === 0) return undefined;
    const targets =
      params.serverName === undefined
        ? advertising
        : advertising.filter((s) => s.name === params.serverName);
    if (targets.length === 0) {
      return invalid(
        AhpErrorCodes.InvalidParams,
        "Invalid params: serverName names no MCP server that advertised this resource.",
      );
    }
    if (params.token === "") {
      // "revokes this connection's credential": a token another connection pushed is not this one's to drop.
      for (const server of targets) server.dropToken(subscriber.id);
      return { result: {} };
    }
    if (!B64TOKEN.test(params.token)) {
      // It goes into an `Authorization` header: anything else fails there, in an error message that quotes it.
      return invalid(
        AhpErrorCodes.InvalidParams,
        "Invalid params: token is not a bearer token (RFC 6750 b64token: letters, digits, - . _ ~ + / and trailing =); check for a trailing newline.",
      );
    }
    const states = await Promise.all(
      targets.map((s) => s.acceptToken(params.token, subscriber.id, params.expiresIn)),
    );
    const refused = states.flatMap((state, i) =>
      state.kind === "authRequired" ? [{ server: targets[i], state }] : [],
    );
    const first = refused[0];
    if (first?.state.kind !== "authRequired") return { result: {} };
    return invalid(
      AhpErrorCodes.AuthRequired,
      `Authentication required for the MCP server '${first.server?.name}' (${first.state.reason}): it did not accept the token.`,
      { resources: [first.state.resource] },
    );
  }

  /** Tokens a connection pushed are forgotten with it (AHP: each client authenticates for itself). */
  connectionClosed(connectionId: string): void {
    for (const map of this.#bySession.values())
      for (const server of map.values()) server.dropToken(connectionId);
  }

  /**
   * What a client that reconnects (`lastSeenServerSeq` = `since`) missed of a session's MCP servers, as envelopes
   * stamped after `since`: each changed server's current entry as an upsert (`session/customizationUpdated` replaces
   * the entry, so the client's reduced state ends where the host's is), and the removals.
   */
  replay(session: string, since: number): ActionEnvelope[] {
    const out: ActionEnvelope[] = [];
    for (const server of this.#bySession.get(session)?.values() ?? []) {
      const seq = this.#changedAt.get(server.id) ?? 0;
      if (seq > since)
        out.push({
          channel: session,
          action: customizationUpdated(server.customization()),
          serverSeq: seq,
        });
    }
    for (const { id, seq } of this.#removed.get(session) ?? [])
      if (seq > since)
        out.push({ channel: session, action: customizationRemoved(id), serverSeq: seq });
    return out.sort((a, b) => a.serverSeq - b.serverSeq);
  }

  async disposeSession(session: string): Promise<void> {
    const map = this.#bySession.get(session);
    this.#bySession.delete(session);
    this.#removed.delete(session);
    for (const server of map?.values() ?? []) this.#changedAt.delete(server.id);
    await Promise.all([...(map?.values() ?? [])].map((s) => s.close()));
  }

  async close(): Promise<void> {
    await Promise.all([...this.#bySession.keys()].map((s) => this.disposeSession(s)));
  }

  #holding(subscriber: McpSubscriber, resource: string): HostMcpServer[] {
    return [...this.#bySession.values()].flatMap((map) =>
      [...map.values()].filter(
        (s) => s.advertisedResource === resource && s.hasTokenFrom(subscriber.id),
      ),
    );
  }

  #advertising(subscriber: McpSubscriber, resource: string): HostMcpServer[] {
    const out: HostMcpServer[] = [];
    for (const [session, map] of this.#bySession) {
      if (!subscriber.isSubscribed(session)) continue;
      for (const server of map.values())
        if (server.advertisedResource === resource) out.push(server);
    }
    return out;
  }

  #emit(session: string, action: SessionMcpAction): number {
    const seq = ++this.#seq;
    const notification = actionNotification(session, action, seq);
    for (const subscriber of this.#deps.subscribers()) subscriber.deliver(session, notification);
    return seq;
  }
}

/**
 * The server's URL as its RFC 8707 resource, through the one MCP server URL check (as the MCP client keys it):
 * absolute https (http only on loopback: the pushed token would otherwise cross the network unencrypted), no
 * credentials (the token comes from the client's authenticate), no query (RFC 8707 §2; on an MCP URL it is usually
 * a key, and this URL reaches every subscriber as the customization's `uri` and the advertised `resource`), no
 * fragment. Never echoed.
 */
function canonicalUrl(input: string | URL): string {
  try {
    return canonicalMcpServerUrl(input, { subject: "An MCP server URL" }).href;
  } catch (error) {
    if (!(error instanceof McpServerUrlError)) throw error;
    throw new McpBridgeError("invalid_server", error.message);
  }
}
