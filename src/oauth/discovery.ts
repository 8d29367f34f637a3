/**
 * Metadata discovery: RFC 8414 / OpenID Connect authorization-server metadata with the issuer echo check, and
 * RFC 9728 protected-resource metadata (path-aware well-known URL, or the `resource_metadata` URL of a challenge).
 * Results are cached with a TTL; failures are not.
 */

import * as oauth from "oauth4webapi";
import { DiscoveryError, toOAuthError } from "./errors.ts";
import { isLoopback, type RequestPolicy, requestOptions } from "./http.ts";

export type AuthorizationServer = oauth.AuthorizationServer;
export type ProtectedResourceMetadata = oauth.ResourceServer;

export interface DiscoveryOptions extends RequestPolicy {
  /** How long a successful result is reused. Default 10 minutes. */
  ttlMs?: number;
  cache?: MetadataCache;
}

export const DEFAULT_METADATA_TTL_MS = 10 * 60_000;

/** A small TTL cache keyed by URL; one per process is enough (`defaultMetadataCache`). */
export class MetadataCache {
  readonly #entries = new Map<string, { value: unknown; expiresAt: number }>();

  get<T>(key: string): T | undefined {
    const entry = this.#entries.get(key);
    if (!entry) return undefined;
    if (entry.expiresAt <= Date.now()) {
      this.#entries.delete(key);
      return undefined;
    }
    return entry.value as T;
  }

  set(key: string, value: unknown, ttlMs: number): void {
    this.#entries.set(key, { value, expiresAt: Date.now() + ttlMs });
  }

  clear(): void {
    this.#entries.clear();
  }
}

export const defaultMetadataCache = new MetadataCache();

/**
 * Tries, in order (as the MCP SDK and RFC 8414 §5 suggest): RFC 8414 with the well-known segment inserted before
 * the issuer's path, OpenID Connect with the same insertion, then OpenID Connect Discovery 1.0 with it appended
 * (the three coincide partly for an issuer without a path). Any non-200 answer moves on to the next URL; when
 * none has metadata, the error names every URL and what it answered. The document's `issuer` must equal the
 * issuer we asked about (RFC 8414 §3.3), which oauth4webapi checks.
 */
export async function discoverAuthorizationServer(
  issuer: string | URL,
  options: DiscoveryOptions = {},
): Promise<AuthorizationServer> {
  const issuerUrl = parseUrl(issuer, "issuer");
  const cache = options.cache ?? defaultMetadataCache;
  const key = `as:${issuerUrl.href}`;
  const cached = cache.get<AuthorizationServer>(key);
  if (cached) return cached;

  const tried: string[] = [];
  for (const url of metadataUrls(issuerUrl)) {
    try {
      const { signal } = requestOptions(url, options);
      // Manual redirects, like oauth4webapi: metadata must be served at the well-known URL itself.
      const response = await fetch(url, {
        headers: { accept: "application/json" },
        redirect: "manual",
        signal,
      });
      if (response.status !== 200) {
        await response.body?.cancel();
        tried.push(`${url.href} (${response.status})`);
        continue;
      }
      const as = await oauth.processDiscoveryResponse(issuerUrl, response);
      cache.set(key, as, options.ttlMs ?? DEFAULT_METADATA_TTL_MS);
      return as;
    } catch (error) {
      throw discoveryFailure(error, issuerUrl);
    }
  }
  throw new DiscoveryError(
    "metadata_not_found",
    `No authorization server metadata for the issuer ${issuerUrl.href}. Tried ${tried.join(", ")}. Check the ` +
      "issuer URL: it must be exactly the server's issuer, path included (no trailing /.well-known/...).",
  );
}

/** The well-known metadata URLs for an issuer, without duplicates, in the order they are tried. */
export function metadataUrls(issuer: URL): URL[] {
  const path = issuer.pathname.replace(/\/+$/, "");
  const candidates = [
    `${issuer.origin}/.well-known/oauth-authorization-server${path}`,
    `${issuer.origin}/.well-known/openid-configuration${path}`,
    `${issuer.origin}${path}/.well-known/openid-configuration`,
  ];
  return [...new Set(candidates)].map((href) => new URL(href));
}

/**
 * RFC 9728 §3: fetch the protected resource's metadata. With `resourceMetadataUrl` (from a `WWW-Authenticate`
 * challenge, §5.1) that URL is used as given; otherwise the path-aware well-known URL is built from `resource`.
 * Either way the document's `resource` must equal the resource being accessed (§3.3), or it is refused.
 */
export async function discoverProtectedResource(
  resource: string | URL,
  options: DiscoveryOptions & { resourceMetadataUrl?: string | URL } = {},
): Promise<ProtectedResourceMetadata> {
  const resourceUrl = parseUrl(resource, "resource");
  const metadataUrl = options.resourceMetadataUrl
    ? parseUrl(options.resourceMetadataUrl, "resource_metadata")
    : undefined;
  const cache = options.cache ?? defaultMetadataCache;
  const key = `prm:${resourceUrl.href}|${metadataUrl?.href ?? ""}`;
  const cached = cache.get<ProtectedResourceMetadata>(key);
  if (cached) return cached;
  try {
    const response = metadataUrl
      ? await fetch(metadataUrl, {
          headers: { accept: "application/json" },
          ...requestOptions(metadataUrl, options),
        })
      : await oauth.resourceDiscoveryRequest(resourceUrl, requestOptions(resourceUrl, options));
    const metadata = await oauth.processResourceDiscoveryResponse(resourceUrl, response);
    cache.set(key, metadata, options.ttlMs ?? DEFAULT_METADATA_TTL_MS);
    return metadata;
  } catch (error) {
    throw discoveryFailure(error, resourceUrl, "resource_mismatch");
  }
}

/**
 * Marks a provider preset's static metadata whose documentation says nothing about PKCE (Slack, Notion). The flow
 * then still sends an S256 challenge (RFC 6749 §3.1: unknown parameters are ignored), and is allowed only for a
 * confidential client, whose secret protects the code exchange.
 */
export const pkceUndocumented: unique symbol = Symbol("agentauth.pkceUndocumented");

/**
 * RFC 7636 + OAuth 2.1: we only speak S256; a server that does not advertise it is refused, never downgraded,
 * except a provider marked `pkceUndocumented` with a confidential client.
 */
export function assertPkceS256(
  as: AuthorizationServer & { [pkceUndocumented]?: boolean },
  client?: { clientSecret?: unknown },
): void {
  if (as.code_challenge_methods_supported?.includes("S256")) return;
  if (as[pkceUndocumented] && client?.clientSecret) return;
  throw new DiscoveryError(
    "pkce_unsupported",
    as[pkceUndocumented]
      ? `${as.issuer} does not document PKCE, so agentauth signs in to it only as a confidential client: give the client secret (e.g. --client-secret-env).`
      : `The authorization server ${as.issuer} does not advertise PKCE S256 (code_challenge_methods_supported); agentauth refuses to run the authorization code flow without it.`,
  );
}

function parseUrl(value: string | URL, what: string): URL {
  const url = typeof value === "string" ? URL.parse(value) : value;
  if (!url || (url.protocol !== "https:" && url.protocol !== "http:")) {
    throw new DiscoveryError("invalid_url", `The ${what} must be an absolute http(s) URL.`);
  }
  return url;
}

/**
 * When the issuer the server names is this very server spelt another way (localhost for 127.0.0.1, a trailing
 * slash, another loopback name on the same port), say which spelling to use: an issuer is compared exactly. A
 * server naming any other place gets no such advice (that would send the person to wherever it names).
 */
function sameServerHint(asked: URL, error: oauth.OperationProcessingError): string {
  const cause = error.cause as { attribute?: unknown; body?: Record<string, unknown> } | undefined;
  if (cause?.attribute !== "issuer" || typeof cause.body?.issuer !== "string") return "";
  const named = URL.parse(cause.body.issuer);
  if (!named || (named.protocol !== "https:" && named.protocol !== "http:")) return "";
  const loopbackPair = isLoopback(asked) && isLoopback(named) && named.port === asked.port;
  if (named.origin !== asked.origin && !(loopbackPair && named.protocol === asked.protocol))
    return "";
  const issuer = named.href.replace(/\/$/, named.pathname === "/" ? "" : "/");
  return ` The server calls itself ${issuer} (its issuer), and an issuer is compared exactly: use that, e.g. --issuer ${issuer}.`;
}

function discoveryFailure(error: unknown, url: URL, mismatchCode = "issuer_mismatch"): Error {
  if (error instanceof DiscoveryError) return error;
  if (error instanceof oauth.OperationProcessingError) {
    const mismatch = error.code === oauth.JSON_ATTRIBUTE_COMPARISON;
    return new DiscoveryError(
      mismatch ? mismatchCode : "metadata_invalid",
      mismatch
        ? `The metadata at ${url.origin} names a different issuer or resource than the one requested; refusing it (RFC 8414 §3.3 / RFC 9728 §3.3).${sameServerHint(url, error)}`
        : `The metadata at ${url.origin} is invalid: ${error.message}`,
      { cause: error },
    );
  }
  const mapped = toOAuthError(error, "metadata discovery");
  if (mapped.code === "internal_error" || mapped.code === "invalid_response") {
    return new DiscoveryError(
      "metadata_invalid",
      `The metadata at ${url.origin} could not be read.`,
      { cause: error },
    );
  }
  return mapped;
}
