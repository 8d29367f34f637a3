/**
 * Test support: a loopback HTTP server that answers from a route table, for what a real authorization server
 * will not do on purpose (malformed metadata, wrong issuers, 500s). It records every request it receives.
 */

import { createServer, type IncomingMessage } from "node:http";
import type { AddressInfo } from "node:net";
import { after } from "node:test";

export interface ScriptedResponse {
  status?: number;
  headers?: Record<string, string>;
  body?: string | object;
}

export type Route = (
  req: IncomingMessage,
  body: string,
  origin: string,
) => ScriptedResponse | undefined;

export interface ScriptedServer {
  origin: string;
  requests: { method: string; path: string; body: string }[];
  routes: Map<string, Route>;
  close(): Promise<void>;
}

export async function scriptedServer(routes: Record<string, Route> = {}): Promise<ScriptedServer> {
  const state: ScriptedServer = {
    origin: "",
    requests: [],
    routes: new Map(Object.entries(routes)),
    close: async () => {},
  };
  const server = createServer(async (req, res) => {
    let body = "";
    for await (const chunk of req) body += chunk;
    const path = new URL(req.url ?? "/", state.origin).pathname;
    state.requests.push({ method: req.method ?? "GET", path, body });
    const answer = state.routes.get(path)?.(req, body, state.origin);
    if (!answer) {
      res.writeHead(404).end();
      return;
    }
    const text = typeof answer.body === "string" ? answer.body : JSON.stringify(answer.body ?? {});
    res.writeHead(answer.status ?? 200, { "content-type": "application/json", ...answer.headers });
    res.end(text);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  state.origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  state.close = () =>
    new Promise((resolve) => {
      server.close(() => resolve());
      server.closeAllConnections();
    });
  after(() => state.close());
  return state;
}

/** Minimal valid RFC 8414 metadata for `origin`, to be altered by each test. */
export function asMetadata(
  origin: string,
  extra: Record<string, unknown> = {},
): Record<string, unknown> {
  return {
    issuer: origin,
    authorization_endpoint: `${origin}/auth`,
    token_endpoint: `${origin}/token`,
    revocation_endpoint: `${origin}/revoke`,
    device_authorization_endpoint: `${origin}/device/auth`,
    code_challenge_methods_supported: ["S256"],
    response_types_supported: ["code"],
    ...extra,
  };
}
