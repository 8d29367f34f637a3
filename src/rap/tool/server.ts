/**
 * The RAP tool server: routing for discovery (`/.well-known/rap-toolset`), invocation (`/invoke`), thread closure
 * and call cancellation (always 200, empty), and the tool's own OAuth redirect endpoint (`/oauth/callback`).
 * Everything protocol-shaped lives in the modules it wires together; this file only speaks HTTP.
 */

import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { type Logger, silentLogger } from "../../core/log.ts";
import { isTemporarilyUnavailable } from "../../db/index.ts";
import type { LogoutResult } from "../../oauth/index.ts";
import { CANCEL_TOOL_CALL_PATH, CLOSE_THREAD_PATH, TOOLSET_PATH, type Toolset } from "../wire.ts";
import { type Base, baseUrl, isLoopbackHost, secure } from "./base-url.ts";
import { CallRegistry } from "./calls.ts";
import { DEFAULT_OPERATION_TIMEOUT_MS } from "./deadline.ts";
import { ToolConfigError } from "./errors.ts";
import { hostRefusal, InvocationGate, loopbackHosts, signedHosts } from "./guard.ts";
import { json, page } from "./http-reply.ts";
import { createIntake } from "./intake.ts";
import { secureCallbackUrl } from "./invocation.ts";
import {
  ConsentLinks,
  createOAuthEndpoints,
  OAUTH_CALLBACK_PATH,
  OAUTH_START_PATH,
} from "./oauth-endpoints.ts";
import { ProviderAuth } from "./oauth-flow.ts";
import type { ToolServerOptions } from "./options.ts";
import { OutboxPump } from "./outbox-pump.ts";
import { unavailablePage } from "./pages.ts";
import { PendingAuthorizations } from "./pending-calls.ts";
import { toolProviders } from "./providers.ts";
import { memoryReplayLedger } from "./replay-ledger.ts";
import { createRetryPool, DEFAULT_MAX_PENDING_DELIVERIES } from "./retry-pool.ts";
import { CallRunner } from "./runner.ts";
import { createRuntimeRequests, INVOKE_PATH } from "./runtime-requests.ts";
import type { ConsentStore } from "./state.ts";
import { Takeover } from "./takeover.ts";
import { buildToolset, compileOperations } from "./toolset.ts";
import { WorkQueue } from "./work-queue.ts";

export { INVOKE_PATH, OAUTH_CALLBACK_PATH };

const RETRY_SOON = { "retry-after": "1" };
export const DEFAULT_AUTHORIZATION_TIMEOUT_MS = 10 * 60_000;

export interface ToolServer {
  /** The request listener, for `node:http` (or any server that speaks its req/res). Needs a base URL. */
  handler: (req: IncomingMessage, res: ServerResponse) => void;
  /** Listens on `host` (default 127.0.0.1) and `port` (default: a free one). */
  listen(options?: { port?: number; host?: string }): Promise<ListeningToolServer>;
  /** The validated toolset document (throws until the base URL is known). */
  toolset(): Toolset;
  /** Resolves once every callback started so far has been delivered or given up. */
  settled(): Promise<void>;
  /** Cancels every running call and pending authorization; nothing more is sent. */
  shutdown(): void;
  /**
   * Removes `userId`'s connection to `provider` (a key of `providers`): revoked at the provider with the tool's
   * client, then deleted from the store; a failed revocation keeps it (`error` says why). RAP has no message for
   * this: call it from an operation ("disconnect GitHub") or the tool's own admin surface.
   */
  disconnect(userId: string, provider: string): Promise<LogoutResult>;
}

export interface ListeningToolServer {
  /** The base URL: `publicBaseUrl` when given, else the listening address. */
  url: string;
  /** The port it listens on (behind a load balancer, what the balancer forwards to). */
  port: number;
  close(): Promise<void>;
}

/**
 * Builds a RAP tool server from operations. Every configuration problem (an invalid inputSchema, an unknown
 * provider, an insecure issuer or redirect URL) throws `ToolConfigError` here, before anything is served.
 *
 * @example
 * const tool = createToolServer({
 *   toolset: { name: "notes" },
 *   operations: [{ name: "echo", description: "Echo", inputSchema: { type: "object" },
 *     handler: async ({ arguments: args }) => JSON.stringify(args) }],
 * });
 * const { url } = await tool.listen({ port: 8080 });
 */
export function createToolServer(options: ToolServerOptions): ToolServer {
  const logger: Logger = options.logger ?? silentLogger;
  const providers = options.providers ?? {};
  const operations = compileOperations(options.operations, providers);
  const needsAuth = [...operations.values()].some((op) => op.definition.requiresAuth !== undefined);
  if (needsAuth && !options.store) {
    throw new ToolConfigError(
      "store_missing",
      "Operations that require OAuth need a credential `store` to keep the users' tokens.",
    );
  }
  // Presets and discovered servers alike, checked here (an insecure issuer, a preset without a browser flow).
  const providerTable = toolProviders(providers, options.discovery);
  const timeoutMs = options.authorizationTimeoutMs ?? DEFAULT_AUTHORIZATION_TIMEOUT_MS;
  if (!(timeoutMs > 0)) {
    throw new ToolConfigError(
      "timeout_invalid",
      "authorizationTimeoutMs must be a positive number.",
    );
  }

  let base: Base | undefined;
  let toolset: Toolset | undefined;
  const setBase = (value: string) => {
    const url = baseUrl(value);
    // The redirect URI receives authorization codes: https, or plain http on loopback only (RFC 8252 §8.3).
    if (needsAuth) secure(new URL(`${url.href}${OAUTH_CALLBACK_PATH}`), "OAuth redirect URI");
    toolset = buildToolset(options.toolset, operations, `${url.href}${INVOKE_PATH}`);
    base = url;
  };
  if (options.publicBaseUrl !== undefined) setBase(options.publicBaseUrl);

  const calls = new CallRegistry(options.maxActiveCalls ?? 1000);
  const state = options.state;
  const pending = state
    ? new PendingAuthorizations(timeoutMs, state.pending, true)
    : new PendingAuthorizations(timeoutMs, options.pending);
  const auth =
    needsAuth && options.store
      ? new ProviderAuth({
          providers: providerTable,
          store: options.store,
          pending,
          redirectUri: () => `${base?.href}${OAUTH_CALLBACK_PATH}`,
          discovery: options.discovery,
          logger,
        })
      : undefined;
  // Processing after the ack, bounded (see work-queue.ts); `workConcurrency` tunes it.
  const work = new WorkQueue(options.workConcurrency ?? 16);
  const stopping = new AbortController();
  const operationTimeoutMs = options.operationTimeoutMs ?? DEFAULT_OPERATION_TIMEOUT_MS;
  if (!(operationTimeoutMs > 0)) {
    throw new ToolConfigError("timeout_invalid", "operationTimeoutMs must be a positive number.");
  }
  const delivery = {
    ...options.delivery,
    maxTotalMs: options.deliveryRetryTotalMs ?? options.delivery?.maxTotalMs,
  };
  const pump = state
    ? new OutboxPump({ outbox: state.outbox, delivery, logger, ...options.outboxTuning })
    : undefined;
  const runner = new CallRunner({
    outbox: state?.outbox,
    onQueued: () => pump?.kick(),
    operations,
    calls,
    auth,
    authorizationTimeoutMs: timeoutMs,
    operationTimeoutMs,
    delivery,
    ledger: state?.calls,
    stopped: stopping.signal,
    // auth_url leads to the tool's consent page first (issue 8 §1.2), not straight to the provider.
    consentLink: async (call, provider, authorizationUrl, browserSecret) => {
      const described = auth?.describe(provider);
      const id = await consents.create({
        toolName: options.toolset.name,
        operation: call.spec.operation,
        provider,
        providerName: described?.name ?? provider,
        providerHost: authorizationUrl.host,
        // With what the URL itself asks for: a step-up (insufficient_scope) asks for more than the configuration.
        scopes: [
          ...new Set([
            ...(described?.scopes ?? []),
            ...(authorizationUrl.searchParams.get("scope") ?? "").split(/[\s,]+/).filter(Boolean),
          ]),
        ],
        userId: call.spec.userId ?? "",
        authorizationUrl,
        state: authorizationUrl.searchParams.get("state") ?? "",
        browserBinding: browserSecret,
        groupId: call.spec.groupId,
        id: call.spec.id,
        attempt: call.attempt,
      });
      return new URL(`${(base as Base).href}${OAUTH_START_PATH}?consent=${id}`);
    },
    retryPool: createRetryPool(options.maxPendingDeliveries ?? DEFAULT_MAX_PENDING_DELIVERIES),
    logger,
  });
  const intake = createIntake({ operations, calls, runner, work, ledger: state?.calls, logger });
  // With a shared ledger, the calls and claims of instances that died are ended or released by the live ones.
  const takeover =
    state?.calls && pump
      ? new Takeover({
          ledger: state.calls,
          outbox: state.outbox,
          logger,
          onQueued: () => pump.kick(),
          options: options.takeover,
        })
      : undefined;
  // A lost and regained database session may have left claims this instance no longer tracks.
  state?.presence?.onRegained(() => pump?.lostTrack());
  // Shared when the state is (a link made by one instance works at every other); in memory otherwise.
  const consents: ConsentStore = state
    ? state.consents(timeoutMs)
    : inMemory(new ConsentLinks(timeoutMs, options.maxActiveCalls ?? 1000));
  const endpoints = auth
    ? createOAuthEndpoints({
        auth,
        calls,
        pending,
        consents,
        cancelled: state
          ? (groupId, id) => state.cancellations.isCancelled(groupId, id)
          : undefined,
        ledger: state?.calls,
        runner: () => runner,
        base: () => base as Base,
        logger,
      })
    : undefined;
  const callbackUrlAllowed = options.callbackUrlAllowed ?? secureCallbackUrl;
  // Accepted HMAC signatures: durable where the tool's state is (issue 20 §1.3), else this process's memory.
  const replay = options.replay ?? state?.replay ?? memoryReplayLedger();
  if (options.invocationAuth?.scheme === "hmac-sha256" && !replay.durable) {
    logger.warn("rap.tool.replay_in_memory", {
      why: "a signed request captured before a restart, or sent to another instance, would be accepted again there",
      fix: "pass `replay: openSqliteReplayLedger(path)` or a shared `state`",
    });
  }
  const gate = options.invocationAuth
    ? new InvocationGate(options.invocationAuth, replay, logger)
    : undefined;
  // Set by listen() on loopback; `allowedHosts` alone turns the check on for any other server.
  let hosts: Set<string> | undefined = options.allowedHosts
    ? new Set(options.allowedHosts.map((h) => h.toLowerCase()))
    : undefined;

  /** The host names an HMAC signature may cover (see signedHosts). */
  function hostOf(req: IncomingMessage): string[] {
    const publicHost = base ? new URL(base.href).host : "";
    const own =
      hosts ?? new Set([publicHost, ...(options.allowedHosts ?? []).map((h) => h.toLowerCase())]);
    return signedHosts(own, publicHost, req.headers.host);
  }

  const { invoke, cancel, refuse } = createRuntimeRequests({
    gate,
    hostOf,
    calls,
    intake,
    callbackUrlAllowed,
    // Remembered while a sign-in for the call could still come back (its pending row lives as long).
    shareCancellation: state
      ? (groupId, id) => state.cancellations.cancel(groupId, id, timeoutMs + 60_000)
      : undefined,
    logger,
  });

  async function route(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const misdirected = hostRefusal(hosts, req.headers.host);
    if (misdirected) return refuse(res, misdirected, "host");
    const url = URL.parse(req.url ?? "/", "http://tool.invalid");
    if (!base || !toolset) {
      return json(res, 503, {
        error: "not_ready",
        message: "Set publicBaseUrl or call listen() first.",
      });
    }
    const path = url?.pathname.startsWith(base.path)
      ? url.pathname.slice(base.path.length)
      : undefined;
    const method = req.method ?? "GET";
    const allow = (methods: string) => {
      if (methods.split(",").includes(method)) return true;
      json(res, 405, { error: "method_not_allowed" }, true, { allow: methods });
      return false;
    };
    switch (path) {
      case TOOLSET_PATH:
        if (allow("GET")) json(res, 200, toolset);
        return;
      case INVOKE_PATH:
        if (allow("POST")) await invoke(req, res);
        return;
      case CLOSE_THREAD_PATH:
        if (allow("POST")) await cancel(req, res, true);
        return;
      case CANCEL_TOOL_CALL_PATH:
        if (allow("POST")) await cancel(req, res, false);
        return;
      case OAUTH_CALLBACK_PATH:
        if (endpoints && url && allow("GET")) return endpoints.redirect(req, url, res);
        break;
      case OAUTH_START_PATH:
        if (endpoints && url && allow("GET,POST")) {
          return method === "GET" ? endpoints.show(url, res) : endpoints.decide(req, res);
        }
        break;
    }
    json(res, 404, { error: "not_found" }, true);
  }

  const handler = (req: IncomingMessage, res: ServerResponse) => {
    route(req, res).catch((error) => {
      logger.error("rap.http.failed", { error });
      if (res.headersSent) return res.destroy();
      // The shared state's database is down or saturated: "not now", so 503 with Retry-After, a page for the
      // browser-facing endpoints, JSON for the runtime's (issue 22 §3).
      if (!isTemporarilyUnavailable(error))
        return json(res, 500, { error: "internal_error" }, true);
      if (req.url?.includes("/oauth/")) return page(res, unavailablePage(), RETRY_SOON);
      json(res, 503, { error: "state_unavailable" }, true, RETRY_SOON);
    });
  };

  const shutdown = () => {
    calls.cancelAll();
    stopping.abort();
    pump?.stop();
    takeover?.stop();
  };
  // Messages left by an earlier run (or another instance that died) are delivered from the start.
  pump?.start();
  takeover?.start();

  return {
    handler,
    shutdown,
    async disconnect(userId, provider) {
      if (!auth || !providerTable.has(provider)) {
        throw new ToolConfigError(
          "provider_unknown",
          `The provider "${provider}" is not one this tool's operations use, so nothing can be disconnected.`,
        );
      }
      return auth.disconnect(provider, userId);
    },
    settled: async () => {
      await runner.settled();
      await pump?.idle();
    },
    toolset: () => {
      if (!toolset) throw new ToolConfigError("not_ready", "The base URL is not known yet.");
      return toolset;
    },
    async listen(listenOptions = {}) {
      const host = listenOptions.host ?? "127.0.0.1";
      if (!base && (host === "0.0.0.0" || host === "::")) {
        throw new ToolConfigError(
          "public_base_url_missing",
          "Listening on every interface needs publicBaseUrl: the toolset and the redirect URI name it.",
        );
      }
      const server = createServer(handler);
      await new Promise<void>((resolve, reject) => {
        server.once("error", reject);
        server.listen(listenOptions.port ?? 0, host, () => resolve());
      });
      const { port } = server.address() as AddressInfo;
      if (isLoopbackHost(host)) {
        const extra = [...(options.allowedHosts ?? [])];
        if (base) extra.push(new URL(base.href).host);
        hosts = loopbackHosts(port, extra);
      }
      if (!base) {
        try {
          setBase(`http://${host.includes(":") ? `[${host}]` : host}:${port}`);
        } catch (error) {
          server.close();
          throw error;
        }
      }
      logger.info("rap.tool.listening", { url: base?.href, toolset: toolset?.name });
      return {
        url: (base as Base).href,
        port,
        close: () =>
          new Promise<void>((resolve) => {
            shutdown();
            server.close(() => resolve());
            server.closeAllConnections();
          }),
      };
    },
  };
}

/** The in-memory consent links behind the same (async) contract as the shared ones. */
function inMemory(links: ConsentLinks): ConsentStore {
  return {
    create: async (request) => links.create(request),
    peek: async (id) => links.peek(id),
    take: async (id, field, cookie) => links.take(id, field, cookie),
  };
}
