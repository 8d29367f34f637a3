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
import type { WsPeer } from "../support/ws-peer.ts";
import { AGENT_RESOURCE, actions, stateChange, useMcpHostStand } from "./host-mcp-stand.ts";

const stand = await useMcpHostStand();
const whoami = "whoami";

function authenticate(peer: WsPeer, resource: string, token: string, extra = {}) {
  return peer.request("authenticate", { channel: "ahp-root://", resource, token, ...extra });
}

/** A session with one MCP server the client has already authenticated for (state ready). */
async function readyServer(scopes = ["read"]) {
  const mcp = await stand.mcpServer({ issuer: stand.idp.issuer, scopes });
  const { peer, session } = await stand.sessionPeer();
  const server = await stand.host.mcpServers(session).add({ name: "fixture", url: mcp.url });
  assert.equal(server.state.kind, "authRequired");
  const token = await stand.token(mcp.url, scopes.join(" "));
  const from = peer.messages.length;
  assert.deepEqual((await authenticate(peer, mcp.url, token)).result, {});
  await stateChange(peer, "ready", undefined, from);
  return { mcp, peer, session, server, token };
}

async function refusedCall(call: Promise<unknown>): Promise<McpServerAuthRequired> {
  const error = await call.then(
    () => assert.fail("the call must wait for authentication"),
    (e: unknown) => e,
  );
  assert.ok(error instanceof McpServerAuthRequired, String(error));
  return error;
}

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

  it("[AHP-MCP-expired] a token the MCP server refuses (revoked) is dropped and reported as authRequired/expired, never replayed; a new token makes the server ready again", async () => {
    const { mcp, peer, server, token } = await readyServer();
    mcp.revoked.add(token);
    const from = peer.messages.length;
    const refusedBefore = mcp.stats.unauthorized;

    const refused = await refusedCall(server.callTool(whoami));
    assert.equal(refused.code, "mcp_auth_required");
    const change = await stateChange(peer, "authRequired", "expired", from);
    const state = (change.params as { action: { state: Record<string, unknown> } }).action.state;
    assert.equal(state.description, "token revoked");
    assert.deepEqual(state.requiredScopes, ["read"]);

    // Not replayed: the next call goes out without it and stays `expired` (no new token came).
    const sentAgain = mcp.refused.length;
    await refusedCall(server.callTool(whoami));
    assert.ok(mcp.stats.unauthorized > refusedBefore);
    assert.equal(mcp.refused.length, sentAgain + 1);
    assert.deepEqual(server.state.kind === "authRequired" && server.state.reason, "expired");
    // The fixture describes a refused revoked token ("token revoked"); a bare request gets no description.
    assert.equal((server.state as { description?: string }).description, undefined);

    const fresh = await stand.token(mcp.url, "read");
    const before = peer.messages.length;
    assert.deepEqual((await authenticate(peer, mcp.url, fresh)).result, {});
    await stateChange(peer, "ready", undefined, before);
    assert.deepEqual((await server.callTool(whoami)).content, [{ type: "text", text: "hello" }]);
  });

  it("[AHP-MCP-step-up] a 403 insufficient_scope is reported as authRequired/insufficientScope with the challenge's requiredScopes; a token with them makes the next call succeed", async () => {
    const { mcp, peer, server, token } = await readyServer();
    mcp.requiredScopes = ["read", "write"];
    const from = peer.messages.length;

    await refusedCall(server.callTool(whoami));
    const change = await stateChange(peer, "authRequired", "insufficientScope", from);
    const state = (change.params as { action: { state: Record<string, unknown> } }).action.state;
    assert.deepEqual(state.requiredScopes, ["read", "write"]);
    assert.equal((state.resource as { resource: string }).resource, mcp.url);
    assert.equal(mcp.stats.toolCalls, 0);

    const wider = await stand.token(mcp.url, "read write");
    assert.notEqual(wider, token);
    const before = peer.messages.length;
    assert.deepEqual((await authenticate(peer, mcp.url, wider)).result, {});
    await stateChange(peer, "ready", undefined, before);
    assert.deepEqual((await server.callTool(whoami)).content, [{ type: "text", text: "hello" }]);
    assert.equal(mcp.stats.toolCalls, 1);
    assert.ok(!JSON.stringify(peer.messages).includes(wider));
  });

  it("[AHP-MCP-authenticate-refused] authenticate with a token the MCP server refuses (issued for another resource) answers -32007 with the server's metadata, and the state says expired", async () => {
    const mcp = await stand.mcpServer({ issuer: stand.idp.issuer, scopes: ["read"] });
    const { peer, session } = await stand.sessionPeer();
    const server = await stand.host.mcpServers(session).add({ name: "fixture", url: mcp.url });
    const wrongAudience = await stand.token(AGENT_RESOURCE, "read");
    const from = peer.messages.length;

    const answer = await authenticate(peer, mcp.url, wrongAudience);
    assert.equal(answer.error?.code, -32007);
    assert.match(answer.error?.message ?? "", /MCP server 'fixture' \(expired\)/);
    assert.deepEqual(answer.error?.data, {
      resources: [
        {
          resource: mcp.url,
          authorization_servers: [stand.idp.issuer],
          scopes_supported: ["read"],
          bearer_methods_supported: ["header"],
        },
      ],
    });
    await stateChange(peer, "authRequired", "expired", from);
    assert.equal(server.state.kind, "authRequired");
    assert.ok(!JSON.stringify(peer.messages).includes(wrongAudience));
  });

  it("[AHP-MCP-per-connection] the token is forgotten when the connection that pushed it closes; the session's other subscriber sees authRequired/required", async () => {
    const { mcp, peer, session, server } = await readyServer();
    const other = await stand.joinSession(session);
    const from = other.messages.length;
    await peer.close();
    await stateChange(other, "authRequired", "required", from);
    await refusedCall(server.callTool(whoami));
    assert.equal(mcp.stats.toolCalls, 0);
  });

  it("[AHP-MCP-revoke-empty-token] an empty token clears the held token (authRequired/required); the host stops using it", async () => {
    const { mcp, peer, server } = await readyServer();
    const from = peer.messages.length;
    assert.deepEqual((await authenticate(peer, mcp.url, "")).result, {});
    await stateChange(peer, "authRequired", "required", from);
    await refusedCall(server.callTool(whoami));
    assert.equal(mcp.stats.toolCalls, 0);
  });

  it("[AHP-MCP-expires-in] a token whose expiresIn has run out is not sent; the server is reported authRequired/expired", async () => {
    const { mcp, peer, server, token } = await readyServer();
    const before = peer.messages.length;
    assert.deepEqual((await authenticate(peer, mcp.url, token, { expiresIn: 60 })).result, {});
    stand.skew(61_000);
    const from = peer.messages.length;
    await refusedCall(server.callTool(whoami));
    await stateChange(peer, "authRequired", "expired", from);
    assert.ok(peer.messages.length > before);
    // The token is still good at the MCP server (only the host's clock moved): had it been sent, the call would
    // have gone through.
    assert.equal(mcp.stats.toolCalls, 0);
  });

  it("[AHP-MCP-dispose] disposing the session stops its MCP servers (state stopped, client closed); the host can no longer call them", async () => {
    const { peer, session, server } = await readyServer();
    const from = peer.messages.length;
    assert.deepEqual((await peer.request("disposeSession", { channel: session })).result, null);
    await stateChange(peer, "stopped", undefined, from);
    assert.deepEqual(server.state, { kind: "stopped" });
    await assert.rejects(server.callTool(whoami), { code: "server_closed" });
    assert.throws(() => stand.host.mcpServers(session), { code: "session_not_found" });
  });

  it("[AHP-MCP-reconnect] a client that reconnects with the session in its subscriptions gets the session's MCP server states again and may authenticate for them", async () => {
    const { mcp, peer, session, server } = await readyServer();
    await peer.close();
    const again = await stand.peer();
    const agentToken = await stand.token(AGENT_RESOURCE);
    assert.deepEqual((await authenticate(again, AGENT_RESOURCE, agentToken)).result, {});
    const reconnect = await again.request("reconnect", {
      clientId: "back",
      lastSeenServerSeq: 0,
      subscriptions: [session, "ahp-session:/gone"],
    });
    // The supplier left, so the token went with it; the replay carries the server's current entry (authRequired).
    assert.equal(server.state.kind, "authRequired");
    const replay = reconnect.result as {
      type: string;
      actions: Array<{ action: { type: string; customization?: { state: unknown } } }>;
      missing: string[];
    };
    assert.equal(replay.type, "replay");
    assert.deepEqual(replay.missing, ["ahp-session:/gone"]);
    assert.deepEqual(replay.actions.at(-1)?.action, {
      type: "session/customizationUpdated",
      customization: server.customization(),
    });
    // No subscribe was sent: authenticate is taken (the resource was advertised in a session this connection is
    // subscribed to again) and the state change reaches it.
    const from = again.messages.length;
    assert.deepEqual((await authenticate(again, mcp.url, await stand.token(mcp.url))).result, {});
    await stateChange(again, "ready", undefined, from);
  });
});
