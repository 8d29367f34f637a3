/**
 * The AHP host's MCP bridge takes its server URLs through the one MCP server URL check (canonicalMcpServerUrl): a
 * token a client pushes never goes to a plain-http server off loopback, and a URL the parser would read as another
 * host than the one written is refused. Real host and session peer; nothing is announced for a refused server.
 */

import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { McpBridgeError } from "../../src/ahp/host/index.ts";
import { useMcpHostStand } from "./host-mcp-stand.ts";

const stand = await useMcpHostStand();
const SECRET = "sk-live-0123456789";

describe("AHP host MCP bridge: the one server URL check", () => {
  it("[MCP-server-url-ahp] plain http off loopback (a pushed token would cross the network unencrypted, localhost.evil.example included), control characters, an empty query and a trailing-dot host are refused with invalid_server, not echoed, not announced", async () => {
    const { peer, session } = await stand.sessionPeer();
    const from = peer.messages.length;
    const servers = stand.host.mcpServers(session);
    for (const url of [
      `http://mcp.example.com/${SECRET}`,
      `http://localhost.evil.example/${SECRET}`,
      `http://[::ffff:127.0.0.1]:1/${SECRET}`,
      `https://exa\nmple.com/${SECRET}`,
      "https://mcp.example.com/mcp?",
      "https://mcp.example.com./mcp",
    ]) {
      const error = await servers.add({ name: "bad", url }).then(
        () => assert.fail(`refused: ${JSON.stringify(url)}`),
        (e: unknown) => e,
      );
      assert.ok(error instanceof McpBridgeError, String(error));
      assert.equal(error.code, "invalid_server", JSON.stringify(url));
      assert.ok(!error.message.includes(SECRET));
      assert.ok(!error.message.includes("evil"));
    }
    await peer.request("ping");
    assert.ok(!JSON.stringify(peer.messages.slice(from)).includes("example"));
    assert.deepEqual(servers.list(), []);
  });
});
