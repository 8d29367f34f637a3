/**
 * The AHP host's MCP bridge end to end (issue 12 §3 AHP): a real host on a WebSocket, raw official peers, real
 * protected MCP servers (the official `@modelcontextprotocol/server` behind the engine's verifier) used through the
 * official `@modelcontextprotocol/client`, and the embedded authorization server issuing real tokens. The host reports
 * each MCP server's auth requirement as `McpServerAuthRequiredState` (`session/mcpServerStateChanged` in an `action`
 * notification) and takes the client's token through `authenticate`.
 */

import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { McpServerAuthRequired } from "../../src/ahp/host/index.ts";
import { ActionEnvelopeSchema, SessionMcpActionSchema } from "../../src/ahp/wire.ts";
import { actions, stateChange, useMcpHostStand } from "./host-mcp-stand.ts";

const stand = await useMcpHostStand();
const whoami = "whoami";

describe("AHP host MCP bridge", () => {
  it("[AHP-MCP-auth-required] reports McpServerAuthRequiredState (resource metadata, required scopes) in the official shape; the client's token makes the server ready and the host's next MCP call succeeds", async (t) => {
    const mcp = await stand.mcpServer({ issuer: stand.idp.issuer, scopes: ["read"] });
    const { peer, session } = await stand.sessionPeer();
    const from = peer.messages.length;

    const server = await stand.host.mcpServers(session).add({ name: "fixture", url: mcp.url });
    await stateChange(peer, "authRequired", "required", from);
    const seen = actions(peer, from);
    for (const envelope of seen) {
      assert.ok(ActionEnvelopeSchema.safeParse(envelope).success, JSON.stringify(envelope));
      assert.ok(SessionMcpActionSchema.safeParse(envelope.action).success);
    }
    const metadata = {
      resource: mcp.url,
      authorization_servers: [stand.idp.issuer],
      scopes_supported: ["read"],
      bearer_methods_supported: ["header"],
    };
    assert.deepEqual(
      seen.map(({ serverSeq: _s, ...rest }) => rest),
      [
        {
          channel: session,
          action: {
            type: "session/customizationUpdated",
            customization: {
              type: "mcpServer",
              id: server.id,
              uri: mcp.url,
              name: "fixture",
              state: { kind: "starting" },
            },
          },
        },
        {
          channel: session,
          action: {
            type: "session/mcpServerStateChanged",
            id: server.id,
            state: {
              kind: "authRequired",
              reason: "required",
              resource: metadata,
              requiredScopes: ["read"],
            },
          },
        },
      ],
    );
    const seqs = seen.map((e) => e.serverSeq as number);
    assert.ok((seqs[1] ?? 0) > (seqs[0] ?? 0), "serverSeq increases");

    // The host cannot call the server yet: a typed error, the state says why.
    const blocked = await server.callTool(whoami).then(
      () => assert.fail("no token yet"),
      (e: unknown) => e,
    );
    assert.ok(blocked instanceof McpServerAuthRequired, String(blocked));
    assert.equal(mcp.stats.toolCalls, 0);

    // The client signs in for the advertised resource and authenticates.
    const token = await stand.token(mcp.url, "read");
    const afterAuth = peer.messages.length;
    const auth = await peer.request("authenticate", {
      channel: "ahp-root://",
      resource: mcp.url,
      token,
      expiresIn: 300,
    });
    assert.deepEqual(auth.result, {});
    await stateChange(peer, "ready", undefined, afterAuth);
    assert.deepEqual(server.state, { kind: "ready" });

    const result = await server.callTool(whoami);
    assert.deepEqual(result.content, [{ type: "text", text: "hello" }]);
    assert.equal(mcp.stats.toolCalls, 1);

    // A later subscriber's snapshot carries the entry with its current state.
    const snapshot = await peer.request("subscribe", { channel: session });
    const state = (snapshot.result as { snapshot: { state: { customizations: unknown[] } } })
      .snapshot.state;
    assert.deepEqual(state.customizations, [
      { type: "mcpServer", id: server.id, uri: mcp.url, name: "fixture", state: { kind: "ready" } },
    ]);

    // The token is in no message the client received, and in no log line.
    assert.ok(!JSON.stringify(peer.messages).includes(token));
    assert.ok(!stand.logs.join("\n").includes(token));
    t.diagnostic(`actions seen: ${actions(peer, from).length}`);
  });
});
