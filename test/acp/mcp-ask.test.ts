/**
 * What `askToSignIn` writes on the agent's stderr (a log a client may keep): the sign-in link, except when the
 * server's URL has a query. The kit treats a query as possibly holding a key (auth/status shows `?…`), and the
 * authorization URL carries the server's URL whole as its RFC 8707 `resource`, so that link goes only to the client.
 */

import assert from "node:assert/strict";
import { test } from "node:test";
import { askToSignIn } from "../../src/acp/agent/mcp/ask.ts";
import { readSessionServers } from "../../src/acp/agent/mcp/index.ts";

function authorizationUrl(resource: string): URL {
  const url = new URL("https://as.example/authorize");
  url.search = new URLSearchParams({
    response_type: "code",
    client_id: "c1",
    state: "st",
    code_challenge: "ch",
    resource,
  }).toString();
  return url;
}

async function stderrOf(serverUrl: string): Promise<{ text: string; code: unknown }> {
  const [server] = readSessionServers([{ type: "http", name: "q", url: serverUrl, headers: [] }]);
  assert.ok(server && !server.invalid);
  let text = "";
  const error = await askToSignIn(
    { client: undefined, urlElicitation: false, stderr: (s) => (text += s) },
    "s1",
    server,
    authorizationUrl(server.url),
  ).catch((e: unknown) => e);
  return { text, code: (error as { code?: unknown }).code };
}

test("[ACP-mcp-ask-stderr-no-query-key] a server URL with a query (it may hold a key) never reaches stderr, not even inside the sign-in link's resource", async () => {
  const { text, code } = await stderrOf("https://mcp.example/mcp?api_key=sk-live-7f3a9c");
  assert.equal(code, "no_client");
  assert.match(text, /sign in to the MCP server “q” \(https:\/\/mcp\.example\/mcp\?…\)/);
  assert.ok(!text.includes("sk-live-7f3a9c"), `stderr: ${text}`);
});

test("[ACP-mcp-ask-stderr-link] without a query, stderr carries the whole sign-in link (the agent's own log may be where the person finds it)", async () => {
  const { text } = await stderrOf("https://mcp.example/mcp");
  assert.match(
    text,
    / Open https:\/\/as\.example\/authorize\?.*resource=https%3A%2F%2Fmcp\.example%2Fmcp/,
  );
});
