/**
 * Pure readers of what a host says it protects, in both dialects, normalised to one `AhpResource`: official per-agent
 * RFC 9728 metadata in root state (correlated by `resource`), the seed's `initialize.resourceMetadata.authSchemes`
 * (correlated by `schemeId`), the `-32007` error data, and the auth notifications.
 */

import {
  type AgentInfo,
  AhpMethods,
  AuthRequiredErrorDataOfficialSchema,
  AuthRequiredErrorDataSeedSchema,
  AuthRequiredParamsOfficialSchema,
  type AuthScheme,
  AuthStateNotificationSeedSchema,
  type ProtectedResourceMetadata,
  type ResourceMetadata,
  RootStateSchema,
} from "../wire.ts";
import { AhpProtocolError } from "./errors.ts";

export type Dialect = "official" | "seed";

export interface AhpResource {
  /** What the host correlates tokens on: official the RFC 9728 `resource`, seed the `schemeId`. */
  id: string;
  /** The RFC 8707 resource indicator the token is requested for (and the vault key's `resource`). */
  resource: string;
  label: string;
  authorizationServers: string[];
  scopes: string[];
  /** AHP: absent `required` means true. */
  required: boolean;
  /** official: the agents (`provider`) that advertise it. */
  agents: string[];
  /**
   * An MCP server's pre-registered public client (`McpAuthRequirement.oauthClient.clientId`): "clients MUST use" it,
   * so sign-ins for this resource go through it instead of the login policy's client.
   */
  oauthClientId?: string;
}

/** official: every agent's `protectedResources`, merged by `resource` (several agents may share one). */
export function resourcesFromRootState(state: unknown): AhpResource[] {
  const parsed = RootStateSchema.safeParse(state);
  if (!parsed.success) throw new AhpProtocolError("The host's root state is malformed (agents).");
  const byId = new Map<string, AhpResource>();
  for (const agent of parsed.data.agents) {
    for (const metadata of agent.protectedResources ?? []) {
      const existing = byId.get(metadata.resource);
      if (existing) existing.agents.push(agent.provider);
      else byId.set(metadata.resource, fromMetadata(metadata, agent));
    }
  }
  return [...byId.values()];
}

export function fromMetadata(metadata: ProtectedResourceMetadata, agent?: AgentInfo): AhpResource {
  return {
    id: metadata.resource,
    resource: metadata.resource,
    label: metadata.resource_name ?? metadata.resource,
    authorizationServers: metadata.authorization_servers ?? [],
    scopes: metadata.scopes_supported ?? [],
    required: metadata.required ?? true,
    agents: agent ? [agent.provider] : [],
  };
}

/**
 * seed: one resource per bearer scheme. The seed names no per-scheme resource indicator, so tokens are requested
 * for the host's `resourceMetadata.resource` unless a scheme carries its own `resource` (an extension we honour).
 */
export function resourcesFromSeed(metadata: ResourceMetadata | undefined): AhpResource[] {
  return (metadata?.authSchemes ?? []).map((scheme) =>
    fromScheme(scheme, metadata?.resource ?? ""),
  );
}

function fromScheme(scheme: AuthScheme, hostResource: string): AhpResource {
  const own = (scheme as { resource?: unknown }).resource;
  return {
    id: scheme.id,
    resource: typeof own === "string" && own ? own : hostResource,
    label: scheme.label,
    authorizationServers: scheme.authorizationServers,
    scopes: scheme.scopesSupported ?? [],
    required: scheme.required ?? true,
    agents: [],
  };
}

/** What a `-32007` answer asks for: official full metadata per resource; seed scheme ids (with RFC 6750 errors). */
export interface AuthChallengeRead {
  ids: string[];
  /** official only: metadata the host sent, which may advertise a resource dynamically. */
  metadata: AhpResource[];
  /** seed only: `insufficient_scope` scopes per scheme id. */
  scopes: Map<string, string[]>;
}

export function readAuthRequiredData(dialect: Dialect, data: unknown): AuthChallengeRead {
  if (dialect === "official") {
    // Older spec versions sent a bare array; accept it rather than fail a retry over a wrapper.
    const parsed = AuthRequiredErrorDataOfficialSchema.safeParse(
      Array.isArray(data) ? { resources: data } : data,
    );
    if (!parsed.success)
      throw new AhpProtocolError("The host's -32007 answer has no readable data.resources.");
    const metadata = parsed.data.resources.map((m) => fromMetadata(m));
    return { ids: metadata.map((r) => r.id), metadata, scopes: new Map() };
  }
  const parsed = AuthRequiredErrorDataSeedSchema.safeParse(data);
  if (!parsed.success)
    throw new AhpProtocolError("The host's -32007 answer has no readable data.challenges.");
  const scopes = new Map<string, string[]>();
  for (const challenge of parsed.data.challenges) {
    if (challenge.error === "insufficient_scope" && challenge.scope) {
      scopes.set(challenge.schemeId, challenge.scope.split(" ").filter(Boolean));
    }
  }
  return { ids: parsed.data.challenges.map((c) => c.schemeId), metadata: [], scopes };
}

/** An auth notification, normalised: `expired` covers the seed's `revoked` (both forbid replaying the token). */
export interface AuthNotice {
  id: string;
  reason: "expired" | "required" | "authenticated" | "other";
  metadata?: AhpResource;
}

export function readAuthNotification(
  dialect: Dialect,
  method: string,
  params: unknown,
): AuthNotice | undefined {
  if (dialect === "official" && method === AhpMethods.authRequired) {
    const parsed = AuthRequiredParamsOfficialSchema.safeParse(params);
    if (!parsed.success) throw new AhpProtocolError("The host sent a malformed auth/required.");
    const reason = parsed.data.reason ?? "required";
    return {
      id: parsed.data.resource.resource,
      // An open enum: an unknown reason is not treated as expiry, but the resource is still known to need auth.
      reason: reason === "expired" || reason === "required" ? reason : "other",
      metadata: fromMetadata(parsed.data.resource),
    };
  }
  if (dialect === "seed" && method === AhpMethods.seedAuthRequired) {
    const parsed = AuthStateNotificationSeedSchema.safeParse(params);
    if (!parsed.success)
      throw new AhpProtocolError("The host sent a malformed notify/authRequired.");
    const { state, schemeId } = parsed.data;
    return {
      id: schemeId,
      reason: state === "revoked" || state === "expired" ? "expired" : state,
    };
  }
  return undefined;
}
