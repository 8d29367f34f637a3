/**
 * `McpServerAuth`: the kit's side of the MCP servers a client passes in `session/new` (issue 12 §3, ACP). It
 * remembers each session's http/sse servers, probes them in the background (never holding up `session/new`, never
 * failing it), hands the agent author one `agentAuthProvider` per server and session whose sign-in asks the person
 * through the ACP client, keeps the tokens in the agent's vault (subject = the kit's, resource = the server's
 * canonical URI) and reports every server as an `auth/status` account.
 */

import type * as acp from "@agentclientprotocol/sdk/unstable";
import { peerText } from "../../../core/display.ts";
import type { Logger } from "../../../core/log.ts";
import {
  type AgentAuthProvider,
  agentAuthProvider,
  canonicalMcpServerUrl,
  type ScopeChallenge,
} from "../../../mcp/client/index.ts";
import {
  CancelledError,
  type LogoutResult,
  logout as revokeAndDelete,
  type TokenRefresher,
} from "../../../oauth/index.ts";
import type { CredentialStore, CredentialSummary } from "../../../vault/types.ts";
import {
  isServerResource,
  type McpServerAccount,
  mcpServerAccount,
  storedServerAccount,
  type TrackedServer,
  toStatusAccount,
} from "./accounts.ts";
import { type Asked, askToSignIn, completeElicitation } from "./ask.ts";
import { McpServerAuthError } from "./errors.ts";
import { DEFAULT_PROBE_TIMEOUT_MS, probeMcpServer } from "./probe.ts";
import {
  DEFAULT_MAX_SERVERS_PER_SESSION,
  readSessionServers,
  type SessionMcpServer,
} from "./servers.ts";
import { Turns } from "./turns.ts";

export interface McpOptions {
  /** Probe each new server without a token after `session/new`, in the background. Default true. */
  probe?: boolean;
  probeTimeoutMs?: number;
  /** Remote servers managed per session (the rest are reported, not probed). Default 32. */
  maxServersPerSession?: number;
  /** How long a sign-in waits for the person. Default 5 minutes. */
  signInTimeoutMs?: number;
  /** The `client_name` of dynamically registered clients. Default "<agent name> (agentauth)". */
  clientName?: string;
}

export interface McpBridgeDeps {
  store: CredentialStore;
  subject: string;
  agentName: string;
  refresher: TokenRefresher;
  client(): acp.AgentContext | undefined;
  /** Aborted when the ACP connection closes: a sign-in waiting for the person then ends (its listener closes). */
  connectionSignal(): AbortSignal | undefined;
  urlElicitation(): boolean;
  /** Publishes the status if it changed (`auth/status_update`). */
  changed(): Promise<void>;
  stderr(text: string): void;
  logger: Logger;
  /**
   * Whether a record of the kit's subject is one of the agent's own method credentials (an OAuth method whose
   * `resource` is an http(s) URL): those are not MCP servers, so they are never listed as one.
   */
  ownCredential?(record: CredentialSummary): boolean;
  options?: McpOptions;
}

// Bounds on what a client can make the agent hold: servers across sessions (each one an auth/status account),
// sessions remembered, probes in flight. MCP accounts in all (servers of sessions first, then stored sign-ins no
// session has named) are bounded by MAX_TRACKED_SERVERS too.
const MAX_TRACKED_SERVERS = 100;
const MAX_SESSIONS = 1_000;
// Sign-ins `signOut` revokes at once (each a discovery and up to two revocation requests).
const SIGN_OUT_CONCURRENCY = 8;
const PROBE_CONCURRENCY = 4;

interface SessionEntry {
  servers: SessionMcpServer[];
  /** Promises, so concurrent first calls share one provider (and so one single flight and one turn). */
  providers: Map<string, Promise<AgentAuthProvider>>;
}

export class McpServerAuth {
  readonly #deps: McpBridgeDeps;
  readonly #sessions = new Map<string, SessionEntry>();
  readonly #tracked = new Map<string, TrackedServer>();
  readonly #probeQueue: string[] = [];
  /** Per server URL: whose provider is handling 401s now (see turns.ts). */
  readonly #turns = new Turns();
  #probing = 0;
  #warnedFull = false;
  /** Aborted by `signOut`: a sign-in still waiting for the person must not sign them back in afterwards. */
  #signIns = new AbortController();

  constructor(deps: McpBridgeDeps) {
    this.#deps = deps;
  }

  /**
   * Records a session's `mcpServers` (the kit calls it after the author's `session/new`, `session/load`,
   * `session/resume` or `session/fork` handler returns; call it yourself for sessions made elsewhere). Returns at
   * once: probes run in the background and their results arrive as `auth/status_update`.
   */
  track(sessionId: string, mcpServers: unknown): void {
    if (typeof sessionId !== "string" || sessionId === "") return;
    const servers = readSessionServers(
      mcpServers,
      this.#deps.options?.maxServersPerSession ?? DEFAULT_MAX_SERVERS_PER_SESSION,
    );
    this.#sessions.delete(sessionId);
    this.#sessions.set(sessionId, { servers, providers: new Map() });
    if (this.#sessions.size > MAX_SESSIONS) {
      this.#sessions.delete(this.#sessions.keys().next().value as string);
    }
    let added = false;
    for (const server of servers) {
      if (
        server.invalid?.code === "too_many_servers" ||
        (server.clientManaged && !server.invalid)
      ) {
        continue;
      }
      const key = server.invalid
        ? `invalid:${server.invalid.code}:${server.name}:${server.displayUrl}`
        : server.url;
      const probe = this.#deps.options?.probe ?? true;
      const known = this.#tracked.get(key);
      if (known) {
        // A server that was down (or answered oddly) for an earlier session may be back: look again.
        if (probe && !server.invalid && known.probe.state === "error") {
          known.probe = { state: "checking" };
          this.#probeQueue.push(key);
          added = true;
        }
        continue;
      }
      if (this.#tracked.size >= MAX_TRACKED_SERVERS) {
        if (!this.#warnedFull)
          this.#deps.logger.warn("acp.mcp_servers_limit", { max: MAX_TRACKED_SERVERS });
        this.#warnedFull = true;
        continue;
      }
      this.#tracked.set(key, {
        server,
        probe: { state: server.invalid ? "unknown" : probe ? "checking" : "unknown" },
      });
      added = true;
      if (!server.invalid && probe) this.#probeQueue.push(key);
    }
    this.#drainProbes();
    if (added) void this.#deps.changed().catch(() => {});
  }

  /** The session's http/sse servers (stdio ones are not listed), with their client-given headers. */
  servers(sessionId: string): readonly SessionMcpServer[] {
    return this.#session(sessionId).servers;
  }

  /**
   * The official MCP SDK's `AuthProvider` for one of the session's servers (by name or URL), on the agent's vault:
   * pass it with its `fetch` to `StreamableHTTPClientTransport`. A needed sign-in asks the person through the ACP
   * client; a declined one fails the MCP call with `McpServerAuthError` `sign_in_declined` and the session goes on.
   * Typed errors: `unknown_session`, `unknown_server`, `client_managed`, `invalid_server_url`, ...
   */
  async authProvider(sessionId: string, server: string): Promise<AgentAuthProvider> {
    const session = this.#session(sessionId);
    // A URL as the client wrote it (an agent passes session/new's on as is) names the server its canonical form does.
    const url = canonicalOrUndefined(server);
    const found = session.servers.find(
      (s) => s.name === server || (s.url !== "" && (s.url === server || s.url === url)),
    );
    if (!found) {
      throw new McpServerAuthError(
        "unknown_server",
        "The session has no MCP server over HTTP by that name or URL; use a name from auth.mcp.servers(sessionId).",
      );
    }
    if (found.invalid) throw found.invalid;
    if (found.clientManaged) {
      throw new McpServerAuthError(
        "client_managed",
        `The client passed its own Authorization header for the MCP server “${found.name}”: connect with the session's headers, the agent does not sign in to it.`,
      );
    }
    let provider = session.providers.get(found.url);
    if (!provider) {
      provider = this.#provider(sessionId, found);
      session.providers.set(found.url, provider);
      // A vault that could not be read is tried again on the next call.
      provider.catch(() => session.providers.delete(found.url));
    }
    return provider;
  }

  /**
   * One account per server of the client's sessions, in the order the clients passed them, then one per MCP sign-in
   * the vault keeps that no session has named since the agent started (newest first): a restarted agent shows,
   * and its logout revokes, yesterday's sign-ins. Reads the vault once; changes nothing.
   */
  async accounts(): Promise<ReturnType<typeof toStatusAccount>[]> {
    return (await this.serverStates()).map(toStatusAccount);
  }

  /** The structured view of every server (what `auth/status` carries in `_meta`), at most 100. */
  async serverStates(): Promise<McpServerAccount[]> {
    const records = await this.#deps.store.list({ subject: this.#deps.subject });
    const named = [...this.#tracked.values()].map((t) =>
      mcpServerAccount(t, newestFor(records, t.server.url)),
    );
    return [...named, ...this.#storedOnly(records, MAX_TRACKED_SERVERS - named.length)];
  }

  /**
   * The kit's MCP credentials (its subject, an http(s) resource: the rule `signOut` revokes by) that are neither a
   * session's server nor one of the agent's own methods, one per resource, newest first, at most `room`. The
   * subject is the kit's alone, and a dynamic client registration lives under a reserved subject of its own, so
   * neither another component's sign-in nor a registration can appear here.
   */
  #storedOnly(records: readonly CredentialSummary[], room: number): McpServerAccount[] {
    if (room <= 0) return [];
    const best = new Map<string, CredentialSummary>();
    for (const r of records) {
      if (!isServerResource(r.resource) || this.#tracked.has(r.resource)) continue;
      if (this.#deps.ownCredential?.(r)) continue;
      const seen = best.get(r.resource);
      if (!seen || preferred(r, seen) < 0) best.set(r.resource, r);
    }
    const out: McpServerAccount[] = [];
    for (const r of [...best.values()].sort(preferred)) {
      const account = storedServerAccount(r);
      if (account) out.push(account);
      if (out.length >= room) break;
    }
    return out;
  }

  /** Ends every MCP sign-in still waiting for the person (typed `sign_in_cancelled`); later ones can start afresh. */
  cancelSignIns(): void {
    this.#signIns.abort();
    this.#signIns = new AbortController();
  }

  /**
   * Revokes (RFC 7009, best effort) and deletes every MCP server credential of the agent: the vault records of the
   * kit's subject bound to an http(s) resource. The kit's logout calls it after forgetting its methods' credentials,
   * so a person who logs out of the agent is logged out of its MCP servers too. Providers handed out stay usable:
   * their next call finds no token and asks for a sign-in again.
   *
   * The revocations run SIGN_OUT_CONCURRENCY at a time: one after another, an authorization server that never
   * answers would cost the engine's request timeout per sign-in (minutes for the 100 `auth/status` lists), and
   * unbounded, a vault of sign-ins would open a connection each at once. Results keep the vault's order.
   */
  async signOut(): Promise<LogoutResult[]> {
    this.cancelSignIns();
    const { store, subject } = this.#deps;
    const records = (await store.list({ subject })).filter((r) => isServerResource(r.resource));
    const results: LogoutResult[] = new Array(records.length);
    let next = 0;
    // Each worker takes the next record as it finishes one; `next++` runs between awaits, so no record is taken twice.
    const worker = async () => {
      while (next < records.length) {
        const i = next++;
        const r = records[i] as CredentialSummary;
        const key = { subject, issuer: r.issuer, resource: r.resource };
        results[i] = await revokeAndDelete({ store, key, deleteOnRevokeFailure: true });
      }
    };
    await Promise.all(
      Array.from({ length: Math.min(SIGN_OUT_CONCURRENCY, records.length) }, worker),
    );
    for (const tracked of this.#tracked.values()) delete tracked.lastError;
    return results;
  }

  async #provider(sessionId: string, server: SessionMcpServer): Promise<AgentAuthProvider> {
    const deps = this.#deps;
    const stored = newestFor(await deps.store.list({ subject: deps.subject }), server.url);
    const asked: Asked[] = [];
    const provider = agentAuthProvider({
      serverUrl: server.url,
      store: deps.store,
      subject: deps.subject,
      refresher: deps.refresher,
      ...(stored ? { issuer: stored.issuer } : {}),
      clientName: deps.options?.clientName ?? `${deps.agentName} (agentauth)`,
      signInTimeoutMs: deps.options?.signInTimeoutMs ?? 300_000,
      signInSignal: () => {
        const connection = deps.connectionSignal();
        return connection
          ? AbortSignal.any([this.#signIns.signal, connection])
          : this.#signIns.signal;
      },
      onAuthorizationUrl: async (url) => {
        asked.push(
          await askToSignIn(
            { client: deps.client(), urlElicitation: deps.urlElicitation(), stderr: deps.stderr },
            sessionId,
            server,
            url,
          ),
        );
      },
    });
    const onUnauthorized = provider.onUnauthorized?.bind(provider);
    const stepUp = provider.stepUp.bind(provider);
    return {
      ...provider,
      onUnauthorized:
        onUnauthorized && ((ctx) => this.#watch(server, asked, () => onUnauthorized(ctx))),
      stepUp: (challenge: ScopeChallenge) => this.#watch(server, asked, () => stepUp(challenge)),
    };
  }

  /**
   * After a 401 or a step-up: record how a sign-in ended, close the elicitation, publish the new status. Each
   * session has its own provider (its elicitations are scoped to it), so a server's 401s take turns by provider:
   * a second session waits for the first one's sign-in and then finds the token stored instead of asking the
   * person again, while one provider's concurrent 401s still run together (its own single flight joins them).
   */
  async #watch(server: SessionMcpServer, asked: Asked[], run: () => Promise<void>): Promise<void> {
    const tracked = this.#tracked.get(server.url);
    await this.#turns.enter(server.url, asked);
    try {
      await run();
      if (tracked) delete tracked.lastError;
    } catch (caught) {
      const error =
        caught instanceof CancelledError
          ? new McpServerAuthError(
              "sign_in_cancelled",
              `Signing in to the MCP server “${server.name}” was ended (the agent logged out or the client disconnected); the agent asks again when it next uses it.`,
              { cause: caught },
            )
          : caught;
      if (tracked) tracked.lastError = describe(error, server);
      throw error;
    } finally {
      this.#turns.leave(server.url, asked);
      for (const done of asked.splice(0)) await completeElicitation(this.#deps.client(), done);
      // A status that cannot be published (a vault hiccup) must not replace the call's own outcome.
      await this.#deps.changed().catch(() => {});
    }
  }

  #session(sessionId: string): SessionEntry {
    const session = this.#sessions.get(sessionId);
    if (!session) {
      throw new McpServerAuthError(
        "unknown_session",
        "The kit has no MCP servers recorded for that session; it records them when session/new returns (or call auth.mcp.track).",
      );
    }
    return session;
  }

  #drainProbes(): void {
    while (this.#probing < PROBE_CONCURRENCY && this.#probeQueue.length > 0) {
      const key = this.#probeQueue.shift() as string;
      const tracked = this.#tracked.get(key);
      if (!tracked) continue;
      this.#probing++;
      void probeMcpServer(
        tracked.server,
        this.#deps.options?.probeTimeoutMs ?? DEFAULT_PROBE_TIMEOUT_MS,
      )
        .then((result) => {
          tracked.probe = result;
        })
        .finally(() => {
          this.#probing--;
          this.#drainProbes();
          void this.#deps.changed().catch(() => {});
        });
    }
  }
}

/** The newest credential stored for the server's canonical URI. */
function newestFor(
  records: readonly CredentialSummary[],
  resource: string,
): CredentialSummary | undefined {
  if (resource === "") return undefined;
  return records.filter((r) => r.resource === resource).sort(preferred)[0];
}

/** Sort order: an active credential before one needing a sign-in, then the newest, then by resource (stable). */
function preferred(a: CredentialSummary, b: CredentialSummary): number {
  return (
    Number(b.status === "active") - Number(a.status === "active") ||
    b.updatedAt - a.updatedAt ||
    (a.resource < b.resource ? -1 : a.resource > b.resource ? 1 : 0)
  );
}

/**
 * A failure as the status shows it: our typed code and words, a generic one for anything else. The engine's
 * messages quote the server's URL whole: it is shown as the account's `url` is, its query (which may hold a key)
 * elided.
 */
function describe(error: unknown, server: SessionMcpServer): { code: string; message: string } {
  for (let e = error as { code?: unknown; message?: unknown; cause?: unknown } | undefined; e; ) {
    if (typeof e.code === "string" && /^[a-z_]+$/.test(e.code) && typeof e.message === "string") {
      const message = server.url ? e.message.split(server.url).join(server.displayUrl) : e.message;
      return { code: e.code, message: peerText(message, { max: 400 }) };
    }
    e = e.cause as typeof e;
  }
  return { code: "sign_in_failed", message: "Signing in to the MCP server failed; try again." };
}

/** The canonical form of a URL the one check takes (a query kept, as `readSessionServers` keeps it), else undefined. */
function canonicalOrUndefined(value: unknown): string | undefined {
  try {
    return canonicalMcpServerUrl(value, { query: "allow" }).href;
  } catch {
    return undefined;
  }
}
