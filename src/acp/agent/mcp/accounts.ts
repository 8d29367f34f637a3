/**
 * The MCP servers as `auth/status` accounts (pure). The SDK 2.4.0 unstable `AuthAccount` has `label` (required,
 * for display) and no field for a server, a state or scopes, so each server is one account whose `label` says it in
 * words ("MCP server “github”: needs sign-in") and whose `_meta.agentauth.mcpServer` carries the structured view.
 * `active` is left out: these are not alternative credentials of the agent, and the top-level `state` stays the
 * agent's own (an MCP server needing a sign-in must not gate the agent's sessions).
 */

import { peerText } from "../../../core/display.ts";
import { displayMcpServerUrl } from "../../../mcp/client/index.ts";
import type { CredentialSummary } from "../../../vault/types.ts";
import { AGENTAUTH_META } from "../../wire.ts";
import type { ProbeResult } from "./probe.ts";
import type { SessionMcpServer } from "./servers.ts";

export type McpServerState =
  | "checking"
  | "unknown"
  | "needs_sign_in"
  | "signed_in"
  | "not_required"
  | "error";

/** What a client reads in `_meta.agentauth.mcpServer`. */
export interface McpServerAccount {
  name: string;
  /** Origin and path (a query shows as `?…`). */
  url: string;
  /**
   * Absent for a server known only from the vault: a sign-in an earlier run of the agent stored, which no session
   * has named since this one started (the vault keeps the server's URL, not how the client reached it).
   */
  transport?: "http" | "sse";
  state: McpServerState;
  /** Granted scopes when signed in; the scopes the server asks for when it needs a sign-in. */
  scopes: string[];
  /** Why it is in `error`, or why a sign-in did not happen (`sign_in_declined`, `login_required`). */
  error?: { code: string; message: string };
}

/** What the kit knows of one server besides the vault. */
export interface TrackedServer {
  server: SessionMcpServer;
  probe: ProbeResult | { state: "checking" | "unknown" };
  /** The last sign-in's failure, cleared by a successful one. */
  lastError?: { code: string; message: string };
}

const PHRASE: Record<McpServerState, string> = {
  checking: "checking",
  unknown: "not checked",
  needs_sign_in: "needs sign-in",
  signed_in: "signed in",
  not_required: "no sign-in needed",
  error: "error",
};

/** The vault wins (a stored credential is "signed in", SDK: configured, not guaranteed valid), then the last sign-in, then the probe. */
export function mcpServerAccount(
  tracked: TrackedServer,
  record: CredentialSummary | undefined,
): McpServerAccount {
  const { server } = tracked;
  const base = { name: server.name, url: server.displayUrl, transport: server.transport };
  if (server.invalid) {
    return {
      ...base,
      state: "error",
      scopes: [],
      error: { code: server.invalid.code, message: server.invalid.message },
    };
  }
  if (record?.status === "active") {
    return { ...base, state: "signed_in", scopes: scopeTokens(record.scopes) };
  }
  const asked = tracked.probe.state === "needs_sign_in" ? scopeTokens(tracked.probe.scopes) : [];
  if (record?.status === "login_required") {
    return expiredSignIn(base, record.scopes, "when it next uses it");
  }
  if (tracked.lastError) {
    const declined = ["sign_in_declined", "sign_in_cancelled"].includes(tracked.lastError.code);
    return {
      ...base,
      state: declined ? "needs_sign_in" : "error",
      scopes: asked,
      error: tracked.lastError,
    };
  }
  if (tracked.probe.state === "error") {
    return { ...base, state: "error", scopes: [], error: tracked.probe.error };
  }
  return { ...base, state: tracked.probe.state, scopes: asked };
}

/**
 * Whether a resource of the kit's subject is an MCP server's: an http(s) URL (the kit's own API keys and OAuth
 * methods without a resource use ""). One rule for listing and for `signOut`, so what is shown is what is revoked.
 */
export function isServerResource(resource: string): boolean {
  return /^https?:\/\//i.test(resource);
}

/**
 * A vault record no session has named (yet) as an account: a sign-in an earlier run of the agent stored, named by
 * its host and path since the client's name for it is not stored. Only an http(s) resource is a server; the URL is
 * the record's text (a hostile or damaged vault's), so it is re-parsed and shown as a session's server is: origin
 * and path, a query as `?…`, never a user name or password, no control or bidi characters, bounded.
 */
export function storedServerAccount(record: CredentialSummary): McpServerAccount | undefined {
  if (!isServerResource(record.resource)) return undefined;
  const url = URL.parse(record.resource);
  if (!url || (url.protocol !== "https:" && url.protocol !== "http:")) return undefined;
  const path = url.pathname === "/" ? "" : url.pathname;
  const base = {
    name: peerText(`${url.host}${path}`, { max: 100 }),
    url: peerText(displayMcpServerUrl(url), { max: 300 }),
  };
  if (record.status === "active") {
    return { ...base, state: "signed_in", scopes: scopeTokens(record.scopes) };
  }
  return expiredSignIn(base, record.scopes, "when a session uses it");
}

/** A server whose stored sign-in the authorization server no longer honours (the refresh token was refused). */
function expiredSignIn(
  base: Pick<McpServerAccount, "name" | "url" | "transport">,
  scopes: readonly unknown[],
  when: string,
): McpServerAccount {
  return {
    ...base,
    state: "needs_sign_in",
    scopes: scopeTokens(scopes),
    error: {
      code: "login_required",
      message: `The sign-in to the MCP server “${base.name}” has expired; the agent asks again ${when}.`,
    },
  };
}

// RFC 6749 §3.3 scope-token; at most this many, this long (the rest is dropped, not cut).
const SCOPE_TOKEN = /^[\x21\x23-\x5b\x5d-\x7e]{1,200}$/;
const MAX_SCOPES = 100;

/**
 * Scopes come from the server's challenge and metadata, or the authorization server's grant: peer text. Only
 * well-formed scope tokens reach a client's UI, so an escape or bidi character in one never does.
 */
function scopeTokens(scopes: readonly unknown[]): string[] {
  return scopes
    .filter((s): s is string => typeof s === "string" && SCOPE_TOKEN.test(s))
    .slice(0, MAX_SCOPES);
}

/** The `auth/status` account for a server. */
export function toStatusAccount(account: McpServerAccount): {
  label: string;
  _meta: { [AGENTAUTH_META]: { mcpServer: McpServerAccount } };
} {
  return {
    label: `MCP server “${account.name}”: ${PHRASE[account.state]}`,
    _meta: { [AGENTAUTH_META]: { mcpServer: account } },
  };
}
