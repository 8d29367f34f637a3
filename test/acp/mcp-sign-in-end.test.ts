/**
 * An MCP sign-in that is waiting for the person ends when the reason for it goes: the client disconnects (the agent's
 * loopback listener closes and the process can exit, long before the sign-in's own timeout), or the person logs the
 * agent out (the sign-in must not log them back in to the MCP server afterwards). Raw JSON lines over a real agent
 * process, the real protected MCP server and the embedded authorization server.
 */

import assert from "node:assert/strict";
import { test } from "node:test";
import { startProtectedMcpServer } from "../mcp/fixtures/protected-mcp-server.ts";
import { useIdp } from "../support/idp.ts";
import type { JsonlPeer, spawnPeer } from "../support/jsonl-peer.ts";
import { tempDir } from "../support/tmp.ts";
import { vaultSummaries } from "./fixtures/agent-process.ts";
import { spawnMcpAgentPeer } from "./fixtures/mcp-agent-process.ts";
import { httpServer } from "./fixtures/mcp-session.ts";

const idp = await useIdp();
// Far beyond the tests' own timeouts: a sign-in that ends must end for its reason, not by this timer.
const SIGN_IN_TIMEOUT_MS = "600000";
const WAITING = { MCP_PROBE: "off", MCP_SIGN_IN_TIMEOUT_MS: SIGN_IN_TIMEOUT_MS };

async function startWaitingSignIn(
  t: Parameters<typeof spawnPeer>[2],
  home: string,
  mcpUrl: string,
): Promise<{ agent: JsonlPeer; url: URL; prompted: Promise<unknown> }> {
  const agent = spawnMcpAgentPeer(t, { issuer: idp.issuer, home, env: WAITING });
  let seen: (url: string) => void = () => {};
  const asked = new Promise<string>((resolve) => {
    seen = resolve;
  });
  // The person accepts, and has not finished signing in yet (the URL is not opened).
  agent.handle("elicitation/create", async (message) => {
    seen((message.params as { url: string }).url);
    return { action: "accept" };
  });
  await agent.call("initialize", {
    protocolVersion: 1,
    clientCapabilities: { elicitation: { url: {} } },
  });
  const { sessionId } = (await agent.call("session/new", {
    cwd: home,
    mcpServers: [httpServer("fixture", mcpUrl)],
  })) as { sessionId: string };
  const prompted = agent.call("session/prompt", {
    sessionId,
    prompt: [{ type: "text", text: "call fixture whoami" }],
  });
  prompted.catch(() => {});
  return { agent, url: new URL(await asked), prompted };
}

/** Whether anything still listens at the sign-in's redirect URI. */
async function listening(redirectUri: string): Promise<boolean> {
  try {
    await (await fetch(redirectUri)).arrayBuffer();
    return true;
  } catch {
    return false;
  }
}

test("[ACP-mcp-sign-in-ends-on-disconnect] the client disconnects while an MCP sign-in waits for the person: the loopback listener closes and the agent exits", {
  timeout: 30_000,
}, async (t) => {
  const home = tempDir();
  const mcp = await startProtectedMcpServer({ issuer: idp.issuer });
  const { agent, url } = await startWaitingSignIn(t, home, mcp.url);
  const redirectUri = url.searchParams.get("redirect_uri") as string;
  assert.ok(await listening(redirectUri), "the sign-in is waiting on its loopback listener");

  // Ends only if the sign-in ends with the connection: its own timeout is 10 minutes, this test's 30 s.
  const exit = await agent.close();
  assert.equal(exit.code, 0, `the agent exited cleanly: ${JSON.stringify(exit)}`);
  assert.equal(await listening(redirectUri), false, "the loopback listener is closed");
});

test("[ACP-mcp-sign-in-ends-on-logout] logout while an MCP sign-in waits: the sign-in ends typed, its listener closes, and finishing it in the browser afterwards stores nothing", {
  timeout: 30_000,
}, async (t) => {
  const home = tempDir();
  const mcp = await startProtectedMcpServer({ issuer: idp.issuer });
  const { agent, url, prompted } = await startWaitingSignIn(t, home, mcp.url);
  const redirectUri = url.searchParams.get("redirect_uri") as string;
  const from = agent.mark();

  await agent.call("logout", {});
  await prompted;

  const texts = agent
    .notifications("session/update")
    .filter((n) => agent.messages.indexOf(n) >= from)
    .map((n) => (n.params as { update: { content?: { text?: string } } }).update.content?.text);
  assert.deepEqual(texts, ["error: sign_in_cancelled"]);
  assert.equal(await listening(redirectUri), false, "the loopback listener is closed");
  // The person finishes in the browser after all: the redirect finds nobody, nothing is stored.
  await fetch(url).catch(() => {});
  assert.deepEqual(
    (await vaultSummaries(home)).filter((r) => r.resource === mcp.url),
    [],
    "no MCP credential after the logout",
  );
  const status = (await agent.call("auth/status", {})) as {
    accounts: {
      _meta?: { agentauth?: { mcpServer?: { state: string; error?: { code: string } } } };
    }[];
  };
  const server = status.accounts.at(-1)?._meta?.agentauth?.mcpServer;
  assert.deepEqual([server?.state, server?.error?.code], ["needs_sign_in", "sign_in_cancelled"]);
});

test("[ACP-mcp-disconnect-during-elicitation] the client disconnects before answering the elicitation: the agent's call fails typed (no_client), no raw transport error, and the agent exits", {
  timeout: 30_000,
}, async (t) => {
  const home = tempDir();
  const mcp = await startProtectedMcpServer({ issuer: idp.issuer });
  const agent = spawnMcpAgentPeer(t, { issuer: idp.issuer, home, env: WAITING });
  let closing: Promise<unknown> | undefined;
  // The person closes the client while the elicitation is on screen: it is never answered.
  agent.handle("elicitation/create", () => {
    closing = agent.close();
    return new Promise(() => {});
  });
  await agent.call("initialize", {
    protocolVersion: 1,
    clientCapabilities: { elicitation: { url: {} } },
  });
  const { sessionId } = (await agent.call("session/new", {
    cwd: home,
    mcpServers: [httpServer("fixture", mcp.url)],
  })) as { sessionId: string };
  agent.send({
    jsonrpc: "2.0",
    id: agent.nextId(),
    method: "session/prompt",
    params: { sessionId, prompt: [{ type: "text", text: "call fixture whoami" }] },
  });
  await agent.waitForStderr(/the call failed/).catch(() => undefined);
  await agent.exited;
  await closing;
  assert.match(agent.stderr, /mcp-agent: the call failed \(no_client\)/, agent.stderr);
});
