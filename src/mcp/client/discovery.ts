/**
 * Where an MCP server's tokens come from (MCP authorization 2026-07-28, "Authorization Server Discovery"), and the
 * 2025-03-26 revision's fallback for servers that publish no protected-resource metadata.
 *
 * 1. RFC 9728 metadata: the 401 challenge's `resource_metadata` URL (same origin, checked by `readUnauthorized`),
 *    else the path-aware well-known URL, else the root one. Fetched without following redirects (a same-origin URL
 *    that redirects elsewhere is not followed, and the target's scheme is never trusted), capped at 64 KB. The
 *    document's `resource` must cover the server: equal to its URL, or its origin or a path prefix of it on the same
 *    origin (a root document names the origin). That value is the RFC 8707 `resource` tokens are asked for and kept
 *    under. When no document is accepted, the error says why: a document naming another resource beats a 404.
 * 2. The authorization server it names: RFC 8414/OIDC metadata with an exact issuer (discovery.ts in the engine),
 *    PKCE S256 advertised, and, for a server learnt this way rather than configured, every endpoint that receives a
 *    code, a token or the person on the issuer's own origin (RFC 9700 §4.4 mix-up: a hostile MCP server naming a
 *    real authorization endpoint beside its own token endpoint would otherwise receive the person's code).
 * 3. No metadata anywhere (every URL answered without a document, and the challenge named none): the 2025-03-26
 *    rules. The authorization server is the MCP server's origin, its RFC 8414 metadata there, else the default
 *    endpoints `/authorize`, `/token` and `/register`; the resource is the server's URL.
 */

import * as oauth from "oauth4webapi";
import { z } from "zod";
import {
  type AuthorizationServer,
  assertPkceS256,
  DiscoveryError,
  type DiscoveryOptions,
  discoverAuthorizationServer,
  type ProtectedResourceMetadata,
  readCappedText,
  requestOptions,
} from "../../oauth/index.ts";
import type { UnauthorizedHints } from "./challenge.ts";
import { McpAuthError } from "./errors.ts";
import { displayMcpServerUrl } from "./server-url.ts";

/** What signs a person (or a workload) in to an MCP server. */
export interface McpAuthorizationTarget {
  /** The RFC 8707 resource: what tokens are asked for, and the vault key's resource. */
  resource: string;
  as: AuthorizationServer;
  /** The protected resource metadata; absent for a 2025-03-26 server, which publishes none. */
  prm?: ProtectedResourceMetadata;
  /** `metadata`: named by the server's RFC 9728 document; `legacy`: the server's origin, by the 2025-03-26 rules. */
  source: "metadata" | "legacy";
  /** `legacy` with no metadata at all: the 2025-03-26 default endpoints, which the server may not have. */
  defaultEndpoints?: boolean;
}

export interface McpDiscoveryOptions extends DiscoveryOptions {
  /**
   * Authorization servers (issuers, exactly as their metadata names them) whose endpoints may live on another origin
   * than the issuer, or `true` for any. Default none: see the module comment. Some real servers need it (Google's
   * token endpoint is on oauth2.googleapis.com, Amazon Cognito's endpoints on its hosted domain).
   */
  crossOriginEndpoints?: boolean | readonly string[];
}

/**
 * RFC 9728 §2, the members agentauth reads (others pass through). Strict on their types: a `resource` that is not a
 * string, or authorization servers that are not strings, make the document invalid rather than half-read.
 */
const ProtectedResourceDocument = z.looseObject({
  resource: z.string(),
  authorization_servers: z.array(z.string()).optional(),
  scopes_supported: z.array(z.string()).optional(),
  bearer_methods_supported: z.array(z.string()).optional(),
  dpop_signing_alg_values_supported: z.array(z.string()).optional(),
});

/** A metadata document is a page of JSON: anything larger is not read. */
const MAX_METADATA_BYTES = 64_000;
/** Endpoints that receive the person, a code, a token or a secret: all on the issuer's origin unless allowed. */
const GUARDED_ENDPOINTS = [
  "authorization_endpoint",
  "token_endpoint",
  "device_authorization_endpoint",
  "registration_endpoint",
  "revocation_endpoint",
  "introspection_endpoint",
  "pushed_authorization_request_endpoint",
] as const;

/** The metadata URLs to try, in order: the challenge's alone, else path-aware then root (once for a root server). */
export function protectedResourceCandidates(canonicalUri: string, hints: UnauthorizedHints): URL[] {
  if (hints.resourceMetadataUrl) return [hints.resourceMetadataUrl];
  const server = new URL(canonicalUri);
  const path = server.pathname.replace(/\/+$/, "");
  const urls = [
    `${server.origin}/.well-known/oauth-protected-resource${path}`,
    `${server.origin}/.well-known/oauth-protected-resource`,
  ];
  return [...new Set(urls)].map((href) => new URL(href));
}

/**
 * The metadata's `resource` when it covers the server (see the module comment), else undefined. A prefix must end
 * at a path segment (`/mcp` covers `/mcp/x`, not `/mcpx`) and carry no query; a query is accepted only as part of the
 * server's URL itself. No fragment, no user name (RFC 8707 §2).
 */
export function coveringResource(resource: unknown, canonicalUri: string): string | undefined {
  if (typeof resource !== "string" || resource.length > 2048) return undefined;
  const claimed = URL.parse(resource);
  const server = new URL(canonicalUri);
  if (!claimed || claimed.hash || resource.includes("#") || claimed.username || claimed.password)
    return undefined;
  if (claimed.protocol !== server.protocol || claimed.host !== server.host) return undefined;
  if (claimed.href === server.href) return resource;
  if (claimed.search || resource.includes("?")) return undefined;
  const withSlash = (path: string) => (path.endsWith("/") ? path : `${path}/`);
  return withSlash(server.pathname).startsWith(withSlash(claimed.pathname)) ? resource : undefined;
}

/**
 * The MCP server's protected resource metadata (step 1 of the module comment). A `DiscoveryError` says why none
 * was accepted: `resource_mismatch` (a document names another resource), `metadata_invalid`, or `metadata_not_found`
 * (no URL answered with a document; the message lists each URL and its status).
 */
export async function discoverServerMetadata(
  canonicalUri: string,
  hints: UnauthorizedHints,
  discovery: DiscoveryOptions = {},
): Promise<ProtectedResourceMetadata> {
  const tried: string[] = [];
  let mismatch: { url: URL; resource: string } | undefined;
  for (const url of protectedResourceCandidates(canonicalUri, hints)) {
    const document = await fetchMetadata(url, discovery, tried);
    if (!document) continue;
    const resource = coveringResource(document.resource, canonicalUri);
    if (resource !== undefined) return document;
    mismatch ??= { url, resource: String(document.resource) };
  }
  const shown = displayMcpServerUrl(canonicalUri);
  if (mismatch) {
    throw new DiscoveryError(
      "resource_mismatch",
      `The protected resource metadata at ${mismatch.url.origin}${mismatch.url.pathname} names another resource (${claimedOrigin(mismatch.resource)}) than the MCP server ${shown}, nor a prefix of it on its origin; refusing it (RFC 9728 §3.3). Check the server URL, or ask the server's operator to fix its metadata.`,
    );
  }
  throw new DiscoveryError(
    "metadata_not_found",
    `The MCP server ${shown} publishes no OAuth protected resource metadata (RFC 9728). Tried ${tried.join(", ")}.`,
  );
}

/** What a refused `resource` is shown as: its origin at most (its path is peer text, and could smuggle some). */
function claimedOrigin(resource: string): string {
  const url = URL.parse(resource);
  return url && (url.protocol === "https:" || url.protocol === "http:")
    ? `a resource on ${url.origin}`
    : "not an http(s) URL";
}

/** One metadata URL: the document, or undefined (noted in `tried`) when it answered without one. */
async function fetchMetadata(
  url: URL,
  discovery: DiscoveryOptions,
  tried: string[],
): Promise<ProtectedResourceMetadata | undefined> {
  let response: Response;
  try {
    response = await fetch(url, {
      headers: { accept: "application/json" },
      // Never followed: a redirect could lead discovery to another origin, or to plain http.
      redirect: "manual",
      signal: requestOptions(url, discovery).signal,
    });
  } catch (error) {
    throw new DiscoveryError(
      "metadata_unreachable",
      `The protected resource metadata at ${url.origin} could not be fetched; check that the MCP server is running.`,
      { cause: error },
    );
  }
  if (response.status !== 200) {
    await response.body?.cancel().catch(() => {});
    const redirected = response.status >= 300 && response.status < 400;
    tried.push(`${url.href} (${response.status}${redirected ? ", a redirect, not followed" : ""})`);
    return undefined;
  }
  const text = await readCappedText(response, MAX_METADATA_BYTES);
  try {
    if (text === undefined) throw new Error(`larger than ${MAX_METADATA_BYTES} bytes`);
    return ProtectedResourceDocument.parse(JSON.parse(text)) as ProtectedResourceMetadata;
  } catch (error) {
    throw new DiscoveryError(
      "metadata_invalid",
      `The protected resource metadata at ${url.origin}${url.pathname} is not a valid RFC 9728 document; ask the MCP server's operator to fix it.`,
      { cause: error },
    );
  }
}

/** Steps 1 to 3 of the module comment: the resource, and the authorization server, checked. */
export async function discoverMcpAuthorization(
  canonicalUri: string,
  hints: UnauthorizedHints,
  options: McpDiscoveryOptions = {},
): Promise<McpAuthorizationTarget> {
  let prm: ProtectedResourceMetadata;
  try {
    prm = await discoverServerMetadata(canonicalUri, hints, options);
  } catch (error) {
    // A server that named a metadata URL, or published a document we refused, is not a 2025-03-26 server.
    const absent = error instanceof DiscoveryError && error.code === "metadata_not_found";
    if (!absent || hints.resourceMetadataUrl) throw error;
    return legacyAuthorization(canonicalUri, options);
  }
  const issuer = prm.authorization_servers?.[0];
  if (!issuer) {
    throw new McpAuthError(
      "no_authorization_server",
      `The MCP server ${displayMcpServerUrl(canonicalUri)} names no authorization server in its protected resource metadata; it cannot be signed in to.`,
    );
  }
  const as = await discoverAuthorizationServer(issuer, options);
  assertPkceS256(as);
  assertEndpointsOnIssuer(as, canonicalUri, options.crossOriginEndpoints);
  return {
    resource: coveringResource(prm.resource, canonicalUri) as string,
    as,
    prm,
    source: "metadata",
  };
}

/**
 * MCP 2025-03-26, "Server Metadata Discovery" and "Fallbacks for Servers without Metadata Discovery": the
 * authorization base URL is the server URL without its path; RFC 8414 metadata there, else the default endpoints.
 * That revision requires PKCE of every client and server, so the defaults advertise S256 (it is always sent).
 *
 * Tolerant on one point: that revision locates the metadata by the server's origin, not by an issuer identifier,
 * and servers of its time name an issuer with a path (`https://mcp.example.com/oauth`), which RFC 8414 §3.3's exact
 * comparison with the origin would refuse. A document whose `issuer` is on the MCP server's own origin is accepted,
 * and that issuer is used from then on (vault keys, RFC 9207 `iss`); one naming another origin is refused, and the
 * endpoints must be on that origin too, so nothing leaves the server the person configured.
 */
async function legacyAuthorization(
  canonicalUri: string,
  options: McpDiscoveryOptions,
): Promise<McpAuthorizationTarget> {
  const origin = new URL(canonicalUri).origin;
  const found = await legacyMetadata(origin, options);
  const as = found ?? {
    issuer: origin,
    authorization_endpoint: `${origin}/authorize`,
    token_endpoint: `${origin}/token`,
    registration_endpoint: `${origin}/register`,
    code_challenge_methods_supported: ["S256"],
  };
  assertPkceS256(as);
  assertEndpointsOnIssuer(as, canonicalUri, options.crossOriginEndpoints);
  return {
    resource: canonicalUri,
    as,
    source: "legacy",
    ...(found ? {} : { defaultEndpoints: true }),
  };
}

/** RFC 8414 metadata at the origin (then OIDC's), read as `legacyAuthorization` says; undefined when absent. */
async function legacyMetadata(
  origin: string,
  options: McpDiscoveryOptions,
): Promise<AuthorizationServer | undefined> {
  for (const path of [
    "/.well-known/oauth-authorization-server",
    "/.well-known/openid-configuration",
  ]) {
    const url = new URL(path, origin);
    const response = await fetch(url, {
      headers: { accept: "application/json" },
      redirect: "manual",
      signal: requestOptions(url, options).signal,
    }).catch((cause: unknown) => {
      throw new DiscoveryError(
        "metadata_unreachable",
        `The authorization server metadata at ${origin} could not be fetched; check that the MCP server is running.`,
        { cause },
      );
    });
    if (response.status !== 200) {
      await response.body?.cancel().catch(() => {});
      continue;
    }
    const text = await readCappedText(response, MAX_METADATA_BYTES);
    const issuer = URL.parse(String(safeJson(text)?.issuer ?? ""));
    if (!text || !issuer || issuer.origin !== origin) {
      throw new DiscoveryError(
        "issuer_mismatch",
        `The authorization server metadata at ${url.href} names no issuer on the MCP server's origin ${origin}; refusing it (RFC 8414 §3.3).`,
      );
    }
    try {
      const copy = new Response(text, { headers: { "content-type": "application/json" } });
      return await oauth.processDiscoveryResponse(issuer, copy);
    } catch (cause) {
      throw new DiscoveryError(
        "metadata_invalid",
        `The authorization server metadata at ${url.href} is not a valid RFC 8414 document; ask the MCP server's operator to fix it.`,
        { cause },
      );
    }
  }
  return undefined;
}

function safeJson(text: string | undefined): Record<string, unknown> | undefined {
  try {
    const value = text === undefined ? undefined : JSON.parse(text);
    return typeof value === "object" && value !== null ? value : undefined;
  } catch {
    return undefined;
  }
}

/** Step 2's origin rule (RFC 9700 §4.4): typed `endpoint_off_issuer`, naming the endpoint and how to allow it. */
export function assertEndpointsOnIssuer(
  as: AuthorizationServer,
  canonicalUri: string,
  allowed: McpDiscoveryOptions["crossOriginEndpoints"],
): void {
  if (allowed === true || (Array.isArray(allowed) && allowed.includes(as.issuer))) return;
  const issuerOrigin = new URL(as.issuer).origin;
  for (const name of GUARDED_ENDPOINTS) {
    const value = as[name];
    if (value === undefined) continue;
    const url = typeof value === "string" ? URL.parse(value) : null;
    if (url && url.origin === issuerOrigin) continue;
    throw new McpAuthError(
      "endpoint_off_issuer",
      `The authorization server ${as.issuer} named by the MCP server ${displayMcpServerUrl(canonicalUri)} puts its ${name} ${url ? `on ${url.origin}` : "at an invalid URL"}, another origin than its own; agentauth refuses it, since a server naming another's endpoints can capture your sign-in. If you trust this authorization server, allow it explicitly (crossOriginEndpoints: ["${as.issuer}"]).`,
    );
  }
}

/** The origin rule for a device flow's verification page: the person types the code only on the issuer's origin. */
export function assertVerificationOnIssuer(
  as: AuthorizationServer,
  verificationUri: string,
  canonicalUri: string,
  allowed: McpDiscoveryOptions["crossOriginEndpoints"],
): void {
  if (allowed === true || (Array.isArray(allowed) && allowed.includes(as.issuer))) return;
  const url = URL.parse(verificationUri);
  if (url && url.origin === new URL(as.issuer).origin) return;
  throw new McpAuthError(
    "endpoint_off_issuer",
    `The authorization server ${as.issuer} named by the MCP server ${displayMcpServerUrl(canonicalUri)} sent a verification page ${url ? `on ${url.origin}` : "that is not a URL"}, another origin than its own; agentauth does not show it, since entering the code there could sign you in for someone else (RFC 8628 §5.4). If you trust this authorization server, allow it explicitly (crossOriginEndpoints: ["${as.issuer}"]).`,
  );
}
