/**
 * A small protected API for the example tool: an RFC 9728 metadata document and `GET /api/me`, which checks the
 * bearer token with the foundation's verifier (RFC 9068 JWT, audience = this API) and answers RFC 6750 challenges.
 */

import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { createTokenVerifier, TokenVerificationError } from "../../oauth/index.ts";

export interface ProtectedApi {
  url: string;
  /** The RFC 8707 resource identifier tokens must be issued for. */
  resource: string;
  close(): Promise<void>;
}

export async function startProtectedApi(options: {
  issuer: string;
  port?: number;
  /**
   * The RFC 8707 resource identifier (default: `{url}/api`, which changes with the port). Instances of one API and
   * restarts of it must keep one identifier, or tokens issued for one are refused by the next (issue 22 §5).
   */
  resource?: string;
}): Promise<ProtectedApi> {
  const server: Server = createServer();
  // A taken port rejects (EADDRINUSE) instead of crashing the process with an unhandled 'error' event.
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(options.port ?? 0, "127.0.0.1", () => {
      server.off("error", reject);
      resolve();
    });
  });
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const resource = options.resource ?? `${url}/api`;
  const metadataUrl = `${url}/.well-known/oauth-protected-resource/api`;
  const verifier = createTokenVerifier({
    issuer: options.issuer,
    audience: resource,
    requiredScopes: ["read"],
    resourceMetadataUrl: metadataUrl,
  });
  server.on("request", async (req, res) => {
    const path = URL.parse(req.url ?? "/", url)?.pathname ?? "";
    const json = (status: number, body: unknown, headers: Record<string, string> = {}) => {
      res.writeHead(status, {
        "content-type": "application/json",
        "cache-control": "no-store",
        ...headers,
      });
      res.end(JSON.stringify(body));
    };
    if (req.method === "GET" && path === "/.well-known/oauth-protected-resource/api") {
      return json(200, {
        resource,
        resource_name: "agentauth example API",
        authorization_servers: [options.issuer],
        scopes_supported: ["read", "write"],
        bearer_methods_supported: ["header"],
      });
    }
    if (req.method === "GET" && path === "/api/me") {
      try {
        const token = await verifier.verify(req.headers.authorization);
        return json(200, {
          subject: token.subject,
          scopes: token.scopes,
          client_id: token.clientId,
        });
      } catch (error) {
        if (error instanceof TokenVerificationError) {
          return json(
            error.challenge.status,
            { error: error.bearerError ?? "unauthorized" },
            { "www-authenticate": error.challenge.header },
          );
        }
        return json(503, { error: "temporarily_unavailable" });
      }
    }
    json(404, { error: "not_found" });
  });
  return {
    url,
    resource,
    close: () =>
      new Promise((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
