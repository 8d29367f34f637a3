/**
 * Residual defects of the AHP host's MCP bridge (second readers' reports): `initialize` answering `serverSeq: 0`
 * after actions were stamped, and a connection whose agent token expires keeping the session it subscribed to.
 * Real host on loopback, raw official peers, real protected MCP server, real MCP tokens from the embedded IdP.
 */

import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { after, it } from "node:test";
import { WsPeer } from "../support/ws-peer.ts";
import { actions, ownedMcpSession, stateChange, useMcpHostStand } from "./host-mcp-stand.ts";

const stand = await useMcpHostStand();

it("[AHP-MCP-initialize-seq] initialize answers the host's current serverSeq (and the root snapshot's fromSeq), not 0, once the MCP bridge stamped actions: the host has one action sequence", async () => {
  const { peer, session } = await stand.sessionPeer();
  const mcp = await stand.mcpServer({ issuer: stand.idp.issuer, scopes: ["read"] });
  const from = peer.messages.length;
  await stand.host.mcpServers(session).add({ name: "fixture", url: mcp.url });
  await stateChange(peer, "authRequired", undefined, from);
  const stamped = actions(peer, from).map((a) => a.serverSeq as number);
  const last = Math.max(...stamped);
  assert.ok(last > 0, `actions were stamped: ${stamped}`);

  const late = await WsPeer.connect(stand.running.url);
  after(() => late.close());
  const init = await late.request("initialize", {
    channel: "ahp-root://",
    protocolVersions: ["1.1.0"],
    clientId: `c-${randomUUID()}`,
    initialSubscriptions: ["ahp-root://"],
  });
  const result = init.result as { serverSeq: number; snapshots: { fromSeq: number }[] };
  assert.equal(result.serverSeq, last, "the latest serverSeq, so the next action is seen as new");
  assert.equal(result.snapshots[0]?.fromSeq, last);
  const root = await late.request("subscribe", { channel: "ahp-root://" });
  assert.equal((root.result as { snapshot: { fromSeq: number } }).snapshot.fromSeq, last);

  // The next action (from the same one sequence) comes after what initialize answered.
  const before = peer.messages.length;
  await peer.request("authenticate", {
    channel: "ahp-root://",
    resource: mcp.url,
    token: await stand.token(mcp.url),
  });
  await stateChange(peer, "ready", undefined, before);
  const next = actions(peer, before).map((a) => a.serverSeq as number);
  assert.ok(
    next.every((seq) => seq > result.serverSeq),
    `${next} after ${result.serverSeq}`,
  );
});

it("[AHP-MCP-agent-expiry] a connection whose agent token expires (not replaced) leaves the session it subscribed to: no more MCP actions, and authenticate for its MCP server is refused as not advertised", async () => {
  let skew = 0;
  const AGENT = "https://expiring-agent.example.test/";
  // Valid for an hour by the client's word.
  const { peer, call, mcp, server, token } = await ownedMcpSession(stand, {
    agent: AGENT,
    now: () => Date.now() + skew,
    expiresIn: 3600,
  });

  // Two hours later the agent credential has expired; the host notices at the next check (here: a gated command;
  // in real time, the expiry timer).
  skew += 2 * 3600_000;
  const gated = await peer.request("listSessions", {});
  assert.equal(gated.error?.code, -32007, "the agent credential expired");
  const expired = peer.messages.length;
  const again = await call("authenticate", {
    resource: mcp.url,
    token: await stand.token(mcp.url),
  });
  assert.equal(
    again.error?.code,
    -32602,
    "the session is no longer this connection's to push a token for",
  );
  mcp.revoked.add(token);
  await assert.rejects(server.callTool("whoami"), { code: "mcp_auth_required" });
  await peer.request("ping");
  assert.equal(
    peer.messages.slice(expired).filter((m) => m.method === "action").length,
    0,
    "the session's actions no longer reach the connection",
  );
});
