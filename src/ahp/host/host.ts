/**
 * `createAhpHost`: the builder an AHP host author uses. Agents register the resources they need, commands declare
 * what they require, `listen` serves both dialects on one WebSocket endpoint.
 *
 * @example
 * ```ts
 * const host = createAhpHost({ logger })
 *   .agent({ provider: "alpha", displayName: "Alpha", resources: [{ resource: "https://alpha.example.test/",
 *     authorizationServers: [issuer], scopesSupported: ["read"] }] })
 *   .command("alpha/run", { requires: ["https://alpha.example.test/"], scopes: ["read"] }, (params, ctx) => ({ ok: true }));
 * const running = await host.listen({ port: 0 });
 * ```
 */

import { type Logger, silentLogger } from "../../core/log.ts";
import { OFFICIAL_SUPPORTED_PROTOCOL_VERSIONS, parseBaselines } from "../version.ts";
import { ROOT_CHANNEL } from "../wire.ts";
import type { AhpConnection } from "./connection.ts";
import { isReservedMethod } from "./connection.ts";
import type { CommandEntry, CommandHandler, CommandOptions, HostContext } from "./context.ts";
import { McpBridge, type SessionMcpServers } from "./mcp/index.ts";
import type { RateLimitOptions } from "./rate-limit.ts";
import { type AgentSpec, ResourceRegistry } from "./resources.ts";
import { type ListenOptions, type RunningAhpHost, serve } from "./server.ts";
import {
  SessionCatalog,
  type SessionCatalogOptions,
  type SessionEvent,
  sessionCommands,
} from "./sessions.ts";
import { createResourceVerifier, type VerifierChoice } from "./verify.ts";

export interface AhpHostOptions {
  /** Default `{kind:"jwt"}`: RFC 9068 with `aud` = the resource, issuer = its first authorization server. */
  verifier?: VerifierChoice;
  /**
   * Re-verify a stored token before each gated command, so a revoked token is noticed and announced. Default:
   * on for introspection and custom verifiers, off for JWTs (nothing to ask: a JWT is valid until `exp`).
   */
  reverifyOnUse?: boolean;
  logger?: Logger;
  /**
   * Official AHP baselines this host accepts: any offered version in the caret range of one (npm caret: `^0.9.0` is
   * >=0.9.0 <0.10.0). Default the official `SUPPORTED_PROTOCOL_VERSIONS`, `["1.0.0", "0.9.0"]`.
   */
  protocolVersions?: readonly string[];
  /** `authenticate` (and `setAuthToken`) calls per connection. Default burst 10, 2 per second. */
  rateLimit?: RateLimitOptions;
  /** Messages above this are answered with `-32600`. Default 64 KiB. */
  maxMessageBytes?: number;
  serverInfo?: { name: string; version?: string };
  /** The seed's `resourceMetadata.resource`. Default the listening URL. */
  resource?: string;
  now?: () => number;
}

export interface AhpHost {
  agent(spec: AgentSpec): AhpHost;
  /**
   * Serves the official session commands (`createSession`, `listSessions`, `disposeSession`, `reconnect`, and
   * `subscribe` to `ahp-session:` channels), each gated by the protected resources of the agent it touches.
   */
  sessions(options?: SessionCatalogOptions): AhpHost;
  command(name: string, options: CommandOptions, handler: CommandHandler): AhpHost;
  /**
   * The MCP servers this host uses for one session (needs `sessions()`): their auth state reaches the session's
   * subscribers as the official `McpServerState`, and a client's `authenticate` for a server's resource is taken.
   */
  mcpServers(session: string): SessionMcpServers;
  listen(options?: ListenOptions): Promise<RunningAhpHost>;
}

export function createAhpHost(options: AhpHostOptions = {}): AhpHost {
  const registry = new ResourceRegistry();
  const commands = new Map<string, CommandEntry>();
  const connections = new Set<AhpConnection>();
  let url = "";
  const verifier = options.verifier ?? { kind: "jwt" };
  const baselines = [...(options.protocolVersions ?? OFFICIAL_SUPPORTED_PROTOCOL_VERSIONS)];
  const context: HostContext = {
    registry,
    commands,
    verify: createResourceVerifier(verifier),
    logger: options.logger ?? silentLogger,
    rateLimit: options.rateLimit ?? {},
    protocolVersions: { text: baselines, parsed: parseBaselines(baselines) },
    maxMessageBytes: options.maxMessageBytes ?? 64 * 1024,
    serverInfo: options.serverInfo ?? { name: "agentauth-ahp-host" },
    hostResource: () => options.resource ?? url,
    reverifyOnUse:
      options.reverifyOnUse ??
      (typeof verifier === "function" || verifier.kind === "introspection"),
    now: options.now ?? Date.now,
  };
  const mcp = new McpBridge({
    subscribers: () => connections,
    sessions: () => context.sessions,
    logger: context.logger,
    now: context.now,
  });
  context.mcp = mcp;

  const host: AhpHost = {
    agent(spec) {
      const added = registry.addAgent(spec);
      for (const connection of connections)
        for (const resource of added) connection.resourceAdded(resource);
      return host;
    },
    sessions(sessionOptions = {}) {
      if (context.sessions) throw new Error("the session commands are already served");
      const catalog = new SessionCatalog(registry, { now: context.now, ...sessionOptions });
      context.sessions = catalog;
      const announce = (event: SessionEvent) => {
        const notification =
          event.kind === "added"
            ? {
                method: "root/sessionAdded",
                params: { channel: ROOT_CHANNEL, summary: event.summary },
              }
            : {
                method: "root/sessionRemoved",
                params: { channel: ROOT_CHANNEL, session: event.session },
              };
        for (const connection of connections) connection.announce(event.resources, notification);
        if (event.kind === "removed") {
          mcp.disposeSession(event.session).catch((error: unknown) => {
            context.logger.warn("ahp.mcp_dispose_failed", { error });
          });
        }
      };
      for (const [name, entry] of sessionCommands(registry, catalog, announce)) {
        if (commands.has(name)) throw new Error(`command '${name}' is already registered`);
        commands.set(name, entry);
      }
      return host;
    },
    command(name, commandOptions, handler) {
      if (isReservedMethod(name))
        throw new Error(`'${name}' is an AHP method the host serves itself`);
      if (commands.has(name)) throw new Error(`command '${name}' is already registered`);
      const requires = commandOptions.requires;
      if (Array.isArray(requires)) {
        for (const r of requires) {
          if (!registry.byResource(r))
            throw new Error(`command '${name}' requires '${r}': register its agent first`);
        }
      }
      commands.set(name, { options: commandOptions, handler });
      return host;
    },
    mcpServers(session) {
      return mcp.serversOf(session);
    },
    async listen(listenOptions = {}) {
      const running = await serve(context, listenOptions, {
        onConnection: (c) => connections.add(c),
        onClose: (c) => connections.delete(c),
      });
      url = running.url;
      return {
        ...running,
        close: async () => {
          await mcp.close();
          await running.close();
        },
      };
    },
  };
  return host;
}
