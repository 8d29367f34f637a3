/**
 * Sign-in to an MCP server's authorization server (MCP authorization 2026-07-28): RFC 9728 protected-resource
 * discovery (the 401's `resource_metadata`, else the path-aware well-known URL, else the root one), RFC 8414/OIDC
 * discovery with exact issuer match, PKCE S256 required, `resource` = the server's canonical URI on every leg, RFC
 * 9207 `iss` checked before the code is redeemed (the engine's completeAuthorization), `offline_access` when listed.
 * Registration: the host's pre-registered client id, else RFC 7591 dynamic registration (Client ID Metadata
 * Documents are not built yet). The person is reached through the host's `onAuthorizationUrl` only.
 */

import {
  type AuthorizationServer,
  assertPkceS256,
  type DiscoveryOptions,
  discoverAuthorizationServer,
  discoverProtectedResource,
  login,
  MetadataCache,
  type OAuthClient,
  type ProtectedResourceMetadata,
  registerClient,
} from "../../oauth/index.ts";
import type { CredentialRecord, CredentialStore } from "../../vault/index.ts";
import type { UnauthorizedHints } from "./challenge.ts";
import { McpAuthError } from "./errors.ts";

export interface SignInOptions {
  canonicalUri: string;
  subject: string;
  store: CredentialStore;
  hints: UnauthorizedHints;
  onAuthorizationUrl: (url: URL) => Promise<void>;
  /** Pre-registered client per issuer; else dynamic registration (cached in `registrations`). */
  clientFor?: (issuer: string) => OAuthClient | undefined;
  registrations: Map<string, Promise<OAuthClient>>;
  clientName?: string;
  discovery?: DiscoveryOptions;
  timeoutMs?: number;
}

/** RFC 9728 §3 + MCP: the challenge's URL first, then path-aware well-known, then the root well-known URL. */
export async function discoverServerMetadata(
  canonicalUri: string,
  hints: UnauthorizedHints,
  discovery: DiscoveryOptions = {},
): Promise<ProtectedResourceMetadata> {
  if (hints.resourceMetadataUrl) {
    return discoverProtectedResource(canonicalUri, {
      ...discovery,
      resourceMetadataUrl: hints.resourceMetadataUrl,
    });
  }
  try {
    return await discoverProtectedResource(canonicalUri, discovery);
  } catch (pathAware) {
    const root = new URL("/.well-known/oauth-protected-resource", canonicalUri);
    try {
      return await discoverProtectedResource(canonicalUri, {
        ...discovery,
        resourceMetadataUrl: root,
      });
    } catch {
      throw pathAware;
    }
  }
}

/** The authorization server the metadata names (the first one: MCP lets the client choose). */
export async function authorizationServerOf(
  prm: ProtectedResourceMetadata,
  canonicalUri: string,
  discovery?: DiscoveryOptions,
): Promise<AuthorizationServer> {
  const issuer = prm.authorization_servers?.[0];
  if (!issuer) {
    throw new McpAuthError(
      "no_authorization_server",
      `The MCP server ${canonicalUri} names no authorization server in its protected resource metadata; it cannot be signed in to.`,
    );
  }
  const as = await discoverAuthorizationServer(issuer, discovery);
  assertPkceS256(as);
  return as;
}

/** Scopes to ask for: the challenge's, else the metadata's, plus `offline_access` when the server lists it. */
export function scopesFor(
  hints: UnauthorizedHints,
  prm: ProtectedResourceMetadata,
  as: AuthorizationServer,
): string {
  const scopes = new Set(hints.scope ?? prm.scopes_supported ?? []);
  if (as.scopes_supported?.includes("offline_access")) scopes.add("offline_access");
  return [...scopes].join(" ");
}

export async function signInToMcpServer(options: SignInOptions): Promise<CredentialRecord> {
  const { canonicalUri, hints, discovery } = options;
  // Read afresh: a sign-in follows a 401, and the server may have moved to another authorization server.
  const prm = await discoverServerMetadata(canonicalUri, hints, {
    ...discovery,
    cache: new MetadataCache(),
  });
  const as = await authorizationServerOf(prm, canonicalUri, discovery);
  const client = await clientFor(options, as);
  return login({
    issuer: as.issuer,
    client,
    flow: "browser",
    store: options.store,
    scope: scopesFor(hints, prm, as),
    resource: canonicalUri,
    subject: options.subject,
    discovery,
    timeoutMs: options.timeoutMs,
    openUrl: (url) => options.onAuthorizationUrl(url),
  });
}

/** Registrations are per issuer (RFC 6749 §2.2): a changed authorization server registers again. */
function clientFor(options: SignInOptions, as: AuthorizationServer): Promise<OAuthClient> {
  const preRegistered = options.clientFor?.(as.issuer);
  if (preRegistered) return Promise.resolve(preRegistered);
  let registration = options.registrations.get(as.issuer);
  if (!registration) {
    registration = registerClient({
      as,
      metadata: {
        client_name: options.clientName ?? "agentauth MCP client",
        application_type: "native",
        redirect_uris: ["http://127.0.0.1/callback"],
        grant_types: ["authorization_code", "refresh_token"],
        response_types: ["code"],
        token_endpoint_auth_method: "none",
      },
      ...options.discovery,
    });
    registration.catch(() => options.registrations.delete(as.issuer));
    options.registrations.set(as.issuer, registration);
  }
  return registration;
}
