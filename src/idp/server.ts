/** Runs the embedded authorization server (oidc-provider, strict) on loopback, with counters tests can read. */

import { randomBytes, timingSafeEqual } from "node:crypto";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import Provider, { type ClientMetadata } from "oidc-provider";
import { AgentAuthError } from "../core/errors.ts";
import type { Logger } from "../core/log.ts";
import { silentLogger } from "../core/log.ts";
import { emulateBrowser, shouldEmulate } from "./auto-approve.ts";
import {
  type ClientIdMetadataDocumentOptions,
  clientMetadataDocumentResolver,
  withClientMetadataDocuments,
} from "./client-metadata-documents.ts";
import { buildConfiguration, type IdpRoutes, resourceServerInfo, resourceTtls } from "./config.ts";
import {
  generateKeys,
  loadOrCreateKeys,
  loadState,
  type StateWriter,
  stateWriter,
} from "./data-dir.ts";
import { defaultScope } from "./default-scope.ts";
import { devicePolling } from "./device-polling.ts";
import {
  type IdJagOptions,
  registerIdJagExchange,
  registerJwtBearerGrant,
  type TrustedAssertionIssuer,
} from "./grants/index.ts";
import { interactionRoutes } from "./interactions.ts";
import { MemoryStorage, memoryAdapterFactory } from "./memory-adapter.ts";
import { DEMO_USERS, findDemoUser } from "./users.ts";

const MARKER_HEADER = "x-agentauth-emulated";

export interface IdpOptions {
  /** 0 (default) picks a free port. The server always binds 127.0.0.1. */
  port?: number;
  /** Every authorization and device-verification page signs in and consents as this demo user. */
  autoApproveAs?: string;
  clients?: ClientMetadata[];
  accessTokenTtlSeconds?: number;
  /**
   * Access token lifetimes for particular resources (RFC 8707 indicator → seconds, URLs compared normalized), e.g.
   * `{ "https://alpha.example.test/": 6 }` so a demo shows expiry and renewal; other resources keep the default.
   */
  resourceTokenTtlSeconds?: Record<string, number>;
  refreshTokenTtlSeconds?: number;
  deviceCodeTtlSeconds?: number;
  /** Resources that get opaque access tokens (for introspection) instead of RFC 9068 JWTs. */
  opaqueResources?: string[];
  /** The `interval` advertised in device authorization responses (RFC 8628 §3.2). Default 5. */
  deviceIntervalSeconds?: number;
  /** The minimum poll spacing enforced with `slow_down` (RFC 8628 §3.5). Default: the advertised interval. */
  deviceEnforcedIntervalSeconds?: number;
  /** A dynamically registered client (RFC 7591) unused this long is forgotten. Default 24 h. */
  registrationTtlSeconds?: number;
  /** At most this many registered clients are kept; the least recently used is evicted. Default 1,000. */
  maxRegistrations?: number;
  /**
   * Keep keys and state in this folder (made 0700 when missing): `idp-keys.json` (signing and cookie keys) and
   * `idp-state.json` (grants, refresh tokens, sessions, registrations), both 0600, the state saved at most
   * 200 ms after a change and on close(). A second start with the same folder and port keeps users signed in.
   * Unreadable files fail the start with `IdpStateError` (code `idp_state_unreadable`). Default: memory only.
   */
  dataDir?: string;
  /**
   * Act as a Client ID Metadata Document authorization server (MCP authorization 2026-07-28): a client_id that is
   * an https URL is fetched (5 KB, 2.5 s, no redirects, JSON), checked (client_id equals the URL, no secret, auth
   * method none, redirect_uris) and used; discovery says `client_id_metadata_document_supported`. Off by default.
   * `allowHttpLoopback` also accepts http://127.0.0.1 (and [::1], localhost) client_id URLs: tests and demos only.
   */
  clientIdMetadataDocuments?: ClientIdMetadataDocumentOptions;
  /** RFC 7591 dynamic registration. Default true; false plays a server that only knows pre-registered clients. */
  dynamicRegistration?: boolean;
  /** The login page lists the demo accounts and their passwords. Default false; demos and `idp serve` say true. */
  showDemoAccounts?: boolean;
  /**
   * Requests this handler takes (it returns true) never reach the authorization server: an MCP server of the
   * 2025-03-26 revision lives on its authorization server's origin. Tests and demos.
   */
  beside?: (req: IncomingMessage, res: ServerResponse) => boolean;
  /**
   * Endpoint paths other than oidc-provider's (`/auth`, `/token`, `/reg`), e.g. MCP 2025-03-26's defaults
   * `{ authorization: "/authorize", registration: "/register" }`.
   */
  routes?: IdpRoutes;
  /**
   * The RFC 7523 JWT bearer grant, for assertions from these issuers (workload identity; the ID-JAGs of
   * enterprise-managed authorization). Off by default. See src/idp/grants/jwt-bearer.ts.
   */
  jwtBearer?: { trust: TrustedAssertionIssuer[] };
  /**
   * RFC 8693 token exchange of this server's ID tokens for ID-JAGs, as an enterprise identity provider: the
   * authorization servers it may issue them for, and the client id named at each. Off by default.
   */
  idJag?: IdJagOptions;
  /** RFC 9449 §8: the token endpoint requires a server nonce in DPoP proofs (`use_dpop_nonce`). Default off. */
  dpopNonce?: boolean;
  logger?: Logger;
}

/** Token-endpoint errors kept in `stats.errors` (the most recent); the counters in `byGrant` count every one. */
export const MAX_ERROR_STATS = 1_000;

/** What the server holds in memory, for checking that it stays bounded. */
export interface IdpMemoryStats {
  /** Live adapter entries (tokens, codes, sessions, grants, registrations), expired ones swept first. */
  entries: number;
  /** Dynamically registered clients. */
  registrations: number;
  /** Rows of the adapter's lookup indexes (grant members, user codes, uids). */
  indexes: number;
  /** Device-flow poll clocks. */
  devicePolls: number;
  /** Entries in `stats.errors`. */
  errorStats: number;
}

export interface TokenEndpointStats {
  /** Requests that reached the token endpoint, by grant_type, and how each ended. */
  byGrant: Record<string, { success: number; error: number }>;
  /** Error codes the token endpoint answered with, in order. */
  errors: { grantType: string; error: string }[];
  slowDowns: number;
}

export interface RunningIdp {
  issuer: string;
  port: number;
  provider: Provider;
  stats: TokenEndpointStats;
  resetStats(): void;
  memory(): IdpMemoryStats;
  close(): Promise<void>;
}

export async function startIdp(options: IdpOptions = {}): Promise<RunningIdp> {
  const logger = options.logger ?? silentLogger;
  if (options.autoApproveAs && !findDemoUser(options.autoApproveAs)) {
    const known = DEMO_USERS.map((user) => user.sub).join(", ");
    throw new AgentAuthError(
      "idp_unknown_user",
      `Unknown demo user "${options.autoApproveAs}"; choose one of ${known}.`,
    );
  }
  // Checked before listening, so a bad option leaves no server behind.
  resourceTtls(options.resourceTokenTtlSeconds ?? {});
  const keys = options.dataDir ? await loadOrCreateKeys(options.dataDir) : await generateKeys();
  const server = createServer();
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(options.port ?? 0, "127.0.0.1", () => resolve());
  });
  const port = (server.address() as AddressInfo).port;
  const issuer = `http://127.0.0.1:${port}`;

  let writer: StateWriter | undefined;
  const storage = new MemoryStorage({
    registrationTtlSeconds: options.registrationTtlSeconds,
    maxRegistrations: options.maxRegistrations,
    onChange: () => writer?.schedule(),
  });
  if (options.dataDir) {
    const dir = options.dataDir;
    try {
      storage.restore(await loadState(dir, issuer, logger));
    } catch (error) {
      await new Promise((resolve) => server.close(resolve));
      throw error;
    }
    writer = stateWriter({ dir, logger, snapshot: () => ({ issuer, entries: storage.live() }) });
  }
  const provider = new Provider(
    issuer,
    buildConfiguration({
      signingKeys: keys.signingKeys,
      cookieKeys: keys.cookieKeys,
      clients: options.clients,
      accessTokenTtlSeconds: options.accessTokenTtlSeconds,
      resourceTokenTtlSeconds: options.resourceTokenTtlSeconds,
      refreshTokenTtlSeconds: options.refreshTokenTtlSeconds,
      deviceCodeTtlSeconds: options.deviceCodeTtlSeconds,
      opaqueResources: options.opaqueResources,
      adapter: options.clientIdMetadataDocuments
        ? withClientMetadataDocuments(
            memoryAdapterFactory(storage),
            clientMetadataDocumentResolver(options.clientIdMetadataDocuments),
          )
        : memoryAdapterFactory(storage),
      clientIdMetadataDocuments: options.clientIdMetadataDocuments !== undefined,
      dynamicRegistration: options.dynamicRegistration,
      routes: options.routes,
      dpopNonceSecret: options.dpopNonce ? randomBytes(32) : undefined,
    }),
  );
  const resourceServer = resourceServerInfo(options);
  if (options.jwtBearer) {
    registerJwtBearerGrant(provider, { issuer, trusted: options.jwtBearer.trust, resourceServer });
  }
  if (options.idJag) {
    registerIdJagExchange(provider, {
      ...options.idJag,
      issuer,
      signingKey: keys.signingKeys[0] as import("jose").JWK,
    });
  }

  const stats: TokenEndpointStats = { byGrant: {}, errors: [], slowDowns: 0 };
  const count = (grantType: string, outcome: "success" | "error") => {
    stats.byGrant[grantType] ??= { success: 0, error: 0 };
    stats.byGrant[grantType][outcome]++;
  };
  provider.on("grant.success", (ctx) => count(String(ctx.oidc.params?.grant_type), "success"));
  provider.on("grant.error", (ctx, error) => {
    const grantType = String(ctx.oidc?.params?.grant_type);
    count(grantType, "error");
    stats.errors.push({
      grantType,
      error: String((error as { error?: string }).error ?? error.name),
    });
    if (stats.errors.length > MAX_ERROR_STATS)
      stats.errors.splice(0, stats.errors.length - MAX_ERROR_STATS);
  });
  provider.on("server_error", (_ctx, error) => logger.error("idp.server_error", { error }));

  const polling = devicePolling({
    advertisedSeconds: options.deviceIntervalSeconds ?? 5,
    enforcedSeconds: options.deviceEnforcedIntervalSeconds ?? options.deviceIntervalSeconds ?? 5,
    onSlowDown: () => stats.slowDowns++,
  });
  provider.use(polling.middleware);
  provider.use(defaultScope(options.routes?.authorization ?? "/auth"));
  provider.use(
    interactionRoutes(provider, {
      autoApproveAs: options.autoApproveAs,
      showDemoAccounts: options.showDemoAccounts ?? false,
      logger,
    }),
  );

  const marker = randomBytes(32).toString("base64url");
  const handler = provider.callback();
  server.on("request", (req: IncomingMessage, res: ServerResponse) => {
    const url = URL.parse(req.url ?? "/", issuer);
    if (!url) {
      res.writeHead(400, { "content-type": "text/plain" }).end("bad request target");
      return;
    }
    if (options.beside?.(req, res)) return;
    if (
      options.autoApproveAs &&
      shouldEmulate(req, url, options.routes?.authorization) &&
      !isMarked(req, marker)
    ) {
      emulateBrowser({ origin: issuer, markerHeader: MARKER_HEADER, marker }, url, res).catch(
        (error) => {
          logger.error("idp.auto_approve_failed", { error });
          if (!res.headersSent) res.writeHead(502).end("auto-approve failed");
        },
      );
      return;
    }
    handler(req, res);
  });
  logger.info("idp.listening", {
    issuer,
    autoApproveAs: options.autoApproveAs ?? null,
    dataDir: options.dataDir ?? null,
  });

  return {
    issuer,
    port,
    provider,
    stats,
    resetStats() {
      stats.byGrant = {};
      stats.errors = [];
      stats.slowDowns = 0;
    },
    memory: () => ({
      ...storage.counts(),
      devicePolls: polling.size(),
      errorStats: stats.errors.length,
    }),
    close: async () => {
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
      await writer?.flush();
    },
  };
}

function isMarked(req: IncomingMessage, marker: string): boolean {
  const value = req.headers[MARKER_HEADER];
  if (typeof value !== "string" || value.length !== marker.length) return false;
  return timingSafeEqual(Buffer.from(value), Buffer.from(marker));
}
