/**
 * `agentauth mcp proxy` (issue 19) with real processes: the official SDK's stdio client starts the proxy as an MCP
 * client would, the proxy reaches a real Streamable HTTP MCP server (sessions, server-to-client requests) protected by
 * protectMcpServer and the strict embedded authorization server (refresh-token rotation), and signs in through the
 * background sign-in with `$BROWSER` playing the person's browser (the server auto-approves).
 */

import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";
import { openVault } from "../../src/vault/index.ts";
import { useIdp } from "../support/idp.ts";
import { tempDir } from "../support/tmp.ts";
import { connectThroughProxy, FETCH_BROWSER } from "./fixtures/proxy-client.ts";
import { BIG_TEXT_BYTES, startStatefulMcpServer } from "./fixtures/stateful-mcp-server.ts";

const idp = await useIdp();

function proxyEnv(home: string, extra: Record<string, string> = {}): Record<string, string> {
  return { AGENTAUTH_HOME: home, BROWSER: FETCH_BROWSER, ...extra };
}

async function storedTokens(home: string): Promise<string[]> {
  const vault = openVault({ env: { AGENTAUTH_HOME: home } });
  try {
    const out: string[] = [];
    for (const summary of await vault.list()) {
      const record = await vault.getById(summary.id);
      for (const token of [record?.tokens.accessToken, record?.tokens.refreshToken]) {
        if (token) out.push(token.reveal());
      }
    }
    return out;
  } finally {
    await vault.close();
  }
}

test("[MCP-proxy-forwarding] tools, progress, a 2 MB answer, sampling, elicitation, list_changed, resources, prompts and logs pass through unchanged; the first request signs in in the background; no token crosses stdio or reaches stderr", {
  timeout: 120_000,
}, async () => {
  const mcp = await startStatefulMcpServer({ issuer: idp.issuer });
  const home = tempDir();
  const log = join(home, "browser.log");
  const proxy = await connectThroughProxy(mcp.url, proxyEnv(home, { FETCH_BROWSER_LOG: log }));
  const { client } = proxy;

  const tools = await client.listTools();
  assert.deepEqual(tools.tools.map((t) => t.name).sort(), [
    "ask",
    "big",
    "change",
    "progress",
    "sample",
    "whoami",
  ]);
  assert.deepEqual((await client.callTool({ name: "whoami", arguments: {} })).content, [
    { type: "text", text: "hello alice" },
  ]);
  // Checked on the wire: the three notifications, in order, before the result. (The SDK's stdio client dispatches
  // notifications a tick later than responses, so its onprogress callback sees only the first of a burst that
  // arrives in one read; that is the SDK's, with or without a proxy in between.)
  await client.setLoggingLevel("info");
  const before = proxy.received.length;
  await client.callTool({ name: "progress", arguments: {} }, { onprogress: () => {} });
  const progress = proxy.received
    .slice(before)
    .map((m) => JSON.parse(m))
    .filter((m) => m.method === "notifications/progress" || m.result)
    .map((m) => m.params?.progress ?? "result");
  assert.deepEqual(progress, [1, 2, 3, "result"]);
  const big = await client.callTool({ name: "big", arguments: {} });
  assert.equal((big.content as { text: string }[])[0]?.text.length, BIG_TEXT_BYTES);
  assert.deepEqual((await client.callTool({ name: "sample", arguments: {} })).content, [
    { type: "text", text: "model said pong" },
  ]);
  assert.deepEqual((await client.callTool({ name: "ask", arguments: {} })).content, [
    { type: "text", text: 'accept {"name":"alice"}' },
  ]);
  const changed = new Promise<void>((resolve) =>
    client.setNotificationHandler("notifications/tools/list_changed", () => resolve()),
  );
  await client.callTool({ name: "change", arguments: {} });
  await changed;
  const resource = await client.readResource({ uri: "test://hello" });
  assert.deepEqual(resource.contents, [{ uri: "test://hello", text: "hello resource" }]);
  const prompt = await client.getPrompt({ name: "greet" });
  assert.equal(prompt.messages[0]?.content.type, "text");
  assert.ok(
    proxy.received.some((m) => m.includes('"notifications/message"')),
    "the log message arrived",
  );

  assert.equal(readFileSync(log, "utf8").trim().split("\n").length, 1, "one sign-in");
  assert.equal(mcp.stats.sessions, 1);
  const secrets = await storedTokens(home);
  assert.ok(secrets.length >= 2, "the sign-in is in the vault");
  for (const secret of secrets) {
    assert.ok(!proxy.received.some((m) => m.includes(secret)), "a token crossed stdio");
    assert.ok(!proxy.stderr().includes(secret), "a token reached stderr");
  }
  await proxy.close();
});
