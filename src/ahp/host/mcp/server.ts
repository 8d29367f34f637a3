/**
 * One MCP server a host uses on one session's behalf, through the official MCP client (`@modelcontextprotocol/client`,
 * loaded on first use) with a static-token `AuthProvider`: the token is whatever a client last pushed with
 * `authenticate` for this server's resource. The server's answers drive the official `McpServerState`:
 *
 * - 401 with no token sent → `authRequired` / `required`; 401 for the token this host held (expired, revoked) → the
 *   token is dropped and the state is `authRequired` / `expired` (the client must not replay it, AHP auth spec);
 * - 403 `insufficient_scope` → `authRequired` / `insufficientScope` with the challenge's scopes (the token is kept:
 *   it is valid, only too narrow);
 * - a call that goes through → `ready`; a transport failure → `error`.
 *
 * The resource metadata comes from the server's 401 (RFC 9728 discovery through `src/mcp/client`: same-origin
 * `resource_metadata`, the well-known fallbacks, `resource` checked against the server's URI).
 *
 * The token stays in memory, never in the vault: the client owns it (it signed in, it refreshes, it revokes), and AHP
 * auth is per connection, so the token is forgotten when the connection that pushed it closes.
 */

import type { AuthProvider, Client, FetchLike } from "@modelcontextprotocol/client";
import type { Logger } from "../../../core/log.ts";
import { Secret } from "../../../core/secret.ts";
import {
  discoverServerMetadata,
  McpAuthError,
  readUnauthorized,
} from "../../../mcp/client/index.ts";
import {
  challengeErrorDescription,
  findBearerChallenge,
  MetadataCache,
  parseWwwAuthenticate,
} from "../../../oauth/index.ts";
import type {
  McpAuthRequiredReason,
  McpServerState,
  ProtectedResourceMetadata,
  SessionMcpAction,
} from "../../wire.ts";
import { McpBridgeError, McpServerAuthRequired } from "./errors.ts";
import { loadMcpClientSdk } from "./sdk.ts";
import {
  advertisedMetadata,
  authRequiredState,
  customization,
  customizationUpdated,
  errorState,
  mcpServerStateChanged,
} from "./state.ts";

/** What the host author gives for one MCP server. */
export interface McpServerSpec {
  /** The configuration name clients see (and may name in `authenticate.serverName`); unique in the session. */
  name: string;
  /** The Streamable HTTP endpoint; its URL (without fragment) is the RFC 8707 resource the client signs in for. */
  url: string | URL;
  /** A pre-registered public OAuth client for the server's authorization server (`McpAuthRequirement.oauthClient`). */
  oauthClientId?: string;
}

/**
 * Thrown by the static provider's `onUnauthorized`: stops the SDK's retry and carries the 401 to the bridge. It may
 * end up in the `cause` chain of the error the host author gets (and prints), so the bearer it answered is a
 * `Secret`, never a plain string.
 */
class Refused extends Error {
  readonly header: string | null;
  readonly sent: Secret | undefined;
  constructor(header: string | null, sent: Secret | undefined) {
    super("the MCP server answered 401");
    this.header = header;
    this.sent = sent;
  }
}

interface HeldToken {
  token: Secret;
  connectionId: string;
  /** Epoch ms from the client's `expiresIn`, when given. */
  expiresAt?: number;
}

export interface HostMcpServerDeps {
  id: string;
  emit(action: SessionMcpAction): void;
  logger: Logger;
  now: () => number;
}

export class HostMcpServer {
  readonly id: string;
  readonly name: string;
  /** The canonical URI: the RFC 8707 resource and `ProtectedResourceMetadata.resource`. */
  readonly url: string;
  readonly #oauthClientId: string | undefined;
  readonly #deps: HostMcpServerDeps;
  #state: McpServerState = { kind: "starting" };
  #held: HeldToken | undefined;
  /**
   * Each connection's latest token, oldest first (`#held` is the newest still usable): when the supplier of the one
   * in use leaves or revokes it, the token a still-connected subscriber pushed before is used again.
   */
  readonly #supplied = new Map<string, HeldToken>();
  /** Set once the server asked for auth: `authenticate` accepts this resource from then on (AHP "advertised"). */
  #metadata: ProtectedResourceMetadata | undefined;
  /** The scopes the server's last 401 asked for (kept for the state reported when a token is dropped). */
  #challengeScopes: readonly string[] | undefined;
  /**
   * The last token this host held was refused or lapsed (its `expiresIn` ran out), and no other came since: a 401
   * is then `expired` ("a previously valid token expired or was revoked"), not `required`.
   */
  #lapsed = false;
  #client: Client | undefined;
  #connecting: Promise<Client> | undefined;
  #closed = false;
  /** Which bearer each response answered, so a 401 is tied to the token it refused (memory only, per response). */
  readonly #sentWith = new WeakMap<Response, Secret | undefined>();

  constructor(spec: McpServerSpec, name: string, url: string, deps: HostMcpServerDeps) {
    this.id = deps.id;
    this.name = name;
    this.url = url;
    this.#oauthClientId = spec.oauthClientId;
    this.#deps = deps;
  }

  get state(): McpServerState {
    return this.#state;
  }

  /** Whether `connectionId` pushed a token this server still keeps (it may revoke it, subscribed or not). */
  hasTokenFrom(connectionId: string): boolean {
    return this.#supplied.has(connectionId);
  }

  /** The resource clients may authenticate for, once the server has asked for auth. */
  get advertisedResource(): string | undefined {
    return this.#metadata?.resource;
  }

  customization() {
    return customization(this.id, this.url, this.name, this.#state);
  }

  /** Announces the entry (`starting`) and connects once, so the session learns whether it needs auth. */
  async start(): Promise<void> {
    // A missing SDK fails `add()` before anything is announced.
    await loadMcpClientSdk();
    this.#deps.emit(customizationUpdated(this.customization()));
    await this.#probe();
  }

  async listTools(): Promise<Awaited<ReturnType<Client["listTools"]>>> {
    return this.#use((client) => client.listTools());
  }

  async callTool(
    name: string,
    args: Record<string, unknown> = {},
  ): Promise<Awaited<ReturnType<Client["callTool"]>>> {
    return this.#use((client) => client.callTool({ name, arguments: args }));
  }

  /**
   * A client's token for this server: held, then tried at once. Resolves with the state to report: `ready` when the
   * server took it, `authRequired` when it refused it (the caller answers `authenticate` with -32007).
   */
  async acceptToken(
    token: string,
    connectionId: string,
    expiresIn: number | undefined,
  ): Promise<McpServerState> {
    const now = this.#deps.now();
    this.#held = {
      token: new Secret(token),
      connectionId,
      ...(expiresIn === undefined ? {} : { expiresAt: now + expiresIn * 1000 }),
    };
    this.#supplied.delete(connectionId);
    this.#supplied.set(connectionId, this.#held);
    this.#lapsed = false;
    this.#deps.logger.info("ahp.mcp_token_received", { server: this.name, expiresIn });
    await this.#probe();
    return this.#state;
  }

  /**
   * Empty-token `authenticate`, or the supplying connection closed: forget its token. When it was the one in use,
   * the latest token another connection pushed takes its place; with none left, say auth is needed.
   */
  dropToken(connectionId?: string): void {
    if (connectionId === undefined) this.#supplied.clear();
    else this.#supplied.delete(connectionId);
    if (!this.#held || (connectionId !== undefined && this.#held.connectionId !== connectionId))
      return;
    this.#held = [...this.#supplied.values()].at(-1);
    this.#lapsed = false;
    this.#deps.logger.info("ahp.mcp_token_dropped", {
      server: this.name,
      fallback: this.#held !== undefined,
    });
    if (this.#held) return;
    if (this.#metadata && !this.#closed) {
      this.#setState(this.#authRequired("required", this.#metadata, this.#challengeScopes));
    }
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    this.#held = undefined;
    this.#supplied.clear();
    const client = this.#client ?? (await this.#connecting?.catch(() => undefined));
    this.#client = undefined;
    await client?.close().catch(() => {});
    this.#setState({ kind: "stopped" });
  }

  async #probe(): Promise<void> {
    await this.listTools().catch((error: unknown) => {
      if (!(error instanceof McpServerAuthRequired)) {
        this.#deps.logger.info("ahp.mcp_probe_failed", { server: this.name, error });
      }
    });
  }

  async #use<T>(call: (client: Client) => Promise<T>): Promise<T> {
    if (this.#closed) {
      throw new McpBridgeError(
        "server_closed",
        `The MCP server '${this.name}' was removed from its session.`,
      );
    }
    const held = this.#held;
    if (held?.expiresAt !== undefined && held.expiresAt <= this.#deps.now()) {
      this.#supplied.delete(held.connectionId);
      this.#held = undefined;
      this.#lapsed = true;
    }
    let client: Client;
    try {
      client = await this.#connected();
      const result = await call(client);
      this.#setState({ kind: "ready" });
      return result;
    } catch (error) {
      const state = await this.#stateAfter(error);
      if (!state) throw error;
      this.#setState(state);
      if (state.kind === "authRequired") throw new McpServerAuthRequired(this.name, state);
      throw error;
    }
  }

  /** The state a failure leads to: auth required, a transport error, or undefined (a JSON-RPC error: no change). */
  async #stateAfter(error: unknown): Promise<McpServerState | undefined> {
    if (error instanceof McpBridgeError) throw error;
    const sdk = await loadMcpClientSdk();
    const refused = findCause(error, (e) => e instanceof Refused) as Refused | undefined;
    try {
      if (refused) return await this.#afterUnauthorized(refused);
      const scope = findCause(error, (e) => e instanceof sdk.InsufficientScopeError);
      if (scope instanceof sdk.InsufficientScopeError) {
        return await this.#afterInsufficientScope(scope);
      }
    } catch (failure) {
      // The challenge or the metadata could not be used (malformed, cross-origin, wrong resource): not the
      // client's to fix with a token, so an error state that says so (typed messages carry no secret).
      this.#deps.logger.warn("ahp.mcp_challenge_unusable", { server: this.name, error: failure });
      return errorState(
        "authorization",
        failure instanceof McpAuthError || failure instanceof Error
          ? failure.message
          : "unusable challenge",
      );
    }
    if (error instanceof sdk.ProtocolError) return undefined;
    // Anything else broke the connection: reconnect on the next use.
    const client = this.#client;
    this.#client = undefined;
    await client?.close().catch(() => {});
    return errorState("connection", error instanceof Error ? error.message : String(error));
  }

  async #afterUnauthorized(refused: Refused): Promise<McpServerState> {
    if (refused.sent !== undefined && this.#held?.token.reveal() === refused.sent.reveal()) {
      // The token this host held was refused: never replay it.
      this.#supplied.delete(this.#held.connectionId);
      this.#held = undefined;
      this.#lapsed = true;
    }
    const reason: McpAuthRequiredReason =
      refused.sent !== undefined || this.#lapsed ? "expired" : "required";
    const server = new URL(this.url);
    const hints = readUnauthorized(refused.header, server);
    const prm = await discoverServerMetadata(this.url, hints, { cache: new MetadataCache() });
    this.#metadata = advertisedMetadata(this.url, prm);
    this.#challengeScopes = hints.scope ?? prm.scopes_supported;
    return this.#authRequired(
      reason,
      this.#metadata,
      this.#challengeScopes,
      descriptionOf(refused.header),
    );
  }

  async #afterInsufficientScope(error: {
    requiredScope?: string;
    resourceMetadataUrl?: URL;
    errorDescription?: string;
  }): Promise<McpServerState> {
    const server = new URL(this.url);
    const metadataUrl = error.resourceMetadataUrl;
    if (metadataUrl && metadataUrl.origin !== server.origin) {
      throw new McpAuthError(
        "resource_metadata_cross_origin",
        `The MCP server ${server.origin} pointed its resource metadata at another origin; it is not followed.`,
      );
    }
    let metadata = this.#metadata;
    if (!metadata || metadataUrl) {
      const prm = await discoverServerMetadata(
        this.url,
        { resourceMetadataUrl: metadataUrl },
        { cache: new MetadataCache() },
      );
      metadata = advertisedMetadata(this.url, prm);
      this.#metadata = metadata;
    }
    return this.#authRequired(
      "insufficientScope",
      metadata,
      error.requiredScope?.split(" "),
      error.errorDescription,
    );
  }

  #authRequired(
    reason: McpAuthRequiredReason,
    metadata: ProtectedResourceMetadata,
    requiredScopes?: readonly string[],
    description?: string,
  ): McpServerState {
    return authRequiredState({
      reason,
      metadata,
      requiredScopes,
      description,
      oauthClientId: this.#oauthClientId,
    });
  }

  #connected(): Promise<Client> {
    if (this.#client) return Promise.resolve(this.#client);
    this.#connecting ??= this.#connect().finally(() => {
      this.#connecting = undefined;
    });
    return this.#connecting;
  }

  async #connect(): Promise<Client> {
    const sdk = await loadMcpClientSdk();
    const client = new sdk.Client({ name: "agentauth-ahp-host", version: "1.0.0" });
    const transport = new sdk.StreamableHTTPClientTransport(new URL(this.url), {
      authProvider: this.#provider(),
      fetch: this.#fetch,
    });
    try {
      await client.connect(transport);
    } catch (error) {
      await client.close().catch(() => {});
      throw error;
    }
    if (this.#closed) {
      await client.close().catch(() => {});
      throw new McpBridgeError(
        "server_closed",
        `The MCP server '${this.name}' was removed from its session.`,
      );
    }
    this.#client = client;
    return client;
  }

  /** The static-token provider: the held token, and a 401 handed back to the bridge instead of retried. */
  #provider(): AuthProvider {
    return {
      token: async () => this.#held?.token.reveal(),
      onUnauthorized: async (ctx) => {
        throw new Refused(
          ctx.response.headers.get("www-authenticate"),
          this.#sentWith.get(ctx.response),
        );
      },
    };
  }

  readonly #fetch: FetchLike = async (url, init) => {
    const response = await fetch(url, init);
    const bearer = new Headers(init?.headers).get("authorization")?.replace(/^Bearer\s+/i, "");
    this.#sentWith.set(response, bearer ? new Secret(bearer) : undefined);
    return response;
  };

  #setState(state: McpServerState): void {
    if (this.#closed && state.kind !== "stopped") return;
    if (JSON.stringify(state) === JSON.stringify(this.#state)) return;
    this.#state = state;
    this.#deps.logger.info("ahp.mcp_state", {
      server: this.name,
      state: state.kind,
      ...(state.kind === "authRequired" ? { reason: state.reason } : {}),
    });
    this.#deps.emit(mcpServerStateChanged(this.id, state));
  }
}

/** The error itself or one of its causes that matches (the SDK may wrap what the provider threw). */
function findCause(error: unknown, match: (e: unknown) => boolean): unknown {
  let current = error;
  for (let depth = 0; depth < 5 && current !== undefined; depth++) {
    if (match(current)) return current;
    current = current instanceof Error ? current.cause : undefined;
  }
  return undefined;
}

function descriptionOf(header: string | null): string | undefined {
  if (!header) return undefined;
  try {
    const bearer = findBearerChallenge(parseWwwAuthenticate(header));
    return bearer ? challengeErrorDescription(bearer) : undefined;
  } catch {
    return undefined;
  }
}
