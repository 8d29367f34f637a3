/**
 * `auth.mcp.authProvider(sessionId, server)` finds a server "by name or URL": the URL as the client wrote it in
 * `session/new` (an agent passes it on as is) names the same server as its canonical form.
 */

import assert from "node:assert/strict";
import { test } from "node:test";
import { McpServerAuth } from "../../src/acp/agent/mcp/bridge.ts";
import { McpServerAuthError } from "../../src/acp/agent/mcp/errors.ts";
import { silentLogger } from "../../src/core/log.ts";
import { TokenRefresher } from "../../src/oauth/index.ts";
import { MemoryCredentialStore } from "../../src/vault/index.ts";

test("[MCP-server-url-acp] authProvider finds a session's server by the URL the client wrote (upper-case host, default port, fragment, no path), not only by its canonical form", async () => {
  const store = new MemoryCredentialStore();
  const auth = new McpServerAuth({
    store,
    subject: "acp-agent:test",
    agentName: "test",
    refresher: new TokenRefresher({ store }),
    client: () => undefined,
    connectionSignal: () => undefined,
    urlElicitation: () => false,
    changed: async () => {},
    stderr: () => {},
    logger: silentLogger,
    options: { probe: false },
  });
  auth.track("s1", [
    { type: "http", name: "root", url: "HTTPS://MCP.Example.com:443#top", headers: [] },
    { type: "http", name: "tools", url: "https://tools.example.com/mcp", headers: [] },
  ]);
  for (const [given, canonical] of [
    ["HTTPS://MCP.Example.com:443#top", "https://mcp.example.com/"],
    ["https://mcp.example.com", "https://mcp.example.com/"],
    ["https://mcp.example.com/", "https://mcp.example.com/"],
    ["https://TOOLS.example.com/mcp#x", "https://tools.example.com/mcp"],
  ] as const) {
    const provider = await auth.authProvider("s1", given);
    assert.equal(provider.canonicalUri, canonical, given);
  }
  // Another path is another server; a URL the check refuses matches nothing (and is not echoed).
  for (const other of [
    "https://mcp.example.com/other",
    "https://tools.example.com/MCP",
    "not a url",
  ]) {
    await assert.rejects(
      auth.authProvider("s1", other),
      (e: unknown) => e instanceof McpServerAuthError && e.code === "unknown_server",
      other,
    );
  }
});
