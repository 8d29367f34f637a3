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
