/**
 * The kit keys an OAuth method's credentials by its issuer, and the engine stores the issuer the authorization
 * server's metadata names, which RFC 8414 §3.3 (as oauth4webapi checks it) lets differ from the configured one in
 * form only: "https://as.example/" configured, "https://as.example" stored. Both are the method's: its state,
 * its logout, and the MCP accounts (which leave the agent's own credentials out) must read them alike. And a
 * record a provider preset issued (the method since removed from the configuration) is never an MCP sign-in:
 * an MCP server's sign-in never names a preset.
 */

import assert from "node:assert/strict";
import { test } from "node:test";
import { createAgentAuth } from "../../src/acp/agent/index.ts";
import { createLogger } from "../../src/core/log.ts";
import { Secret } from "../../src/core/secret.ts";
import { discoverAuthorizationServer, introspectToken } from "../../src/oauth/index.ts";
import { MemoryCredentialStore } from "../../src/vault/index.ts";
import { closedPort } from "../support/closed-port.ts";
import { useIdp } from "../support/idp.ts";
import { tempDir } from "../support/tmp.ts";
import {
  initializeV1,
  oauthLogin,
  startAgent,
  vaultSummaries,
  vaultTokens,
} from "./fixtures/agent-process.ts";

const idp = await useIdp();
const SUBJECT = "acp-agent:issuer-agent";

function record(issuer: string, resource: string, extra: Record<string, unknown> = {}) {
  return {
    subject: SUBJECT,
    issuer,
    resource,
    clientId: "agent-client",
    tokens: { accessToken: new Secret(`token-${issuer}-${resource}`) },
    scopes: ["read"],
    account: { label: "alice" },
    status: "active" as const,
    ...extra,
  };
}

/** The agent with an API-key method only (none in its environment) over `store`, no MCP probe. */
function apiKeyAgent(
  store: MemoryCredentialStore,
  extra: Partial<Parameters<typeof createAgentAuth>[0]> = {},
) {
  return createAgentAuth({
    name: "issuer-agent",
    methods: [{ kind: "api-key", id: "api-key", name: "API key" }],
    store,
    env: {},
    mcp: { probe: false },
    ...extra,
  });
}

test("[ACP-own-issuer-form] an OAuth method configured with a trailing '/' on its issuer is signed in after its login, and its logout revokes the credential", {
  timeout: 60_000,
}, async (t) => {
  assert.ok(!idp.issuer.endsWith("/"), "the server names its issuer without a trailing slash");
  const home = tempDir();
  const agent = startAgent(t, { issuer: `${idp.issuer}/`, home });
  await initializeV1(agent);
  assert.deepEqual((await oauthLogin(agent)).response.result, {});
  const [stored] = await vaultSummaries(home);
  assert.equal(stored?.issuer, idp.issuer, "the engine stores the metadata's issuer");
  const [tokens] = await vaultTokens(home);
  assert.ok(tokens?.refreshToken, "the login stored a refresh token");

  const status = (await agent.call("auth/status", {})) as { state: string; accounts: unknown[] };
  assert.equal(status.state, "authenticated", "the method's own credential counts");
  assert.equal(status.accounts.length, 1);

  await agent.call("logout", {});
  assert.deepEqual(await vaultSummaries(home), [], "logout deleted the credential");
  const as = await discoverAuthorizationServer(idp.issuer);
  const info = await introspectToken({
    as,
    client: { clientId: "agentauth-example-agent" },
    token: tokens.refreshToken,
    tokenTypeHint: "refresh_token",
  });
  assert.equal(info.active, false, "logout revoked the refresh token at the server");
  await agent.close();
});

test("[ACP-mcp-accounts-stored-own-form] the agent's own credential for an http(s) resource is not an MCP server when the issuer differs from the configured one in form only", async () => {
  const store = new MemoryCredentialStore();
  const auth = createAgentAuth({
    name: "issuer-agent",
    methods: [
      {
        kind: "oauth",
        id: "oauth",
        name: "Sign in",
        issuer: "https://AS.example/",
        clientId: "agent-client",
        resource: "https://api.example/",
      },
    ],
    store,
    mcp: { probe: false },
  });
  // What a login stores: the metadata's issuer, equal to the configured one by URL (RFC 8414 §3.3).
  await store.put(record("https://as.example", "https://api.example/"));
  await store.put(record("https://as.example", "https://mcp.example/mcp", { clientId: "dcr-1" }));
  const status = await auth.status();
  assert.equal(status.state, "authenticated");
  assert.deepEqual(
    status.accounts.map((a) => a._meta?.agentauth?.mcpServer?.url ?? a.label),
    ["alice", "https://mcp.example/mcp"],
  );
});

test("[ACP-mcp-accounts-stored-preset] a credential a provider preset issued is never listed as an MCP server, even once its method is gone from the configuration", async () => {
  const store = new MemoryCredentialStore();
  const auth = apiKeyAgent(store);
  await store.put(
    record("https://github.com", "https://api.github.com/", { provider: { name: "github" } }),
  );
  await store.put(record("https://as.example", "https://mcp.example/mcp", { clientId: "dcr-1" }));
  const status = await auth.status();
  assert.deepEqual(
    status.accounts.map((a) => a._meta?.agentauth?.mcpServer?.url),
    ["https://mcp.example/mcp"],
    "only the MCP sign-in is an MCP account",
  );
});

test("[ACP-mcp-accounts-stored-revoked] what auth/status lists as a stored MCP sign-in, logout deletes, whatever the case of its URL's scheme", async () => {
  const logged: string[] = [];
  const store = new MemoryCredentialStore();
  const auth = apiKeyAgent(store, {
    logger: createLogger({ level: "warn", write: (line) => void logged.push(line) }),
  });
  // An authorization server nobody listens on: the revocation fails at once, the record is deleted anyway.
  const issuer = `http://127.0.0.1:${await closedPort()}`;
  await store.put(record(issuer, "HTTPS://MCP.example/x", { clientId: "dcr-1" }));
  await store.put(record(issuer, "https://mcp.example/y", { clientId: "dcr-1" }));
  const listed = (await auth.status()).accounts.map((a) => a._meta?.agentauth?.mcpServer?.url);
  assert.deepEqual(listed.sort(), ["https://mcp.example/x", "https://mcp.example/y"]);
  await auth.logout();
  assert.deepEqual(await store.list({ subject: SUBJECT }), [], "every listed sign-in is gone");
  assert.deepEqual((await auth.status()).accounts, []);
  assert.equal(logged.length, 2, "each failed revocation is logged");
  assert.ok(!logged.join("").includes("token-"), "a token reached the log");
});
