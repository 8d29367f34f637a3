/**
 * The AHP host's MCP bridge and session ownership (issue 12 review): a session's MCP server state and its token
 * intake belong to the account that owns the session. A connection that re-authenticates for the agent as another
 * account (or revokes its agent token) no longer owns the session it subscribed to: it stops getting the session's
 * actions and cannot push a token the host would use for that session. Real host (custom verifier: the token names
 * its subject), raw official peer, real protected MCP server, real MCP tokens from the embedded IdP.
 */

import assert from "node:assert/strict";
import { it } from "node:test";
import { ownedMcpSession, useMcpHostStand } from "./host-mcp-stand.ts";

const stand = await useMcpHostStand();
const AGENT = "https://owned-agent.example.test/";

it("[AHP-MCP-owner-switch] a connection that re-authenticates for the agent as another account loses its subscription to the first account's session: no more MCP actions, and authenticate for its MCP server is refused as not advertised", async () => {
  const { peer, call, mcp, server, token } = await ownedMcpSession(stand, { agent: AGENT });

  // The same connection now speaks for bob.
  assert.deepEqual((await call("authenticate", { resource: AGENT, token: "bob" })).result, {});
  const switched = peer.messages.length;
  const bobs = await call("authenticate", { resource: mcp.url, token: await stand.token(mcp.url) });
  assert.equal(
    bobs.error?.code,
    -32602,
    "alice's session's MCP server is not bob's to authenticate",
  );
  mcp.revoked.add(token);
  await assert.rejects(server.callTool("whoami"), { code: "mcp_auth_required" });
  await peer.request("ping");
  assert.equal(
    peer.messages.slice(switched).filter((m) => m.method === "action").length,
    0,
    "alice's session's actions no longer reach the connection",
  );
});
