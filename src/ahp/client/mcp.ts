/**
 * Pure reader of an MCP server's auth requirement as an official host states it (`channels-session/state.ts`
 * @043bc34): `McpServerAuthRequiredState` inside a `session/mcpServerStateChanged` action, a
 * `session/customizationUpdated` action, or a session snapshot's `customizations`. The requirement's resource becomes
 * an `AhpResource` the client can sign in for; its `requiredScopes` are authoritative for the next authorization
 * request (the spec: "clients MUST NOT assume any subset/superset relationship to `scopes_supported`").
 */

import {
  ActionEnvelopeSchema,
  AhpMethods,
  type McpAuthRequirement,
  McpServerCustomizationSchema,
  type McpServerState,
  SessionMcpActionSchema,
} from "../wire.ts";
import type { AhpResource } from "./resources.ts";
import { fromMetadata } from "./resources.ts";

export interface McpAuthNotice {
  /** The session channel the server belongs to. */
  session: string;
  /** The `McpServerCustomization.id`. */
  serverId: string;
  /** The configuration name, when the notice carried the customization (`authenticate.serverName`). */
  serverName?: string;
  reason: string;
  /** What to sign in for: the MCP server's metadata, scopes = `requiredScopes` when given. */
  resource: AhpResource;
  requiredScopes?: string[];
  /** `McpAuthRequirement.oauthClient.clientId`: use it instead of dynamic registration. */
  oauthClientId?: string;
}

/** The notice an `action` notification carries, or undefined when it is about something else. */
export function readMcpAuthNotice(method: string, params: unknown): McpAuthNotice | undefined {
  if (method !== AhpMethods.action) return undefined;
  const envelope = ActionEnvelopeSchema.safeParse(params);
  if (!envelope.success) return undefined;
  const action = SessionMcpActionSchema.safeParse(envelope.data.action);
  if (!action.success) return undefined;
  const session = envelope.data.channel;
  if (action.data.type === "session/mcpServerStateChanged") {
    return noticeOf(session, action.data.id, undefined, action.data.state);
  }
  if (action.data.type !== "session/customizationUpdated") return undefined;
  const entry = action.data.customization;
  return noticeOf(session, entry.id, entry.name, entry.state);
}

/** The notices in a session snapshot's state (`customizations`, top-level MCP servers and containers' children). */
export function readMcpAuthNoticesFromSnapshot(session: string, state: unknown): McpAuthNotice[] {
  const customizations = (state as { customizations?: unknown } | null)?.customizations;
  if (!Array.isArray(customizations)) return [];
  const entries = customizations.flatMap((c: unknown) =>
    Array.isArray((c as { children?: unknown })?.children)
      ? [c, ...(c as { children: unknown[] }).children]
      : [c],
  );
  const out: McpAuthNotice[] = [];
  for (const entry of entries) {
    const parsed = McpServerCustomizationSchema.safeParse(entry);
    if (!parsed.success) continue;
    const notice = noticeOf(session, parsed.data.id, parsed.data.name, parsed.data.state);
    if (notice) out.push(notice);
  }
  return out;
}

function noticeOf(
  session: string,
  serverId: string,
  serverName: string | undefined,
  state: McpServerState,
): McpAuthNotice | undefined {
  if (state.kind !== "authRequired") return undefined;
  const requirement = state as McpAuthRequirement & { kind: "authRequired" };
  const resource = fromMetadata(requirement.resource);
  const requiredScopes = requirement.requiredScopes;
  if (requiredScopes?.length) resource.scopes = [...requiredScopes];
  resource.label = serverName ? `MCP server ${serverName}` : resource.label;
  if (requirement.oauthClient?.clientId) resource.oauthClientId = requirement.oauthClient.clientId;
  return {
    session,
    serverId,
    ...(serverName ? { serverName } : {}),
    reason: requirement.reason,
    resource,
    ...(requiredScopes ? { requiredScopes: [...requiredScopes] } : {}),
    ...(requirement.oauthClient?.clientId
      ? { oauthClientId: requirement.oauthClient.clientId }
      : {}),
  };
}
