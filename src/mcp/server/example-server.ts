/**
 * The example MCP server behind `agentauth mcp example-server`: a real `@modelcontextprotocol/server` 2.x server over
 * Streamable HTTP on node:http, protected by `protectMcpServer`. Every call needs a signed-in user with the base
 * scope; `whoami` answers with the verified subject and scopes, and `publish` needs one more scope, so a client sees
 * a 403 `insufficient_scope` and can exercise step-up. The SDK is an optional peer dependency: it is loaded here,
 * at run time, so the rest of agentauth loads without it.
 */

import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { loadMcpServerSdk, type McpServerSdk } from "../sdk.ts";
import { mcpCaller } from "./caller.ts";
import { toNodeListener } from "./node.ts";
import { protectMcpServer } from "./protect.ts";

type ServerSdk = McpServerSdk;

export interface ExampleMcpServerOptions {
  /** The authorization server whose tokens the server accepts (its issuer identifier). */
  issuer: string;
  /** Default 0: a free port. */
  port?: number;
  /** Default 127.0.0.1: the example is for this machine. */
  host?: string;
  /** Scopes every call needs. Default ["read"]. */
  scopes?: string[];
  /** The extra scope the `publish` tool needs. Default "write". */
  stepUpScope?: string;
  /** Overrides how the SDK is loaded (tests). */
  loadSdk?: () => Promise<ServerSdk>;
}

export interface ExampleMcpServer {
  /** The MCP endpoint, also its canonical URI (the RFC 8707 resource tokens must name). */
  url: string;
  metadataUrl: string;
  scopes: string[];
  stepUpScope: string;
  /** Stops listening and ends open connections. */
  close(): Promise<void>;
}

/**
 * @example
 * const server = await startExampleMcpServer({ issuer: "http://127.0.0.1:4444" });
 * console.log(server.url); // http://127.0.0.1:PORT/mcp
 */
export async function startExampleMcpServer(
  options: ExampleMcpServerOptions,
): Promise<ExampleMcpServer> {
  const sdk = await (options.loadSdk ?? (() => loadMcpServerSdk("The example MCP server")))();
  const scopes = options.scopes ?? ["read"];
  const stepUpScope = options.stepUpScope ?? "write";
  const host = options.host ?? "127.0.0.1";
  // The SDK wants at least one scope, typed as a non-empty tuple.
  const [base = stepUpScope, ...more] = scopes;
  const build = () => {
    const server = new sdk.McpServer({ name: "agentauth-example", version: "1.0.0" });
    server.registerTool(
      "whoami",
      { description: "Who is signed in: the verified subject, client and scopes of this call." },
      async (ctx) => {
        const caller = mcpCaller(ctx);
        const text = JSON.stringify({
          subject: caller?.subject,
          clientId: caller?.clientId,
          scopes: caller?.scopes ?? [],
        });
        return { content: [{ type: "text", text }] };
      },
    );
    // The SDK's own per-tool scope challenge answers 403 insufficient_scope naming both scopes: a client that has
    // only the base scope steps up (MCP authorization, "Scope Challenge Handling").
    server.registerTool(
      "publish",
      {
        description: `Needs the ${stepUpScope} scope on top of ${scopes.join(" ")}.`,
        scopeChallenge: sdk.requireScopes(base, ...more, stepUpScope),
      },
      async (ctx) => {
        const who = mcpCaller(ctx)?.subject ?? "someone";
        return { content: [{ type: "text", text: `published as ${who}` }] };
      },
    );
    return server;
  };
  const mcp = sdk.createMcpHandler(build);
  // The canonical URI names the port, known only once listening: requests before that get 503.
  let listener: ((req: IncomingMessage, res: ServerResponse) => void) | undefined;
  const http = createServer((req, res) => {
    if (listener) listener(req, res);
    else res.writeHead(503, { "retry-after": "1" }).end();
  });
  await new Promise<void>((resolve, reject) => {
    http.once("error", reject);
    http.listen(options.port ?? 0, host, () => {
      http.off("error", reject);
      resolve();
    });
  });
  const { port } = http.address() as AddressInfo;
  const authority = host.includes(":") ? `[${host}]` : host;
  const url = `http://${authority}:${port}/mcp`;
  let protection: ReturnType<typeof protectMcpServer>;
  try {
    protection = protectMcpServer({
      canonicalUri: url,
      issuer: options.issuer,
      requiredScopes: scopes,
      scopesSupported: [...scopes, stepUpScope],
      resourceName: "agentauth example MCP server",
    });
  } catch (error) {
    http.close();
    throw error;
  }
  listener = toNodeListener(protection.fetch(mcp.fetch));
  return {
    url,
    metadataUrl: protection.metadataUrl.href,
    scopes,
    stepUpScope,
    async close() {
      http.closeAllConnections();
      await new Promise<void>((resolve) => http.close(() => resolve()));
      await mcp.close();
    },
  };
}
