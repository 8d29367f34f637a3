/**
 * What the proxy does with the connection itself (issue 19): a remote server that restarts mid-session (its sessions
 * gone: 404) is reconnected without the client noticing; extra headers come from `--header`, their values from the
 * environment; an `Authorization` header means the user's own credential and no OAuth; a server that speaks only
 * the older HTTP+SSE transport (the official SDK 1.x's SSEServerTransport) is reached by the http-first fallback.
 */

import assert from "node:assert/strict";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { after, test } from "node:test";
import { McpServer as McpServerV1 } from "@modelcontextprotocol/sdk/server/mcp.js";
import { SSEServerTransport } from "@modelcontextprotocol/sdk/server/sse.js";
import { protectMcpServer, protectNodeHandler } from "../../src/mcp/index.ts";
import { signInLeaseName } from "../../src/mcp/proxy/index.ts";
import { openVault } from "../../src/vault/index.ts";
import { runCli } from "../support/cli.ts";
import { useIdp } from "../support/idp.ts";
import { tempDir } from "../support/tmp.ts";
import { connectThroughProxy, FETCH_BROWSER } from "./fixtures/proxy-client.ts";
import { startStatefulMcpServer } from "./fixtures/stateful-mcp-server.ts";

const idp = await useIdp();

test("[MCP-proxy-remote-restart] the server restarting mid-session (its session gone) is survived: a new session, the same client", {
  timeout: 60_000,
}, async () => {
  const mcp = await startStatefulMcpServer({ issuer: idp.issuer });
  const proxy = await connectThroughProxy(mcp.url, {
    AGENTAUTH_HOME: tempDir(),
    BROWSER: FETCH_BROWSER,
  });
  await proxy.client.callTool({ name: "whoami", arguments: {} });
  mcp.restart();
  assert.deepEqual((await proxy.client.callTool({ name: "whoami", arguments: {} })).content, [
    { type: "text", text: "hello alice" },
  ]);
  assert.equal(mcp.stats.sessions, 2, "a new session was opened");
  await proxy.close();
});

test("[MCP-proxy-headers] --header values come from the environment (not argv); an unset variable is refused before anything is sent; the proxy's own headers are refused", {
  timeout: 60_000,
}, async () => {
  const mcp = await startStatefulMcpServer({ issuer: idp.issuer });
  const home = tempDir();
  const proxy = await connectThroughProxy(
    mcp.url,
    { AGENTAUTH_HOME: home, BROWSER: FETCH_BROWSER, TEAM_ID: "blue-team-7" },
    // biome-ignore lint/suspicious/noTemplateCurlyInString: the proxy's own ${VAR} syntax, passed as is
    ["--header", "X-Team: ${TEAM_ID}"],
  );
  await proxy.client.callTool({ name: "whoami", arguments: {} });
  assert.equal(mcp.lastHeaders?.get("x-team"), "blue-team-7");
  await proxy.close();

  // biome-ignore lint/suspicious/noTemplateCurlyInString: the proxy's own ${VAR} syntax, passed as is
  const unset = await runCli(["mcp", "proxy", mcp.url, "--header", "X-Team: ${NOT_SET_ANYWHERE}"], {
    AGENTAUTH_HOME: home,
  });
  assert.equal(unset.code, 2);
  assert.match(unset.stderr, /\$\{NOT_SET_ANYWHERE\}, which is not set/);
  const owned = await runCli(["mcp", "proxy", mcp.url, "--header", "Mcp-Session-Id: x"], {
    AGENTAUTH_HOME: home,
  });
  assert.equal(owned.code, 2);
  assert.match(owned.stderr, /Mcp-Session-Id is the proxy's own/);
});

test("[MCP-proxy-own-authorization] an Authorization header is the user's own credential: sent as given, no OAuth, no sign-in started", {
  timeout: 60_000,
}, async () => {
  const mcp = await startStatefulMcpServer({ issuer: idp.issuer });
  const home = tempDir();
  idp.resetStats();
  const failed = await connectThroughProxy(
    mcp.url,
    { AGENTAUTH_HOME: home, API_KEY: "static-key-123", BROWSER: FETCH_BROWSER },
    // biome-ignore lint/suspicious/noTemplateCurlyInString: the proxy's own ${VAR} syntax, passed as is
    ["--header", "Authorization: Bearer ${API_KEY}", "--sign-in-wait", "0"],
  ).catch((e: Error) => e);
  // This server takes OAuth tokens only: the key is refused, and the proxy says so instead of signing in.
  assert.ok(failed instanceof Error);
  assert.match(failed.message, /HTTP 401/);
  assert.deepEqual(mcp.authorizations, ["Bearer static-key-123"]);
  // No OAuth at all: no sign-in started, nothing stored, no token asked for.
  assert.doesNotMatch(failed.message, /Sign in|agentauth mcp login/);
  const vault = openVault({ env: { AGENTAUTH_HOME: home } });
  try {
    assert.equal(await vault.getLease?.(signInLeaseName(mcp.url, "default")), undefined);
    assert.deepEqual(await vault.list(), []);
  } finally {
    await vault.close();
  }
  assert.equal(idp.stats.byGrant.authorization_code, undefined);
});

/** A server of the 2024-11-05 revision: GET /sse opens the stream, POST /messages carries the client's messages. */
async function startSseServer(issuer: string, options: { refusePostBeforeAuth?: boolean } = {}) {
  const http = createServer();
  await new Promise<void>((resolve) => http.listen(0, "127.0.0.1", resolve));
  const origin = `http://127.0.0.1:${(http.address() as AddressInfo).port}`;
  const protection = protectMcpServer({
    canonicalUri: `${origin}/sse`,
    issuer,
    requiredScopes: ["read"],
  });
  const transports = new Map<string, SSEServerTransport>();
  const served = { streams: 0 };
  const handler = protectNodeHandler(protection, (req, res) => {
    void (async () => {
      const url = new URL(req.url ?? "/", origin);
      if (req.method === "GET" && url.pathname === "/sse") {
        const transport = new SSEServerTransport("/messages", res);
        transports.set(transport.sessionId, transport);
        served.streams++;
        const server = new McpServerV1({ name: "sse-fixture", version: "1.0.0" });
        server.registerTool("whoami", { description: "Says hello" }, async () => ({
          content: [{ type: "text", text: "hello over sse" }],
        }));
        await server.connect(transport);
        return;
      }
      const transport = transports.get(url.searchParams.get("sessionId") ?? "");
      if (req.method === "POST" && url.pathname === "/messages" && transport) {
        await transport.handlePostMessage(req, res);
        return;
      }
      res.writeHead(405).end();
    })();
  });
  http.on("request", (req, res) => {
    // Some servers refuse the Streamable HTTP POST before they look at the token.
    if (options.refusePostBeforeAuth && req.method === "POST" && req.url === "/sse") {
      res.writeHead(405).end();
      return;
    }
    handler(req, res);
  });
  after(() => {
    http.closeAllConnections();
    return new Promise<void>((resolve) => http.close(() => resolve()));
  });
  return { url: `${origin}/sse`, served };
}

test("[MCP-proxy-sse-fallback] a server with only the HTTP+SSE transport (SDK 1.x) is reached by the default http-first fallback", {
  timeout: 60_000,
}, async () => {
  const sse = await startSseServer(idp.issuer);
  const proxy = await connectThroughProxy(sse.url, {
    AGENTAUTH_HOME: tempDir(),
    BROWSER: FETCH_BROWSER,
  });
  assert.deepEqual((await proxy.client.callTool({ name: "whoami", arguments: {} })).content, [
    { type: "text", text: "hello over sse" },
  ]);
  assert.equal(sse.served.streams, 1);
  await proxy.close();
});

test("[MCP-proxy-sse-only-sign-in] --transport sse-only with no sign-in yet: the stream's 401 starts the background sign-in like any request, then the call goes through", {
  timeout: 60_000,
}, async () => {
  const sse = await startSseServer(idp.issuer);
  const proxy = await connectThroughProxy(
    sse.url,
    { AGENTAUTH_HOME: tempDir(), BROWSER: FETCH_BROWSER },
    ["--transport", "sse-only"],
  );
  assert.deepEqual((await proxy.client.callTool({ name: "whoami", arguments: {} })).content, [
    { type: "text", text: "hello over sse" },
  ]);
  await proxy.close();
});

test("[MCP-proxy-sse-fallback-sign-in] http-first against a server that refuses the POST (405) before the token: the move to SSE meets the 401, signs in, and the SSE connection is made afresh", {
  timeout: 60_000,
}, async () => {
  const sse = await startSseServer(idp.issuer, { refusePostBeforeAuth: true });
  const proxy = await connectThroughProxy(sse.url, {
    AGENTAUTH_HOME: tempDir(),
    BROWSER: FETCH_BROWSER,
  });
  assert.deepEqual((await proxy.client.callTool({ name: "whoami", arguments: {} })).content, [
    { type: "text", text: "hello over sse" },
  ]);
  await proxy.close();
});
