/**
 * The official AHP shapes of an MCP server a host uses on a session's behalf, pure: the `McpServerState` values
 * (`channels-session/state.ts` @043bc34), the bare top-level `McpServerCustomization`, the two session actions that
 * carry them (`session/customizationUpdated` to add the entry, `session/mcpServerStateChanged` for each transition,
 * `channels-session/actions.ts`) and the `action` notification's `ActionEnvelope` (`common/actions.ts`).
 *
 * Everything that came from the MCP server (its RFC 9728 metadata, its challenge's `error_description`) is peer text:
 * only known metadata fields are copied, strings are cleaned of control and bidi characters and bounded, so a hostile
 * server cannot paint a client's UI. No token ever enters these shapes.
 */

import { peerText } from "../../../core/display.ts";
import type { ProtectedResourceMetadata as EngineMetadata } from "../../../oauth/index.ts";
import {
  type ActionEnvelope,
  AhpMethods,
  type McpAuthRequiredReason,
  type McpServerCustomization,
  type McpServerState,
  type ProtectedResourceMetadata,
  type SessionMcpAction,
} from "../../wire.ts";
import type { Notification } from "../dialect.ts";

/** Longest scope list and scope kept from a challenge: a server asking for more is not taken at its word. */
const MAX_SCOPES = 64;
const MAX_SCOPE_LENGTH = 256;

/** What the bridge knows about why a server refused it; turned into `McpServerAuthRequiredState`. */
export interface AuthRequirementInput {
  reason: McpAuthRequiredReason;
  metadata: ProtectedResourceMetadata;
  requiredScopes?: readonly string[];
  description?: string;
  oauthClientId?: string;
}

export function authRequiredState(input: AuthRequirementInput): McpServerState {
  const scopes = cleanScopes(input.requiredScopes);
  const description =
    input.description === undefined ? undefined : peerText(input.description, { max: 300 });
  return {
    kind: "authRequired",
    reason: input.reason,
    ...(input.oauthClientId ? { oauthClient: { clientId: input.oauthClientId } } : {}),
    resource: input.metadata,
    ...(scopes.length > 0 ? { requiredScopes: scopes } : {}),
    ...(description ? { description } : {}),
  };
}

export function errorState(errorType: string, message: string): McpServerState {
  return { kind: "error", error: { errorType, message: peerText(message, { max: 300 }) } };
}

/**
 * The MCP server's RFC 9728 document as AHP advertises it (`ProtectedResourceMetadata`, snake_case): `resource` is
 * the canonical URI the bridge checked it against; other fields are copied only when well-formed and cleaned.
 */
export function advertisedMetadata(
  canonicalUri: string,
  prm: EngineMetadata,
): ProtectedResourceMetadata {
  // Kept verbatim (an issuer identifier must match exactly, RFC 8414 §3.3), or dropped when it is not a clean URL.
  const urls = (list: unknown) =>
    Array.isArray(list)
      ? list.slice(0, 16).filter((u): u is string => typeof u === "string" && isCleanUrl(u))
      : undefined;
  const servers = urls(prm.authorization_servers);
  const scopes = cleanScopes(prm.scopes_supported);
  const name = typeof prm.resource_name === "string" ? peerText(prm.resource_name) : "";
  const methods = Array.isArray(prm.bearer_methods_supported)
    ? prm.bearer_methods_supported.filter((m) => m === "header" || m === "body" || m === "query")
    : [];
  return {
    resource: canonicalUri,
    ...(name ? { resource_name: name } : {}),
    ...(servers?.length ? { authorization_servers: servers } : {}),
    ...(scopes.length > 0 ? { scopes_supported: scopes } : {}),
    ...(methods.length > 0 ? { bearer_methods_supported: methods } : {}),
  };
}

/** Scope tokens (RFC 6749 §3.3: printable ASCII but space, `"` and `\`), bounded; anything else dropped. */
export function cleanScopes(scopes: readonly unknown[] | undefined): string[] {
  if (!Array.isArray(scopes)) return [];
  const out = new Set<string>();
  for (const scope of scopes) {
    if (typeof scope !== "string" || scope.length === 0 || scope.length > MAX_SCOPE_LENGTH)
      continue;
    if (!/^[\x21\x23-\x5b\x5d-\x7e]+$/.test(scope)) continue;
    out.add(scope);
    if (out.size >= MAX_SCOPES) break;
  }
  return [...out];
}

/** The session's entry for one MCP server (a bare top-level customization: host-originated). */
export function customization(
  id: string,
  uri: string,
  name: string,
  state: McpServerState,
): McpServerCustomization {
  return { type: "mcpServer", id, uri, name: peerText(name, { max: 100 }), state };
}

export function customizationUpdated(entry: McpServerCustomization): SessionMcpAction {
  return { type: "session/customizationUpdated", customization: entry };
}

/** The entry is gone from the session (`session/customizationRemoved`, by id). */
export function customizationRemoved(id: string): SessionMcpAction {
  return { type: "session/customizationRemoved", id };
}

export function mcpServerStateChanged(id: string, state: McpServerState): SessionMcpAction {
  return { type: "session/mcpServerStateChanged", id, state };
}

/** The `action` notification for a session channel (`origin` absent: the host itself made the change). */
export function actionNotification(
  channel: string,
  action: SessionMcpAction,
  serverSeq: number,
): Notification {
  const params: ActionEnvelope = { channel, action, serverSeq };
  return { method: AhpMethods.action, params };
}

/** An absolute http(s) URL with nothing `peerText` would change (no control or bidi characters), bounded. */
function isCleanUrl(value: string): boolean {
  const url = URL.parse(value);
  return (
    url !== null &&
    (url.protocol === "https:" || url.protocol === "http:") &&
    value.length <= 2048 &&
    peerText(value, { max: 2048 }) === value
  );
}
