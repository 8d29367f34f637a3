import assert from "node:assert/strict";
import { request as httpRequest } from "node:http";
import { after, test } from "node:test";
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { startProtectedMcpServer } from "../../bench/fixtures/mcp-server.ts";
import { startIdp } from "../../src/idp/index.ts";
import {
  McpServerConfigError,
  protectedResourceMetadataUrl,
  protectMcpServer,
} from "../../src/mcp/index.ts";
import { findBearerChallenge, parseWwwAuthenticate } from "../../src/oauth/index.ts";
import { authorizeAndRedeem } from "../support/authorize.ts";
import { closedPort } from "../support/closed-port.ts";
import { useIdp } from "../support/idp.ts";

const SHORT_PATH = "/short/mcp";
const idp = await useIdp();
const readServer = await startProtectedMcpServer({ issuer: idp.issuer, requiredScopes: ["read"] });
const writeServer = await startProtectedMcpServer({
  issuer: idp.issuer,
  path: "/write/mcp",
  requiredScopes: ["write"],
});
after(() => Promise.all([readServer.close(), writeServer.close()]));

async function tokenFor(resource: string, scope = "openid read"): Promise<string> {
  const answer = await authorizeAndRedeem(idp.issuer, { resource, scope }, { resource });
  assert.equal(answer.status, 200, JSON.stringify(answer.body));
  return answer.body.access_token as string;
}

async function post(url: string, authorization?: string): Promise<Response> {
  return fetch(url, {
    method: "POST",
    headers: {
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
      ...(authorization !== undefined ? { authorization } : {}),
    },
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list", params: {} }),
  });
}

function bearer(response: Response) {
  const challenge = findBearerChallenge(
    parseWwwAuthenticate(response.headers.get("www-authenticate") ?? ""),
  );
  assert.ok(challenge, "a Bearer challenge");
  return challenge.parameters;
}

async function sdkClient(url: string, token: string): Promise<Client> {
  const client = new Client({ name: "agentauth-test", version: "1.0.0" });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(url), { authProvider: { token: async () => token } }),
  );
  return client;
}

test("[MCP-server-metadata] the RFC 9728 document is served at the path-aware well-known URL, naming the canonical URI and issuer", async () => {
  const expected = `${readServer.origin}/.well-known/oauth-protected-resource/mcp`;
  assert.equal(readServer.protection.metadataUrl.href, expected);
  const response = await fetch(expected);
  assert.equal(response.status, 200);
  assert.deepEqual(await response.json(), {
    resource: readServer.url,
    authorization_servers: [idp.issuer],
    scopes_supported: ["read"],
    bearer_methods_supported: ["header"],
  });
  // The root document is not this server's: another MCP server on the origin may own it.
  const root = await fetch(`${readServer.origin}/.well-known/oauth-protected-resource`);
  assert.notEqual(root.status, 200);
  await root.arrayBuffer();
  const wrongMethod = await fetch(expected, { method: "POST" });
  assert.equal(wrongMethod.status, 405);
});

test("[MCP-server-401-challenge] a request without a token gets 401 with resource_metadata and scope, and no error code", async () => {
  const response = await post(readServer.url);
  assert.equal(response.status, 401);
  const params = bearer(response);
  assert.equal(params.resource_metadata, readServer.protection.metadataUrl.href);
  assert.equal(params.scope, "read");
  assert.equal(params.error, undefined);
  await response.arrayBuffer();
  const other = await post(readServer.url, "Basic dXNlcjpwYXNz");
  assert.equal(other.status, 401);
  assert.equal(bearer(other).error, undefined);
  await other.arrayBuffer();
});

test("[MCP-server-caller] the official SDK client calls a tool, and the handler sees the verified subject and scopes", async (t) => {
  const token = await tokenFor(readServer.url);
  const client = await sdkClient(readServer.url, token);
  t.after(() => client.close());
  const result = await client.callTool({ name: "whoami", arguments: {} });
  const content = result.content as { type: string; text: string }[];
  const seen = JSON.parse(content[0]?.text ?? "{}");
  assert.equal(seen.fromContext.subject, "alice");
  assert.ok(seen.fromContext.scopes.includes("read"));
  assert.equal(seen.fromAsync.subject, "alice");
  assert.equal(JSON.stringify(seen).includes(token), false, "the token is not handed to tools");
});

test("[MCP-server-audience] a token issued for another MCP server is refused with 401 invalid_token", async () => {
  const token = await tokenFor(writeServer.url, "openid read write");
  const before = readServer.toolCalls();
  const response = await post(readServer.url, `Bearer ${token}`);
  assert.equal(response.status, 401);
  const params = bearer(response);
  assert.equal(params.error, "invalid_token");
  assert.match(params.error_description ?? "", /not issued for this resource/);
  await response.arrayBuffer();
  await assert.rejects(sdkClient(readServer.url, token));
  assert.equal(readServer.toolCalls(), before);
  // The control: the same server accepts a token issued for it (so the refusal above is about the audience).
  const own = await post(readServer.url, `Bearer ${await tokenFor(readServer.url)}`);
  assert.equal(own.status, 200);
  await own.arrayBuffer();
});

test("[MCP-server-forged] a token whose claims were altered, or signed by another key, is 401 invalid_token", async () => {
  const token = await tokenFor(readServer.url);
  const [header, payload, signature] = token.split(".") as [string, string, string];
  const claims = JSON.parse(Buffer.from(payload, "base64url").toString());
  const altered = Buffer.from(JSON.stringify({ ...claims, sub: "mallory" })).toString("base64url");
  for (const forged of [
    `${header}.${altered}.${signature}`,
    `${header}.${payload}.${"A".repeat(86)}`,
  ]) {
    const response = await post(readServer.url, `Bearer ${forged}`);
    assert.equal(response.status, 401);
    assert.equal(bearer(response).error, "invalid_token");
    const body = await response.text();
    assert.equal(body.includes(forged), false);
  }
  const genuine = await post(readServer.url, `Bearer ${token}`);
  assert.equal(genuine.status, 200, "the untouched token is accepted");
  await genuine.arrayBuffer();
});

test("[MCP-server-expired] an expired token is 401 invalid_token saying it expired", async (t) => {
  const shortIdp = await startIdp({ autoApproveAs: "alice", accessTokenTtlSeconds: 1 });
  t.after(() => shortIdp.close());
  const server = await startProtectedMcpServer({ issuer: shortIdp.issuer, path: SHORT_PATH });
  t.after(() => server.close());
  const answer = await authorizeAndRedeem(
    shortIdp.issuer,
    { resource: server.url, scope: "openid read" },
    { resource: server.url },
  );
  const token = answer.body.access_token as string;
  const claims = JSON.parse(Buffer.from(token.split(".")[1] ?? "", "base64url").toString());
  // Past exp plus the verifier's 5 s clock tolerance: a structural wait, not a timing assertion.
  const waitMs = (claims.exp + 6) * 1000 - Date.now();
  await new Promise((resolve) => setTimeout(resolve, Math.max(0, waitMs)));
  const response = await post(server.url, `Bearer ${token}`);
  assert.equal(response.status, 401);
  const params = bearer(response);
  assert.equal(params.error, "invalid_token");
  assert.match(params.error_description ?? "", /expired/);
  await response.arrayBuffer();
});

test("[MCP-server-insufficient-scope] a valid token without the required scope is 403 insufficient_scope naming it", async (t) => {
  const token = await tokenFor(writeServer.url, "openid read");
  const response = await post(writeServer.url, `Bearer ${token}`);
  assert.equal(response.status, 403);
  const params = bearer(response);
  assert.equal(params.error, "insufficient_scope");
  assert.equal(params.scope, "write");
  assert.equal(params.resource_metadata, writeServer.protection.metadataUrl.href);
  await response.arrayBuffer();
  const granted = await tokenFor(writeServer.url, "openid read write");
  const client = await sdkClient(writeServer.url, granted);
  t.after(() => client.close());
  const tools = await client.listTools();
  assert.ok(tools.tools.some((tool) => tool.name === "whoami"));
});

test("[MCP-server-tool-scope] a tool that needs more scope than the token has is answered 403 insufficient_scope with the full set and our metadata URL", async (t) => {
  const token = await tokenFor(readServer.url, "openid read");
  const seen: { status: number; challenge: string | null }[] = [];
  const client = new Client({ name: "agentauth-test", version: "1.0.0" });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(readServer.url), {
      authProvider: { token: async () => token },
      fetch: async (input, init) => {
        const response = await fetch(input, init);
        seen.push({ status: response.status, challenge: response.headers.get("www-authenticate") });
        return response;
      },
    }),
  );
  t.after(() => client.close());
  const before = readServer.toolCalls();
  await assert.rejects(client.callTool({ name: "publish", arguments: {} }));
  assert.equal(readServer.toolCalls(), before, "the tool did not run");
  const refused = seen.find((s) => s.status === 403);
  assert.ok(refused?.challenge, JSON.stringify(seen));
  const params = findBearerChallenge(parseWwwAuthenticate(refused.challenge))?.parameters;
  assert.equal(params?.error, "insufficient_scope");
  assert.equal(params?.scope, "read write");
  assert.equal(params?.resource_metadata, readServer.protection.metadataUrl.href);
});

test("[MCP-server-hostile-authorization] malformed and oversized Authorization headers get typed 400 invalid_request answers", async () => {
  const cases = [
    "Bearer",
    "Bearer ",
    "Bearer a b",
    "Bearer\tabc",
    "Bearer abc\u00e9",
    "Bearer ===",
    `Bearer ${"a".repeat(9 * 1024)}`,
  ];
  for (const header of cases) {
    const response = await post(readServer.url, header);
    const label = JSON.stringify(header.slice(0, 20));
    // "Bearer" / "Bearer " carry no credentials once trailing whitespace is trimmed (RFC 9110 §5.5).
    if (header.trim() === "Bearer") {
      assert.ok(response.status === 400 || response.status === 401, label);
    } else {
      assert.equal(response.status, 400, label);
      assert.equal(bearer(response).error, "invalid_request", label);
      const body = (await response.json()) as { error: string };
      assert.equal(body.error, "invalid_request", label);
      continue;
    }
    await response.arrayBuffer();
  }
  // Beyond node's header limit the HTTP layer refuses it (431); the server keeps serving.
  const status = await new Promise<number>((resolve, reject) => {
    const req = httpRequest(readServer.url, {
      method: "POST",
      headers: { authorization: `Bearer ${"a".repeat(64 * 1024)}` },
    });
    req.on("response", (res) => {
      res.resume();
      resolve(res.statusCode ?? 0);
    });
    req.on("error", reject);
    req.end();
  });
  assert.equal(status, 431);
  // A Host header that is no valid authority: answered like any other request, the server does not fall over.
  for (const host of ["[", "a b", "x".repeat(300)]) {
    const answer = await new Promise<number>((resolve, reject) => {
      const req = httpRequest(readServer.url, { method: "POST", headers: { host } });
      req.on("response", (res) => {
        res.resume();
        resolve(res.statusCode ?? 0);
      });
      req.on("error", reject);
      req.end();
    });
    assert.ok(answer === 400 || answer === 401, `host ${host.slice(0, 10)}: ${answer}`);
  }
  const still = await post(readServer.url);
  assert.equal(still.status, 401);
  await still.arrayBuffer();
});

test("[MCP-server-config] a canonical URI that cannot be an audience is refused at start with a typed error", () => {
  for (const canonicalUri of [
    "not a url",
    "http://mcp.example.com/mcp",
    "https://mcp.example.com/mcp#x",
    "https://user:pw@mcp.example.com/mcp",
  ]) {
    assert.throws(
      () => protectMcpServer({ canonicalUri, issuer: idp.issuer }),
      (error: unknown) =>
        error instanceof McpServerConfigError && error.code === "mcp_server_config_invalid",
      canonicalUri,
    );
  }
  assert.throws(
    () =>
      protectMcpServer({
        canonicalUri: "https://mcp.example.com/",
        issuer: idp.issuer,
        requiredScopes: ["a b"],
      }),
    /scope/,
  );
  assert.equal(
    protectedResourceMetadataUrl(new URL("https://mcp.example.com/")).href,
    "https://mcp.example.com/.well-known/oauth-protected-resource",
  );
  assert.equal(
    protectedResourceMetadataUrl(new URL("https://mcp.example.com/tenant/mcp/")).href,
    "https://mcp.example.com/.well-known/oauth-protected-resource/tenant/mcp",
  );
});

test("[MCP-server-issuer-down] when the authorization server cannot be reached, requests get 503 without a challenge, no token echoed", async (t) => {
  const port = await closedPort();
  const server = await startProtectedMcpServer({
    issuer: `http://127.0.0.1:${port}`,
    path: "/down/mcp",
  });
  t.after(() => server.close());
  const token = await tokenFor(readServer.url);
  const response = await post(server.url, `Bearer ${token}`);
  assert.equal(response.status, 503);
  assert.equal(response.headers.get("www-authenticate"), null);
  const body = (await response.json()) as { error: string; error_description: string };
  assert.equal(body.error, "temporarily_unavailable");
  assert.equal(JSON.stringify(body).includes(token), false);
});
