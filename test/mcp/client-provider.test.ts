import assert from "node:assert/strict";
import { test } from "node:test";
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { agentAuthProvider } from "../../src/mcp/index.ts";
import { MemoryCredentialStore } from "../../src/vault/index.ts";
import { expireAccessToken, loginForTest } from "../support/credentials.ts";
import { useIdp } from "../support/idp.ts";
import { startProtectedMcpServer } from "./fixtures/protected-mcp-server.ts";

const idp = await useIdp();

async function signedIn() {
  const mcp = await startProtectedMcpServer({ issuer: idp.issuer });
  const store = new MemoryCredentialStore();
  const record = await loginForTest(idp, store, {
    resource: mcp.url,
    scope: "openid offline_access read",
    subject: "alice",
  });
  return { mcp, store, record };
}

async function connect(serverUrl: string, authProvider: ReturnType<typeof agentAuthProvider>) {
  const client = new Client({ name: "agentauth-test", version: "1.0.0" });
  await client.connect(new StreamableHTTPClientTransport(new URL(serverUrl), { authProvider }));
  return client;
}

test("[MCP-client-token] the official SDK client calls a protected tool with the vault's token", async (t) => {
  const { mcp, store } = await signedIn();
  const provider = agentAuthProvider({
    serverUrl: mcp.url,
    store,
    subject: "alice",
    issuer: idp.issuer,
  });
  const client = await connect(mcp.url, provider);
  t.after(() => client.close());
  const result = await client.callTool({ name: "whoami", arguments: {} });
  assert.deepEqual(result.content, [{ type: "text", text: "hello" }]);
  assert.equal(mcp.stats.unauthorized, 0, "the token was accepted on the first try");
  assert.equal(mcp.stats.toolCalls, 1);
});
