import assert from "node:assert/strict";
import {
  createServer,
  request as httpRequest,
  type IncomingMessage,
  type ServerResponse,
} from "node:http";
import type { AddressInfo } from "node:net";
import { test } from "node:test";
import { currentMcpCaller, protectMcpServer, protectNodeHandler } from "../../src/mcp/index.ts";
import { findBearerChallenge, parseWwwAuthenticate } from "../../src/oauth/index.ts";
import { authorizeAndRedeem } from "../support/authorize.ts";
import { useIdp } from "../support/idp.ts";

const idp = await useIdp();

/** A plain node:http server whose handler sits behind protectNodeHandler, canonical URI `<origin>/rpc`. */
async function protectedNodeServer(
  t: { after(fn: () => unknown): void },
  handler: (req: IncomingMessage, res: ServerResponse) => void,
): Promise<string> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  t.after(() => new Promise((done) => server.close(done)));
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const protection = protectMcpServer({
    canonicalUri: `${origin}/rpc`,
    issuer: idp.issuer,
    requiredScopes: ["read"],
  });
  server.on("request", protectNodeHandler(protection, handler));
  return origin;
}

async function tokenFor(resource: string): Promise<string> {
  const answer = await authorizeAndRedeem(
    idp.issuer,
    { resource, scope: "openid read" },
    { resource },
  );
  assert.equal(answer.status, 200, JSON.stringify(answer.body));
  return answer.body.access_token as string;
}

async function post(url: string, authorization?: string): Promise<Response> {
  return fetch(url, {
    method: "POST",
    headers: { "content-type": "application/json", ...(authorization ? { authorization } : {}) },
    body: "{}",
  });
}

test("[MCP-server-node-handler] a plain node:http handler behind protectNodeHandler runs as the verified caller with req.auth set", async (t) => {
  const origin = await protectedNodeServer(t, (req, res) => {
    const auth = (req as typeof req & { auth?: { scopes: string[] } }).auth;
    res.writeHead(200, { "content-type": "application/json" });
    res.end(JSON.stringify({ subject: currentMcpCaller()?.subject, scopes: auth?.scopes }));
  });
  const refused = await post(`${origin}/rpc`);
  assert.equal(refused.status, 401);
  const challenge = findBearerChallenge(
    parseWwwAuthenticate(refused.headers.get("www-authenticate") ?? ""),
  );
  assert.equal(
    challenge?.parameters.resource_metadata,
    `${origin}/.well-known/oauth-protected-resource/rpc`,
  );
  await refused.arrayBuffer();
  // A hostile Host header must neither crash the process nor skip the token check.
  const hostile = await new Promise<number>((resolve, reject) => {
    const req = httpRequest(`${origin}/rpc`, { method: "POST", headers: { host: "[" } });
    req.on("response", (res) => {
      res.resume();
      resolve(res.statusCode ?? 0);
    });
    req.on("error", reject);
    req.end();
  });
  assert.equal(hostile, 401);
  const metadata = await fetch(`${origin}/.well-known/oauth-protected-resource/rpc`);
  assert.equal(((await metadata.json()) as { resource: string }).resource, `${origin}/rpc`);
  const answered = await post(`${origin}/rpc`, `Bearer ${await tokenFor(`${origin}/rpc`)}`);
  assert.equal(answered.status, 200);
  assert.deepEqual(await answered.json(), { subject: "alice", scopes: ["read"] });
});

test("[MCP-server-node-handler-throws] a wrapped node handler that throws is answered 500 and the server keeps serving", async (t) => {
  const origin = await protectedNodeServer(t, () => {
    throw new Error("handler bug");
  });
  const token = await tokenFor(`${origin}/rpc`);
  for (let i = 0; i < 2; i++) {
    const response = await post(`${origin}/rpc`, `Bearer ${token}`);
    assert.equal(response.status, 500);
    await response.arrayBuffer();
  }
});
