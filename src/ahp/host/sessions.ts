/**
 * The official session commands (`createSession`, `listSessions`, `disposeSession`, `reconnect`) over an in-memory
 * catalogue, so an official client meets the auth flow where it really does: each command is gated by the
 * protected resources of the agent it touches (`lifecycle.md` § Authentication: "If a client attempts to create or
 * use a session with an agent that requires authentication … the server SHOULD return -32007"). Shapes from
 * `channels-session/commands.ts`, `channels-root/commands.ts`, `common/commands.ts` and `channels-session/state.ts`
 * @043bc34. Sessions hold no turns: this is the auth surface of a host, not an agent runtime.
 */

import {
  AhpErrorCodes,
  CreateSessionParamsSchema,
  DisposeSessionParamsSchema,
  ListSessionsParamsSchema,
  OfficialSessionMethods,
  ReconnectParamsSchema,
  ROOT_CHANNEL,
  type SessionSummary,
} from "../wire.ts";
import {
  AhpCommandError,
  type AuthenticatedResource,
  type CommandEntry,
  type Requirement,
} from "./context.ts";
import type { ResourceRegistry } from "./resources.ts";

/** `SessionStatus.Idle`: a session with no turn running. */
const IDLE = 1;

export interface SessionCatalogOptions {
  /** Sessions kept at once; `createSession` beyond it is refused. Default 1,000. */
  maxSessions?: number;
  now?: () => number;
}

/** What the catalogue tells the host to announce (`root/sessionAdded` / `root/sessionRemoved`). */
export type SessionEvent =
  | { kind: "added"; summary: SessionSummary; resources: readonly string[] }
  | { kind: "removed"; session: string; resources: readonly string[] };

export class SessionCatalog {
  readonly #registry: ResourceRegistry;
  readonly #sessions = new Map<string, SessionSummary>();
  /** Who created each session (principalOf): only that account lists, subscribes to or disposes it. */
  readonly #owners = new Map<string, string>();
  readonly #max: number;
  readonly #now: () => number;

  constructor(registry: ResourceRegistry, options: SessionCatalogOptions = {}) {
    this.#registry = registry;
    this.#max = options.maxSessions ?? 1000;
    this.#now = options.now ?? Date.now;
  }

  get(uri: string): SessionSummary | undefined {
    return this.#sessions.get(uri);
  }

  /** The session, only when `authenticated` is the account that created it; else as if it did not exist. */
  getOwned(
    uri: string,
    authenticated: readonly AuthenticatedResource[],
  ): SessionSummary | undefined {
    const summary = this.#sessions.get(uri);
    if (!summary) return undefined;
    const owner = principalOf(authenticated, this.resourcesOf(summary.provider));
    return this.#owners.get(uri) === owner ? summary : undefined;
  }

  /** The resources a session's agent requires (`required` absent or true). */
  resourcesOf(provider: string): readonly string[] {
    return this.#registry.requiredResourcesOf(provider) ?? [];
  }

  /** Most recently modified first, as `listSessions` SHOULD order them. */
  list(): SessionSummary[] {
    return [...this.#sessions.values()].reverse();
  }

  /** The official `SessionState` snapshot of one session (no chats, no clients: nothing runs here). */
  state(summary: SessionSummary): Record<string, unknown> {
    return { ...summary, lifecycle: "ready", activeClients: [], chats: [] };
  }

  create(uri: string, provider: string, owner = ""): SessionSummary {
    if (this.#sessions.has(uri)) {
      throw new AhpCommandError(
        AhpErrorCodes.SessionAlreadyExists,
        "Session already exists: choose a new ahp-session:/<uuid>.",
      );
    }
    if (this.#sessions.size >= this.#max) {
      throw new AhpCommandError(
        AhpErrorCodes.InternalError,
        `This host holds its maximum of ${this.#max} sessions; dispose one first.`,
      );
    }
    const at = new Date(this.#now()).toISOString();
    const agent = this.#registry.agent(provider);
    const summary: SessionSummary = {
      resource: uri,
      provider,
      title: `${agent?.displayName ?? provider} session`,
      status: IDLE,
      createdAt: at,
      modifiedAt: at,
    };
    this.#sessions.set(uri, summary);
    this.#owners.set(uri, owner);
    return summary;
  }

  dispose(uri: string): SessionSummary {
    const summary = this.#sessions.get(uri);
    if (!summary) throw sessionNotFound();
    this.#sessions.delete(uri);
    this.#owners.delete(uri);
    return summary;
  }
}

/**
 * The account behind a connection, as far as one agent is concerned: the token subject of each resource that agent
 * requires. Two connections with the same subjects are the same principal (one person, several windows); another
 * subject for any of them is another principal. An agent that requires no resource has one principal: "" (anyone
 * who may reach the host). A token without `sub` counts as the subject "".
 */
export function principalOf(
  authenticated: readonly AuthenticatedResource[],
  resources: readonly string[],
): string {
  return [...resources]
    .sort()
    .map((r) => `${r}\u0000${authenticated.find((a) => a.resource === r)?.subject ?? ""}`)
    .join("\n");
}

function sessionNotFound(): AhpCommandError {
  return new AhpCommandError(AhpErrorCodes.SessionNotFound, "Session not found.");
}

function invalidParams(message: string): AhpCommandError {
  return new AhpCommandError(AhpErrorCodes.InvalidParams, `Invalid params: ${message}`);
}

/** The agent a `createSession` names: `provider`, or the only agent when the host has one. */
function providerOf(registry: ResourceRegistry, provider: string | undefined): string | undefined {
  if (provider !== undefined) return provider;
  const all = registry.providers();
  return all.length === 1 ? all[0] : undefined;
}

/**
 * The four commands as host command entries, each with its gate. `announce` is called after a change, for the
 * host to tell the connections entitled to that agent.
 */
export function sessionCommands(
  registry: ResourceRegistry,
  catalog: SessionCatalog,
  announce: (event: SessionEvent) => void,
): Array<[string, CommandEntry]> {
  const createGate = (params: unknown): Requirement => {
    const p = CreateSessionParamsSchema.safeParse(params);
    if (!p.success) return [];
    const provider = providerOf(registry, p.data.provider);
    return provider ? catalog.resourcesOf(provider) : [];
  };
  const sessionGate = (params: unknown): Requirement => {
    const p = DisposeSessionParamsSchema.safeParse(params);
    const found = p.success ? catalog.get(p.data.channel) : undefined;
    return found ? catalog.resourcesOf(found.provider) : [];
  };
  const reconnectGate = (params: unknown): Requirement => {
    const p = ReconnectParamsSchema.safeParse(params);
    if (!p.success) return [];
    const needed = new Set<string>();
    for (const uri of p.data.subscriptions) {
      const found = catalog.get(uri);
      if (found) for (const r of catalog.resourcesOf(found.provider)) needed.add(r);
    }
    return [...needed];
  };

  return [
    [
      OfficialSessionMethods.createSession,
      {
        options: { requires: createGate },
        handler: (params, ctx) => {
          const p = CreateSessionParamsSchema.safeParse(params);
          if (!p.success) throw invalidParams(issuesOf(p.error));
          const provider = providerOf(registry, p.data.provider);
          if (!provider) throw invalidParams("provider is required: this host has several agents.");
          if (!registry.agent(provider)) {
            throw new AhpCommandError(
              AhpErrorCodes.ProviderNotFound,
              `No agent for that provider; this host has: ${registry.providers().join(", ")}.`,
            );
          }
          const owner = principalOf(ctx.authenticated, catalog.resourcesOf(provider));
          const summary = catalog.create(p.data.channel, provider, owner);
          announce({ kind: "added", summary, resources: catalog.resourcesOf(provider) });
          return null;
        },
      },
    ],
    [
      OfficialSessionMethods.listSessions,
      {
        options: { requires: "any" },
        handler: (params, ctx) => {
          const p = ListSessionsParamsSchema.safeParse(params ?? {});
          if (!p.success) throw invalidParams(issuesOf(p.error));
          // This host never issues a cursor, so any cursor is one it does not recognise (PaginatedParams).
          if (p.data.cursor !== undefined)
            throw invalidParams("cursor is not one this host issued.");
          const held = new Set(ctx.authenticated.map((r) => r.resource));
          // Only sessions of agents this connection may use, created by this account: a list of others' sessions
          // would leak them (and invite disposing them).
          const items = catalog
            .list()
            .filter((s) => catalog.resourcesOf(s.provider).every((r) => held.has(r)))
            .filter((s) => catalog.getOwned(s.resource, ctx.authenticated) !== undefined);
          return { items: p.data.limit ? items.slice(0, p.data.limit) : items };
        },
      },
    ],
    [
      OfficialSessionMethods.disposeSession,
      {
        options: { requires: sessionGate },
        handler: (params, ctx) => {
          const p = DisposeSessionParamsSchema.safeParse(params);
          if (!p.success) throw invalidParams(issuesOf(p.error));
          // Another account's session is answered as missing: its existence is not this caller's business.
          if (!catalog.getOwned(p.data.channel, ctx.authenticated)) throw sessionNotFound();
          const summary = catalog.dispose(p.data.channel);
          announce({
            kind: "removed",
            session: summary.resource,
            resources: catalog.resourcesOf(summary.provider),
          });
          return null;
        },
      },
    ],
    [
      OfficialSessionMethods.reconnect,
      {
        options: { requires: reconnectGate },
        handler: (params, ctx) => {
          const p = ReconnectParamsSchema.safeParse(params);
          if (!p.success) throw invalidParams(issuesOf(p.error));
          // No action log is kept, so nothing is replayed; sessions that no longer exist (or are another
          // account's) are `missing`.
          const missing = p.data.subscriptions.filter(
            (uri) => uri !== ROOT_CHANNEL && !catalog.getOwned(uri, ctx.authenticated),
          );
          return { type: "replay", actions: [], missing };
        },
      },
    ],
  ];
}

/** Paths and zod's reasons only: never the received values. */
function issuesOf(error: { issues: Array<{ path: PropertyKey[]; message: string }> }): string {
  return error.issues
    .slice(0, 5)
    .map((i) => `${i.path.map(String).join(".") || "params"}: ${i.message}`)
    .join("; ");
}
