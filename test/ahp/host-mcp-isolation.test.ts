/**
 * The AHP host's MCP bridge, second reader's findings (issue 12 review): AHP auth is per connection, so one
 * connection's `authenticate` never undoes another's token; a token the MCP server refused never rides along in an
 * error the host author receives (and may print); a client that reconnects learns what changed while it was away.
 * Real host, raw official peers, real protected MCP servers and real tokens from the embedded IdP.
 */

import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { inspect } from "node:util";
import type { WsPeer } from "../support/ws-peer.ts";
import { stateChange, useMcpHostStand } from "./host-mcp-stand.ts";

const stand = await useMcpHostStand();

function authenticate(peer: WsPeer, resource: string, token: string) {
  return peer.request("authenticate", { channel: "ahp-root://", resource, token });
}

/**
 * Waits until the host has seen a connection leave and dropped its token (the server leaves "ready"). Bounded by
 * time (10 s, far beyond a socket close on a loaded machine), not by a count of 10 ms polls that add up to ~1 s.
 */
async function untilNotReady(server: { state: { kind: string } }): Promise<void> {
  const deadline = Date.now() + 10_000;
  while (server.state.kind === "ready" && Date.now() < deadline)
    await new Promise((r) => setTimeout(r, 10));
}

async function readyServer() {
  const mcp = await stand.mcpServer({ issuer: stand.idp.issuer, scopes: ["read"] });
  const { peer, session } = await stand.sessionPeer();
  const server = await stand.host.mcpServers(session).add({ name: "fixture", url: mcp.url });
  const token = await stand.token(mcp.url, "read");
  const from = peer.messages.length;
  assert.deepEqual((await authenticate(peer, mcp.url, token)).result, {});
  await stateChange(peer, "ready", undefined, from);
  return { mcp, peer, session, server, token };
}

describe("AHP host MCP bridge: isolation and leaks", () => {
  it("[AHP-MCP-revoke-own-only] an empty-token authenticate revokes only this connection's credential: another subscriber cannot drop the token a different connection pushed", async () => {
    const { mcp, session, server } = await readyServer();
    const other = await stand.joinSession(session);
    const answer = await authenticate(other, mcp.url, "");
    assert.deepEqual(answer.result, {});
    assert.deepEqual(server.state, { kind: "ready" });
    assert.deepEqual((await server.callTool("whoami")).content, [{ type: "text", text: "hello" }]);
  });

  it("[AHP-MCP-no-token-in-errors] a refused token whose challenge cannot be used (metadata on another origin) ends the call with an error that does not carry the token, even deep in its causes", async () => {
    const { mcp, server, token } = await readyServer();
    mcp.revoked.add(token);
    mcp.hostileChallenge = `Bearer error="invalid_token", resource_metadata="http://127.0.0.1:9/.well-known/oauth-protected-resource"`;
    const error = await server.callTool("whoami").then(
      () => assert.fail("the token was revoked"),
      (e: unknown) => e,
    );
    assert.equal(server.state.kind, "error");
    const printed = inspect(error, { depth: 20, showHidden: true });
    assert.ok(!printed.includes(token), "the token is in the error the host author gets");
    assert.ok(!stand.logs.join("\n").includes(token));
  });
});

describe("AHP host MCP bridge: reconnect", () => {
  it("[AHP-MCP-reconnect-replay] a reconnect's replay carries the MCP server changes the client missed (its token left with its old connection: authRequired), stamped after lastSeenServerSeq; nothing when it missed nothing", async () => {
    const { mcp, peer, session, server } = await readyServer();
    const seen = peer.messages
      .filter((m) => m.method === "action")
      .map((m) => (m.params as { serverSeq: number }).serverSeq);
    const lastSeen = Math.max(...seen);
    await peer.close();
    // The supplier left: the host drops its token and says so to subscribers (none is left to hear it).
    await untilNotReady(server);
    assert.equal(server.state.kind, "authRequired");

    const again = await stand.peer();
    assert.deepEqual(
      (
        await again.request("authenticate", {
          channel: "ahp-root://",
          resource: "https://agent.example.test/",
          token: await stand.token("https://agent.example.test/"),
        })
      ).result,
      {},
    );
    const reconnect = await again.request("reconnect", {
      channel: "ahp-root://",
      clientId: "back",
      lastSeenServerSeq: lastSeen,
      subscriptions: [session],
    });
    const result = reconnect.result as {
      type: string;
      actions: Array<{ channel: string; serverSeq: number; action: Record<string, unknown> }>;
      missing: string[];
    };
    assert.equal(result.type, "replay");
    assert.deepEqual(result.missing, []);
    assert.ok(result.actions.length > 0, "the missed authRequired state is replayed");
    for (const envelope of result.actions) {
      assert.equal(envelope.channel, session);
      assert.ok(envelope.serverSeq > lastSeen);
    }
    const last = result.actions.at(-1)?.action as {
      type: string;
      customization?: { id: string; state: { kind: string; resource?: { resource: string } } };
    };
    assert.equal(last.type, "session/customizationUpdated");
    assert.equal(last.customization?.id, server.id);
    assert.equal(last.customization?.state.kind, "authRequired");
    assert.equal(last.customization?.state.resource?.resource, mcp.url);

    // Caught up: a second reconnect from the latest seq replays nothing.
    const latest = Math.max(...result.actions.map((a) => a.serverSeq));
    const twice = await again.request("reconnect", {
      channel: "ahp-root://",
      clientId: "back",
      lastSeenServerSeq: latest,
      subscriptions: [session],
    });
    assert.deepEqual((twice.result as { actions: unknown[] }).actions, []);
  });
});

describe("AHP host MCP bridge: removal", () => {
  it("[AHP-MCP-remove] removing a server stops it, then tells subscribers session/customizationRemoved (the snapshot no longer lists it); a reconnect replays the removal", async () => {
    const { peer, session, server } = await readyServer();
    const lastSeen = Math.max(
      ...peer.messages
        .filter((m) => m.method === "action")
        .map((m) => (m.params as { serverSeq: number }).serverSeq),
    );
    const from = peer.messages.length;
    await stand.host.mcpServers(session).remove("fixture");
    const removed = await peer.waitFor(
      (m) =>
        m.method === "action" &&
        (m.params as { action: { type: string } }).action.type === "session/customizationRemoved",
      10_000,
      from,
    );
    assert.deepEqual((removed.params as { action: unknown }).action, {
      type: "session/customizationRemoved",
      id: server.id,
    });
    const snapshot = await peer.request("subscribe", { channel: session });
    const state = (snapshot.result as { snapshot: { state: { customizations?: unknown } } })
      .snapshot.state;
    assert.equal(state.customizations, undefined);

    const reconnect = await peer.request("reconnect", {
      channel: "ahp-root://",
      clientId: "same",
      lastSeenServerSeq: lastSeen,
      subscriptions: [session],
    });
    const actions = (reconnect.result as { actions: Array<{ action: { type: string } }> }).actions;
    assert.equal(actions.at(-1)?.action.type, "session/customizationRemoved");
  });
});

describe("AHP host MCP bridge: disposed sessions", () => {
  it("[AHP-MCP-add-after-dispose] a handle kept past disposeSession cannot add a server to the dead session (typed session_not_found; no MCP connection is opened and left running)", async () => {
    const mcp = await stand.mcpServer({ issuer: stand.idp.issuer, scopes: ["read"] });
    const { peer, session } = await stand.sessionPeer();
    const servers = stand.host.mcpServers(session);
    assert.deepEqual((await peer.request("disposeSession", { channel: session })).result, null);
    const refusedBefore = mcp.stats.unauthorized;
    await assert.rejects(servers.add({ name: "late", url: mcp.url }), {
      code: "session_not_found",
    });
    assert.equal(mcp.stats.unauthorized, refusedBefore, "the MCP server was not contacted");
    assert.deepEqual(servers.list(), []);
  });
});

describe("AHP host MCP bridge: server URLs", () => {
  it("[AHP-MCP-url-query] a server URL with a query (often a key) is refused with invalid_server before anything is announced: it would reach every subscriber as the customization's uri and the advertised resource", async () => {
    const { peer, session } = await stand.sessionPeer();
    const from = peer.messages.length;
    const mcp = await stand.mcpServer({ issuer: stand.idp.issuer, scopes: ["read"] });
    const error = await stand.host
      .mcpServers(session)
      .add({ name: "keyed", url: `${mcp.url}?api_key=sk-live-0123456789` })
      .then(
        () => assert.fail("refused"),
        (e: unknown) => e,
      );
    assert.equal((error as { code?: string }).code, "invalid_server");
    assert.ok(!String((error as Error).message).includes("sk-live"));
    await peer.request("ping");
    assert.ok(!JSON.stringify(peer.messages.slice(from)).includes("sk-live"));
    assert.equal(mcp.stats.unauthorized, 0);
  });
});

describe("AHP host MCP bridge: several suppliers", () => {
  it("[AHP-MCP-fallback-token] when the connection whose token the server uses leaves, the token another still-connected subscriber pushed is used again (not authRequired while a supplier remains); with none left, authRequired/required", async () => {
    const { mcp, peer, session, server } = await readyServer();
    const other = await stand.joinSession(session);
    const second = await stand.token(mcp.url, "read");
    const from = other.messages.length;
    assert.deepEqual((await authenticate(other, mcp.url, second)).result, {});
    await other.close();
    // The leaving connection's token is dropped; the first connection's is still held.
    assert.deepEqual((await server.callTool("whoami")).content, [{ type: "text", text: "hello" }]);
    assert.deepEqual(server.state, { kind: "ready" });
    assert.ok(!JSON.stringify(other.messages.slice(from)).includes(second));

    const before = peer.messages.length;
    await peer.close();
    const watcher = await stand.joinSession(session);
    await untilNotReady(server);
    assert.equal(server.state.kind, "authRequired");
    assert.ok(peer.messages.length >= before);
    await assert.rejects(server.callTool("whoami"), { code: "mcp_auth_required" });
    await watcher.close();
  });
});

describe("AHP host MCP bridge: revoking after unsubscribe", () => {
  it("[AHP-MCP-revoke-after-unsubscribe] a connection that unsubscribed from the session can still revoke the token it pushed (empty token); one that never pushed one is still told the resource was not advertised to it", async () => {
    const { mcp, peer, session, server } = await readyServer();
    const stranger = await stand.peer();
    peer.notify("unsubscribe", { channel: session });
    await peer.request("ping");
    const from = peer.messages.length;
    assert.deepEqual((await authenticate(peer, mcp.url, "")).result, {});
    assert.equal(server.state.kind, "authRequired");
    await assert.rejects(server.callTool("whoami"), { code: "mcp_auth_required" });
    assert.equal(peer.messages.slice(from).filter((m) => m.method === "action").length, 0);
    assert.equal((await authenticate(stranger, mcp.url, "")).error?.code, -32602);
  });
});

describe("AHP host MCP bridge: malformed tokens", () => {
  it("[AHP-MCP-token-syntax] a token that is not an RFC 6750 b64token (a trailing newline, a NUL, non-ASCII) is refused with -32602 before it reaches an HTTP header: never echoed in the answer, a state, or a log", async () => {
    const mcp = await stand.mcpServer({ issuer: stand.idp.issuer, scopes: ["read"] });
    const { peer, session } = await stand.sessionPeer();
    const server = await stand.host.mcpServers(session).add({ name: "fixture", url: mcp.url });
    const token = await stand.token(mcp.url);
    const from = peer.messages.length;
    // Before: `Headers.set: "Bearer <token>…" is an invalid header value` became the error state (its first 300
    // characters) and the probe's log line (all of it), and authenticate answered {}. A trailing newline alone is
    // trimmed by fetch, but it is no b64token either.
    for (const bad of [`${token}\n`, `${token}\nx`, `${token}\u0000x`, `${token}\u0100`]) {
      const answer = await authenticate(peer, mcp.url, bad);
      assert.equal(answer.error?.code, -32602, JSON.stringify(answer.error));
    }
    await peer.request("ping");
    assert.equal(server.state.kind, "authRequired");
    for (const part of [token.slice(100, 140), token.slice(-24)]) {
      assert.ok(!JSON.stringify(peer.messages.slice(from)).includes(part));
      assert.ok(!JSON.stringify(server.state).includes(part));
      assert.ok(!stand.logs.join("\n").includes(part));
    }
    // The well-formed token still works.
    assert.deepEqual((await authenticate(peer, mcp.url, token)).result, {});
  });
});
