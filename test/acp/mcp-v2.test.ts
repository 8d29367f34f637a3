/**
 * The MCP bridge over ACP v2 (draft), raw JSON lines: the kit records `mcpServers` from a v2 `session/new` and asks
 * through a v2 URL elicitation; the agent's tool call then succeeds, and no token appears on the agent's stdout.
 */

import assert from "node:assert/strict";
import { test } from "node:test";
import { startProtectedMcpServer } from "../mcp/fixtures/protected-mcp-server.ts";
import { useIdp } from "../support/idp.ts";
import type { JsonlPeer } from "../support/jsonl-peer.ts";
import { tempDir } from "../support/tmp.ts";
import { assertNotPrinted, openInBrowser, vaultTokens } from "./fixtures/agent-process.ts";
import { mcpServers, type StatusView, spawnMcpAgentPeer } from "./fixtures/mcp-agent-process.ts";
import { httpServer } from "./fixtures/mcp-session.ts";

const idp = await useIdp();

async function statusWhen(agent: JsonlPeer, ok: (s: StatusView) => boolean): Promise<StatusView> {
  for (;;) {
    const from = agent.mark();
    const status = (await agent.call("auth/status", {})) as StatusView;
    if (ok(status)) return status;
    await agent.notification("auth/status_update", from);
  }
}

test("[ACP-mcp-v2-elicitation] ACP v2: session/new with an OAuth MCP server, needs sign-in, v2 URL elicitation, the tool call succeeds", {
  timeout: 60_000,
}, async (t) => {
  const home = tempDir();
  const mcp = await startProtectedMcpServer({ issuer: idp.issuer });
  const agent = spawnMcpAgentPeer(t, { issuer: idp.issuer, home });
  const asked: { sessionId?: string; mode?: string; url: string }[] = [];
  agent.handle("elicitation/create", async (message) => {
    const params = message.params as { sessionId?: string; mode?: string; url: string };
    asked.push(params);
    await openInBrowser(params.url);
    return { action: "accept" };
  });
  const init = (await agent.call("initialize", {
    protocolVersion: 2,
    info: { name: "t", version: "1" },
    capabilities: { elicitation: { url: {} } },
  })) as { protocolVersion: number };
  assert.equal(init.protocolVersion, 2);
  const { sessionId } = (await agent.call("session/new", {
    cwd: home,
    mcpServers: [httpServer("fixture", mcp.url)],
  })) as { sessionId: string };
  await statusWhen(agent, (s) => mcpServers(s)[0]?.state === "needs_sign_in");

  const from = agent.mark();
  await agent.call("session/prompt", {
    sessionId,
    prompt: [{ type: "text", text: "call fixture whoami" }],
  });

  const texts = agent
    .notifications("session/update")
    .slice(0)
    .filter((n) => agent.messages.indexOf(n) >= from)
    .map((n) => (n.params as { update: { content?: { text?: string } } }).update.content?.text);
  assert.deepEqual(texts, ["hello"]);
  assert.equal(asked.length, 1);
  assert.equal(asked[0]?.mode, "url");
  assert.equal(asked[0]?.sessionId, sessionId);
  await statusWhen(agent, (s) => mcpServers(s)[0]?.state === "signed_in");
  for (const tokens of await vaultTokens(home)) {
    for (const secret of [tokens.accessToken, tokens.refreshToken]) {
      if (secret) assertNotPrinted(agent, secret.reveal(), "a token");
    }
  }
});
