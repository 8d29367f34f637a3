/**
 * The AHP host's MCP bridge against hostile or mistaken input: `authenticate` for resources not advertised to this
 * connection, oversized tokens, `serverName` scoping (AHP PR #439, branch-only), hostile MCP server challenges and
 * names (control and bidi characters cleaned), a cross-origin `resource_metadata`, the seed dialect (no session
 * actions), and the host author's mistakes (typed `McpBridgeError`s).
 */

import assert from "node:assert/strict";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { after, describe, it } from "node:test";
import { createAhpHost, McpBridgeError } from "../../src/ahp/host/index.ts";
import { WsPeer } from "../support/ws-peer.ts";
import { AGENT_RESOURCE, actions, stateChange, useMcpHostStand } from "./host-mcp-stand.ts";

const stand = await useMcpHostStand();
const UNSAFE =
  // biome-ignore lint/suspicious/noControlCharactersInRegex: looking for them is the point.
  /[\u0000-\u001f\u007f-\u009f\u00ad\u200b\u202a-\u202e\u2066-\u2069\ufeff\u{e0000}-\u{e007f}]/u;

function authenticate(peer: WsPeer, resource: string, token: string, extra = {}) {
  return peer.request("authenticate", { channel: "ahp-root://", resource, token, ...extra });
}

async function blockedServer(name = "fixture") {
  const mcp = await stand.mcpServer({ issuer: stand.idp.issuer, scopes: ["read"] });
  const { peer, session } = await stand.sessionPeer();
  const from = peer.messages.length;
  const server = await stand.host.mcpServers(session).add({ name, url: mcp.url });
  assert.equal(server.state.kind, "authRequired");
  // The peer has the state too (frames may still be in flight when add() resolves).
  await stateChange(peer, "authRequired", "required", from);
  return { mcp, peer, session, server };
}

describe("AHP host MCP bridge: hostile input", () => {
  it("[AHP-MCP-unadvertised] a resource never advertised, or advertised only in a session this connection is not subscribed to, is refused with -32602 and the MCP server is not contacted", async () => {
    const { mcp, peer, session } = await blockedServer();
    const token = await stand.token(mcp.url);
    const contacted = mcp.refused.length;

    const never = await authenticate(peer, "https://never.example.test/mcp", token);
    assert.equal(never.error?.code, -32602);
    assert.equal(never.error?.message, "Invalid params: resource is not one this host advertised.");

    // Same account, but this connection never subscribed to the session: it never saw the advertisement.
    const stranger = await stand.peer();
    const notSubscribed = await authenticate(stranger, mcp.url, token);
    assert.equal(notSubscribed.error?.code, -32602);

    // Unsubscribing withdraws it too.
    const other = await stand.joinSession(session);
    other.notify("unsubscribe", { channel: session });
    const afterUnsubscribe = await authenticate(other, mcp.url, token);
    assert.equal(afterUnsubscribe.error?.code, -32602);

    assert.equal(mcp.refused.length, contacted);
    assert.equal(mcp.stats.toolCalls, 0);
    for (const answer of [never, notSubscribed, afterUnsubscribe])
      assert.ok(!JSON.stringify(answer).includes(token));
  });

  it("[AHP-MCP-oversized-token] a token beyond 16 KiB is refused with -32602 before the MCP server sees it; the state is unchanged", async () => {
    const { mcp, peer, server } = await blockedServer();
    const before = { refused: mcp.refused.length, actions: actions(peer).length };
    const answer = await authenticate(peer, mcp.url, "x".repeat(16_385));
    assert.equal(answer.error?.code, -32602);
    assert.match(answer.error?.message ?? "", /^Invalid params: token: /);
    assert.ok((answer.error?.message.length ?? 0) < 300, "the token is not echoed");
    assert.equal(mcp.refused.length, before.refused);
    assert.equal(actions(peer).length, before.actions);
    assert.equal(server.state.kind, "authRequired");
  });

  it("[AHP-MCP-server-name] authenticate.serverName applies the token only to the server of that exact name; an unknown or differently-cased name is -32602", async () => {
    const mcp = await stand.mcpServer({ issuer: stand.idp.issuer, scopes: ["read"] });
    const { peer, session } = await stand.sessionPeer();
    const servers = stand.host.mcpServers(session);
    const a = await servers.add({ name: "alpha", url: mcp.url });
    const b = await servers.add({ name: "beta", url: mcp.url });
    const token = await stand.token(mcp.url);

    const wrongCase = await authenticate(peer, mcp.url, token, { serverName: "Alpha" });
    assert.equal(wrongCase.error?.code, -32602);
    assert.match(wrongCase.error?.message ?? "", /serverName names no MCP server/);
    assert.equal(a.state.kind, "authRequired");

    const from = peer.messages.length;
    assert.deepEqual(
      (await authenticate(peer, mcp.url, token, { serverName: "alpha" })).result,
      {},
    );
    await stateChange(peer, "ready", undefined, from);
    assert.equal(a.state.kind, "ready");
    assert.equal(b.state.kind, "authRequired", "the other server did not get the token");

    assert.deepEqual((await authenticate(peer, mcp.url, token)).result, {});
    assert.equal(b.state.kind, "ready", "without serverName every advertising server gets it");
  });

  it("[AHP-MCP-sanitise][CORE-peer-text-invisible] control, bidi and invisible characters in a server name and in the MCP server's error_description never reach clients", async () => {
    const mcp = await stand.mcpServer({ issuer: stand.idp.issuer, scopes: ["read"] });
    mcp.hostileChallenge = `Bearer error="invalid_token", error_description="bad\x9b31m\x85news\xad!", resource_metadata="${mcp.metadataUrl}", scope="read"`;
    const { peer, session } = await stand.sessionPeer();
    const from = peer.messages.length;
    const server = await stand.host
      .mcpServers(session)
      .add({ name: "evil\u001b[31m\u202e\u200bName\u{e0041}\ufeff", url: mcp.url });
    assert.equal(server.name, "evil [31mName");
    const change = await stateChange(peer, "authRequired", "required", from);
    const state = (change.params as { action: { state: Record<string, unknown> } }).action.state;
    // The soft hyphen is Latin-1, so a header can carry it; it splits a word where no one sees it.
    assert.equal(state.description, "bad 31m news!");
    for (const message of actions(peer, from)) assert.ok(!UNSAFE.test(JSON.stringify(message)));

    // The cleaned name is the one clients see and the one serverName matches.
    const token = await stand.token(mcp.url);
    mcp.hostileChallenge = undefined;
    const answer = await authenticate(peer, mcp.url, token, { serverName: "evil [31mName" });
    assert.deepEqual(answer.result, {});
  });

  it("[AHP-MCP-cross-origin-metadata] a 401 pointing resource_metadata at another origin is not followed: the server is in error, and its resource is not advertised", async () => {
    let hits = 0;
    const elsewhere = createServer((_req, res) => {
      hits++;
      res.writeHead(500).end();
    });
    await new Promise<void>((resolve) => elsewhere.listen(0, "127.0.0.1", resolve));
    after(() => new Promise<void>((resolve) => elsewhere.close(() => resolve())));
    const port = (elsewhere.address() as AddressInfo).port;
    const mcp = await stand.mcpServer({ issuer: stand.idp.issuer, scopes: ["read"] });
    mcp.hostileChallenge = `Bearer resource_metadata="http://127.0.0.1:${port}/.well-known/oauth-protected-resource"`;
    const { peer, session } = await stand.sessionPeer();
    const from = peer.messages.length;

    const server = await stand.host.mcpServers(session).add({ name: "fixture", url: mcp.url });
    await stateChange(peer, "error", undefined, from);
    assert.equal(server.state.kind, "error");
    assert.match(JSON.stringify(server.state), /another origin/);
    assert.equal(hits, 0);
    const answer = await authenticate(peer, mcp.url, await stand.token(mcp.url));
    assert.equal(answer.error?.code, -32602);
  });

  it("[AHP-MCP-seed-dialect] a seed-dialect connection gets no session actions (the draft has no MCP server state); decided: nothing is sent", async () => {
    const { session } = await stand.sessionPeer();
    const seed = await WsPeer.connect(stand.running.url);
    after(() => seed.close());
    assert.ok((await seed.request("initialize", { protocolVersion: 1 })).result);
    const auth = await seed.request("authenticate", {
      schemeId: "agent",
      scheme: "bearer",
      token: await stand.token(AGENT_RESOURCE),
    });
    assert.deepEqual(auth.result, { authenticated: true });
    assert.ok((await seed.request("subscribe", { channel: session })).result);
    // An official subscriber of the same session is the positive control.
    const official = await stand.joinSession(session);
    const mcp = await stand.mcpServer({ issuer: stand.idp.issuer, scopes: ["read"] });
    await stand.host.mcpServers(session).add({ name: "fixture", url: mcp.url });
    await stateChange(official, "authRequired", "required");
    await seed.request("ping");
    assert.equal(actions(seed).length, 0);
  });

  it("[AHP-MCP-bridge-errors] the host author's mistakes are typed: no session commands, unknown session, taken name, bad URL (credentials never echoed)", async () => {
    const bare = createAhpHost();
    assert.throws(
      () => bare.mcpServers("ahp-session:/x"),
      (e: unknown) => e instanceof McpBridgeError && e.code === "sessions_not_served",
    );
    assert.throws(
      () => stand.host.mcpServers("ahp-session:/does-not-exist"),
      (e: unknown) => e instanceof McpBridgeError && e.code === "session_not_found",
    );
    const { session } = await stand.sessionPeer();
    const servers = stand.host.mcpServers(session);
    const mcp = await stand.mcpServer({ issuer: stand.idp.issuer, scopes: ["read"] });
    await servers.add({ name: "one", url: mcp.url });
    await assert.rejects(servers.add({ name: "one", url: mcp.url }), { code: "server_name_taken" });
    await assert.rejects(servers.add({ name: "\u0007\u202e", url: mcp.url }), {
      code: "invalid_server",
    });
    await assert.rejects(servers.add({ name: "ftp", url: "ftp://127.0.0.1/mcp" }), {
      code: "invalid_server",
    });
    const withPassword = await servers
      .add({ name: "pw", url: "http://user:hunter2-secret@127.0.0.1:1/mcp" })
      .then(
        () => assert.fail("refused"),
        (e: unknown) => e,
      );
    assert.ok(withPassword instanceof McpBridgeError);
    assert.equal(withPassword.code, "invalid_server");
    assert.ok(!withPassword.message.includes("hunter2"));
    assert.deepEqual(
      servers.list().map((s) => s.name),
      ["one"],
    );
  });
});
