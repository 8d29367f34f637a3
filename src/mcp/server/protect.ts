/**
 * Protects an MCP server (Streamable HTTP, `@modelcontextprotocol/server` 2.x, or any fetch-shaped handler) as an
 * OAuth resource server the way the MCP authorization spec asks: RFC 9728 metadata at the path-aware well-known URL,
 * RFC 6750 challenges that name it and the scopes needed, tokens verified with audience = the canonical server URI.
 */

import type { AuthInfo } from "@modelcontextprotocol/server";
import { AgentAuthError } from "../../core/errors.ts";
import { buildResourceChallenge, type DpopErrorCode } from "../../oauth/challenge.ts";
import type { DiscoveryOptions } from "../../oauth/discovery.ts";
import {
  createTokenVerifier,
  TokenVerificationError,
  type TokenVerifier,
  type VerifiedToken,
} from "../../oauth/verifier.ts";
import { type McpCaller, runAsMcpCaller, toAuthInfo } from "./caller.ts";
import {
  buildProtectedResourceMetadata,
  canonicalServerUri,
  McpServerConfigError,
  type ProtectedResourceMetadata,
  protectedResourceMetadataUrl,
} from "./metadata.ts";

/** Real Authorization headers are well under 1 KiB (a JWT of a few claims); longer ones are refused unparsed. */
export const MAX_AUTHORIZATION_LENGTH = 8 * 1024;

export interface McpProtectionOptions {
  /** The MCP endpoint's canonical URI (e.g. `https://mcp.example.com/mcp`): tokens must name it in `aud`. */
  canonicalUri: string;
  /** The authorization server's issuer identifier, published in the metadata and used to verify tokens. */
  issuer: string;
  /** Scopes every request needs; a token without them gets 403 `insufficient_scope` naming them. */
  requiredScopes?: string[];
  /** Scopes listed in the metadata (`scopes_supported`). Default: `requiredScopes`. */
  scopesSupported?: string[];
  resourceName?: string;
  /** Default: a JWT (RFC 9068) verifier for `issuer` with audience = `canonicalUri`. */
  verifier?: TokenVerifier;
  discovery?: DiscoveryOptions;
  /**
   * Take DPoP-bound tokens too (RFC 9449; the MCP DPoP extension, SEP-1932): `required` refuses bearer tokens,
   * `nonce` makes proofs carry a nonce the server hands out. Proofs are used once. The 401 offers the DPoP scheme.
   */
  dpop?: { required?: boolean; nonce?: boolean };
}

/** A fetch-shaped MCP handler: `createMcpHandler(...).fetch` and `transport.handleRequest` both fit. */
export type McpFetchHandler = (
  request: Request,
  options: { authInfo: AuthInfo },
) => Promise<Response>;

export type McpAuthentication =
  | { ok: true; caller: McpCaller; authInfo: AuthInfo; dpopNonce?: string }
  | { ok: false; response: Response };

export interface McpProtection {
  readonly canonicalUri: URL;
  readonly metadataUrl: URL;
  readonly metadata: ProtectedResourceMetadata;
  /** The metadata response when `request` asks for the document, else undefined. */
  metadataResponse(request: { method: string; url: string }): Response | undefined;
  /** Checks the request's bearer token: the verified caller, or the 400/401/403/503 answer to send. */
  authenticate(authorization: string | null | undefined): Promise<McpAuthentication>;
  /** The same for a whole request: a DPoP-bound token's proof is checked against its method and this server's URL. */
  authenticateRequest(request: {
    method: string;
    headers: { get(name: string): string | null };
  }): Promise<McpAuthentication>;
  /** Wraps a fetch-shaped MCP handler: metadata, then the token check, then `handler` as the verified caller. */
  fetch(handler: McpFetchHandler): (request: Request) => Promise<Response>;
}

/**
 * @example
 * const mcp = createMcpHandler(() => buildServer());
 * const protection = protectMcpServer({ canonicalUri: "https://mcp.example.com/mcp", issuer, requiredScopes: ["read"] });
 * createServer(toNodeListener(protection.fetch(mcp.fetch))).listen(443);
 */
export function protectMcpServer(options: McpProtectionOptions): McpProtection {
  const canonicalUri = canonicalServerUri(options.canonicalUri);
  if (!URL.canParse(options.issuer)) throw new McpServerConfigError("issuer", "is not a URL");
  const metadataUrl = protectedResourceMetadataUrl(canonicalUri);
  const required = options.requiredScopes ?? [];
  const metadata = buildProtectedResourceMetadata({
    canonicalUri,
    issuer: options.issuer,
    scopesSupported: options.scopesSupported ?? required,
    resourceName: options.resourceName,
  });
  // Built once so a bad scope fails at start, not on the first request.
  const challenge = (error?: DpopErrorCode, description?: string) =>
    buildResourceChallenge({
      error,
      errorDescription: description,
      scope: required,
      resourceMetadata: metadataUrl.href,
      dpop: options.dpop,
    });
  challenge();
  const verifier =
    options.verifier ??
    createTokenVerifier({
      issuer: options.issuer,
      audience: canonicalUri.href,
      requiredScopes: required,
      resourceMetadataUrl: metadataUrl.href,
      discovery: options.discovery,
      dpop: options.dpop,
    });
  const body = JSON.stringify(metadata);

  const refuse = (
    error: DpopErrorCode | undefined,
    description?: string,
    nonce?: string,
  ): Response => {
    const { status, header } = challenge(error, description);
    const headers: Record<string, string> = {
      "www-authenticate": header,
      "cache-control": "no-store",
    };
    if (nonce) headers["dpop-nonce"] = nonce;
    return Response.json(
      error ? { error, error_description: description } : { error: "unauthorized" },
      { status, headers },
    );
  };

  const authenticateRequest = async (request: {
    method: string;
    headers: { get(name: string): string | null };
  }): Promise<McpAuthentication> => {
    const authorization = request.headers.get("authorization");
    const proof = request.headers.get("dpop");
    if (
      (authorization && authorization.length > MAX_AUTHORIZATION_LENGTH) ||
      (proof && proof.length > MAX_AUTHORIZATION_LENGTH)
    ) {
      return {
        ok: false,
        response: refuse("invalid_request", "The Authorization or DPoP header is too long."),
      };
    }
    let verified: VerifiedToken;
    try {
      // htu is this server's URL, not the Host header a proxy may have rewritten.
      verified = await verifier.verifyRequest(
        { method: request.method, url: canonicalUri.href, authorization, dpop: proof },
        required,
      );
    } catch (error) {
      if (error instanceof TokenVerificationError) {
        return {
          ok: false,
          response: refuse(error.bearerError, error.bearerError && error.message, error.dpopNonce),
        };
      }
      // The authorization server (its metadata or keys) is unreachable: not the caller's fault, so no challenge.
      const code = error instanceof AgentAuthError ? error.code : "verification_failed";
      return {
        ok: false,
        response: Response.json(
          {
            error: "temporarily_unavailable",
            error_description: `Cannot check access tokens right now (${code}); retry shortly.`,
          },
          { status: 503, headers: { "retry-after": "5", "cache-control": "no-store" } },
        ),
      };
    }
    const caller: McpCaller = {
      subject: verified.subject,
      clientId: verified.clientId,
      scopes: verified.scopes,
      expiresAt: verified.expiresAt,
    };
    return {
      ok: true,
      caller,
      authInfo: toAuthInfo(caller, canonicalUri, metadataUrl.href),
      dpopNonce: verified.dpopNonce,
    };
  };

  const authenticate = (authorization: string | null | undefined) =>
    authenticateRequest({
      method: "POST",
      headers: { get: (name) => (name === "authorization" ? (authorization ?? null) : null) },
    });

  const metadataResponse = (request: { method: string; url: string }): Response | undefined => {
    if (URL.parse(request.url)?.pathname !== metadataUrl.pathname) return undefined;
    if (request.method !== "GET" && request.method !== "HEAD") {
      return new Response(null, { status: 405, headers: { allow: "GET, HEAD" } });
    }
    // Public and cacheable briefly; browser-based clients fetch it cross-origin (RFC 9728 §3).
    return new Response(request.method === "HEAD" ? null : body, {
      status: 200,
      headers: {
        "content-type": "application/json",
        "cache-control": "max-age=300",
        "access-control-allow-origin": "*",
      },
    });
  };

  return {
    canonicalUri,
    metadataUrl,
    metadata,
    metadataResponse,
    authenticate,
    authenticateRequest,
    fetch(handler) {
      return async (request) => {
        const served = metadataResponse(request);
        if (served) return served;
        const auth = await authenticateRequest(request);
        if (!auth.ok) return auth.response;
        const response = await runAsMcpCaller(auth.caller, () =>
          handler(request, { authInfo: auth.authInfo }),
        );
        // RFC 9449 §9: the next nonce rides on every answer, so the client's next proof carries it.
        if (auth.dpopNonce) {
          const headers = new Headers(response.headers);
          headers.set("dpop-nonce", auth.dpopNonce);
          return new Response(response.body, {
            status: response.status,
            statusText: response.statusText,
            headers,
          });
        }
        return response;
      };
    },
  };
}
