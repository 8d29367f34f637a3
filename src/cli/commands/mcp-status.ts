/**
 * `agentauth mcp status|logout <server-url>`: the vault's credentials whose RFC 8707 resource is the MCP server's
 * canonical URI, or else covers it (its origin or a path prefix, as a root metadata document names it) (any subject
 * and issuer, or one --subject). Status only reads the vault (no network, no key);
 * logout revokes at the authorization server (RFC 7009, the engine's logout) and deletes.
 */

import { peerText } from "../../core/display.ts";
import type { AgentAuthError } from "../../core/errors.ts";
import { coveringResource } from "../../mcp/client/discovery.ts";
import { serverResourceUri } from "../../mcp/client/provider.ts";
import { logout } from "../../oauth/index.ts";
import { openExistingVault, type VaultStore } from "../../vault/index.ts";
import type { CredentialStatus, CredentialSummary } from "../../vault/types.ts";
import { type CliIo, EXIT, jsonLine } from "../io.ts";

export interface McpStatusOptions {
  serverUrl: URL;
  subject?: string;
  json: boolean;
}

/** What is shown of a credential: never a token, every field a peer sent made safe for a terminal. */
export interface CredentialView {
  id: string;
  subject: string;
  issuer: string;
  clientId: string;
  scopes: string[];
  /** ISO 8601, or null when the server did not say. */
  expiresAt: string | null;
  expired: boolean;
  refreshToken: boolean;
  status: CredentialStatus;
  /** Whether a program can get a token from it without a new sign-in. */
  usable: boolean;
}

export function credentialView(c: {
  id: string;
  subject: string;
  issuer: string;
  clientId: string;
  scopes: string[];
  expiresAt?: number;
  status: CredentialStatus;
  refreshToken: boolean;
}): CredentialView {
  const expired = c.expiresAt !== undefined && c.expiresAt <= Date.now();
  return {
    id: c.id,
    subject: peerText(c.subject, { max: 200 }),
    issuer: peerText(c.issuer, { max: 300 }),
    clientId: peerText(c.clientId, { max: 200 }),
    scopes: c.scopes.map((s) => peerText(s, { max: 100 })).filter((s) => s !== ""),
    expiresAt: c.expiresAt === undefined ? null : new Date(c.expiresAt).toISOString(),
    expired,
    refreshToken: c.refreshToken,
    status: c.status,
    usable: c.status === "active" && (!expired || c.refreshToken),
  };
}

async function listFor(io: CliIo, options: McpStatusOptions, readOnly: boolean) {
  const server = serverResourceUri(options.serverUrl);
  const store = openExistingVault({ env: io.env, readOnly });
  if (!store) return { server, store: undefined, found: [] };
  try {
    const subject = options.subject ? { subject: options.subject } : {};
    const exact = await store.list({ resource: server, ...subject });
    if (exact.length > 0) return { server, store, found: exact };
    // A server whose metadata names its origin (or a path prefix) as the resource: the sign-in is kept under that.
    const covering = (await store.list(subject)).filter(
      (c) => coveringResource(c.resource, server) !== undefined,
    );
    return { server, store, found: covering };
  } catch (error) {
    await store.close();
    throw error;
  }
}

export async function mcpStatus(io: CliIo, options: McpStatusOptions): Promise<number> {
  const { server, store, found } = await listFor(io, options, true);
  await store?.close();
  const views = found.map((c) => credentialView({ ...c, refreshToken: c.has.refreshToken }));
  const signedIn = views.some((v) => v.usable);
  const shown = peerText(server, { max: 300 });
  if (options.json) {
    io.stdout(jsonLine({ server, signedIn, credentials: views }));
  } else if (views.length === 0) {
    io.stdout(
      `Not signed in to ${shown}${options.subject ? ` as ${peerText(options.subject)}` : ""}: the vault holds ` +
        `nothing for it. Run 'agentauth mcp login ${shown}${subjectFlag(options.subject)}'.\n`,
    );
  } else {
    for (const [i, v] of views.entries()) {
      const resource = found[i]?.resource ?? server;
      io.stdout(
        describe(shown, v, resource === server ? undefined : peerText(resource, { max: 300 })),
      );
    }
    if (!signedIn) {
      io.stdout(
        `Run 'agentauth mcp login ${shown}${subjectFlag(options.subject)}' to sign in again.\n`,
      );
    }
  }
  return signedIn ? EXIT.ok : EXIT.loginRequired;
}

/**
 * The `--subject` to repeat in a suggested login, so the new sign-in lands where this command looked: without it
 * the login would store under the default subject and this command would still find nothing. Quoted for a shell
 * when it is more than plain characters.
 */
function subjectFlag(subject: string | undefined): string {
  if (subject === undefined) return "";
  const text = peerText(subject, { max: 100 });
  return /^[A-Za-z0-9._@:+=-]+$/.test(text)
    ? ` --subject ${text}`
    : ` --subject '${text.replaceAll("'", `'\\''`)}'`;
}

function describe(shown: string, v: CredentialView, keptFor?: string): string {
  const state = v.usable
    ? "Signed in"
    : v.status === "login_required"
      ? "Sign-in expired (the refresh token was refused)"
      : "Sign-in expired (no refresh token)";
  const expiry = v.expiresAt
    ? `${v.expired ? "expired" : "expires"} ${v.expiresAt}`
    : "expiry not stated by the server";
  return (
    `${state} to ${shown} as ${v.subject} at ${v.issuer}\n` +
    (keptFor
      ? `  through the sign-in kept for ${keptFor} (its resource covers this URL; 'agentauth mcp status ${keptFor}' shows it)\n`
      : "") +
    `  scopes: ${v.scopes.length > 0 ? v.scopes.join(" ") : "(none named)"}\n` +
    `  access token: ${expiry}; refresh token: ${v.refreshToken ? "held" : "none"}\n` +
    `  client: ${v.clientId}; vault id: ${v.id}\n`
  );
}

interface LogoutView {
  id: string;
  subject: string;
  issuer: string;
  revoked: boolean;
  deleted: boolean;
  note?: string;
}

export async function mcpLogout(io: CliIo, options: McpStatusOptions): Promise<number> {
  const { server, store, found } = await listFor(io, options, false);
  const shown = peerText(server, { max: 300 });
  const results: LogoutView[] = [];
  const failures: string[] = [];
  if (store) {
    try {
      for (const c of found) {
        const { view, failure } = await signOut(store, c);
        results.push(view);
        if (failure) failures.push(failure);
      }
    } finally {
      await store.close();
    }
  }
  if (options.json) {
    const line = { server, credentials: results };
    io.stdout(
      jsonLine(
        failures.length > 0
          ? { ...line, error: { code: "revocation_failed", message: failures.join(" ") } }
          : line,
      ),
    );
  } else if (results.length === 0) {
    const as = options.subject ? ` as ${peerText(options.subject)}` : "";
    io.stdout(`Not signed in to ${shown}${as}; nothing to sign out of.\n`);
  } else {
    for (const r of results) {
      if (r.revoked)
        io.stdout(`Signed out of ${shown} as ${r.subject}: revoked at ${r.issuer} and deleted.\n`);
      else if (r.deleted)
        io.stdout(`Signed out of ${shown} as ${r.subject}: ${r.note ?? "deleted"}.\n`);
    }
    for (const f of failures) io.stderr(`agentauth: ${f}\n`);
  }
  return failures.length > 0 ? EXIT.failure : EXIT.ok;
}

/** One credential: revoked and deleted; forgotten when the server cannot revoke; kept when revocation failed. */
async function signOut(
  store: VaultStore,
  c: CredentialSummary,
): Promise<{ view: LogoutView; failure?: string }> {
  const key = { subject: c.subject, issuer: c.issuer, resource: c.resource };
  const at = peerText(c.issuer, { max: 300 });
  const base = { id: c.id, subject: peerText(c.subject), issuer: at };
  const result = await logout({ store, key });
  const code = (result.error as AgentAuthError | undefined)?.code;
  if (result.revoked || !result.found) {
    return { view: { ...base, revoked: result.revoked, deleted: result.deleted } };
  }
  if (code === "revocation_unsupported") {
    // RFC 7009 is optional: the server cannot be told, so the tokens are only forgotten here.
    const deleted = await store.delete(key);
    const note = `${at} has no revocation endpoint; the tokens were only forgotten locally and stay valid there until they expire`;
    return { view: { ...base, revoked: false, deleted, note } };
  }
  const why = peerText(result.error?.message ?? "unknown error", { max: 500 });
  return {
    view: { ...base, revoked: false, deleted: false, note: "revocation failed; kept" },
    failure:
      `could not revoke ${c.id} at ${at}: ${why} The credential is kept; retry later, or run ` +
      `'agentauth vault delete ${c.id}' to forget it without revoking.`,
  };
}
