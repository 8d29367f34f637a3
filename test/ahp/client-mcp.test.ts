/**
 * The AHP client's side of the MCP bridge, end to end: agentauth's `AhpClient` watches a session, recognises the
 * host's `McpServerAuthRequiredState`, signs in with the engine (device flow, the auto-approving embedded server plays
 * the person) for the MCP server's resource and `authenticate`s; on `insufficientScope` it signs in again for the
 * wider scopes. Real host, real protected MCP server (official SDKs on both MCP ends), real authorization server.
 */

import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { after, it } from "node:test";
import {
  connectAhpHost,
  type McpAuthNotice,
  readMcpAuthNotice,
  readMcpAuthNoticesFromSnapshot,
} from "../../src/ahp/client/index.ts";
import type { HostMcpServer } from "../../src/ahp/host/index.ts";
import { MemoryCredentialStore } from "../../src/vault/index.ts";
import { useIdp } from "../support/idp.ts";
import { autoApprove } from "./fixtures/client-harness.ts";
import { useMcpHostStand } from "./host-mcp-stand.ts";

const stand = await useMcpHostStand();

/** Waits (bounded) until the host's server reaches `kind`. */
async function until(server: HostMcpServer, kind: string, timeoutMs = 15_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (server.state.kind !== kind) {
    if (Date.now() > deadline) {
      throw new Error(`the MCP server stayed ${JSON.stringify(server.state)} (wanted ${kind})`);
    }
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

it("[AHP-MCP-client-sign-in] the AHP client signs in for an MCP server's advertised resource and authenticates; on insufficientScope it steps up with the wider scopes; the host's calls then succeed", async () => {
  const mcp = await stand.mcpServer({ issuer: stand.idp.issuer, scopes: ["read"] });
  const notices: McpAuthNotice[] = [];
  const prompts: string[] = [];
  const errors: Error[] = [];
  const store = new MemoryCredentialStore();
  const client = await connectAhpHost(stand.running.url, {
    store,
    dialects: ["official"],
    login: autoApprove(prompts),
    authenticateMcpServers: true,
    onMcpAuthRequired: (n) => notices.push(n),
    onRenewalError: (e) => errors.push(e),
  });
  after(() => client.close());
  await client.authenticate();
  const session = `ahp-session:/${randomUUID()}`;
  await client.request("createSession", { channel: session, provider: "agent" });
  assert.deepEqual(await client.watchSession(session), []);

  const server = await stand.host.mcpServers(session).add({ name: "files", url: mcp.url });
  await until(server, "ready");
  assert.deepEqual(
    notices.map((n) => [n.reason, n.resource.resource, n.requiredScopes]),
    [["required", mcp.url, ["read"]]],
  );
  assert.deepEqual((await server.callTool("whoami")).content, [{ type: "text", text: "hello" }]);

  // Step-up: the server now wants write too.
  mcp.requiredScopes = ["read", "write"];
  await server.callTool("whoami").catch(() => undefined);
  await until(server, "ready");
  assert.equal(notices.at(-1)?.reason, "insufficientScope");
  assert.deepEqual(notices.at(-1)?.requiredScopes, ["read", "write"]);
  assert.deepEqual((await server.callTool("whoami")).content, [{ type: "text", text: "hello" }]);
  const stored = (await store.list({ resource: mcp.url }))[0];
  assert.ok(stored?.scopes.includes("write"), JSON.stringify(stored?.scopes));
  assert.ok(stored?.scopes.includes("read"), "the step-up kept the granted scope");
  assert.deepEqual(errors, []);
  assert.ok(prompts.length >= 2, `sign-ins: ${prompts.join(", ")}`);
});

it("[AHP-MCP-client-reader] only well-formed authRequired states become notices (other actions, malformed envelopes, ready states ignored); snapshot children are read", () => {
  const resource = {
    resource: "https://mcp.example.test/mcp",
    authorization_servers: ["https://as.test"],
  };
  const authRequired = {
    kind: "authRequired",
    reason: "insufficientScope",
    oauthClient: { clientId: "abc" },
    resource: { ...resource, scopes_supported: ["read"] },
    requiredScopes: ["repo"],
  };
  const notice = readMcpAuthNotice("action", {
    channel: "ahp-session:/s",
    serverSeq: 3,
    action: { type: "session/mcpServerStateChanged", id: "m1", state: authRequired },
  });
  assert.equal(notice?.reason, "insufficientScope");
  assert.deepEqual(notice?.resource.scopes, ["repo"], "requiredScopes are authoritative");
  assert.equal(notice?.oauthClientId, "abc");
  assert.equal(notice?.serverId, "m1");
  for (const [method, params] of [
    ["auth/required", { channel: "ahp-root://", resource }],
    [
      "action",
      { channel: "s", serverSeq: 1, action: { type: "session/titleChanged", title: "x" } },
    ],
    ["action", { channel: "s", action: { type: "session/mcpServerStateChanged" } }],
    [
      "action",
      {
        channel: "s",
        serverSeq: 1,
        action: { type: "session/mcpServerStateChanged", id: "m", state: { kind: "ready" } },
      },
    ],
    [
      "action",
      {
        channel: "s",
        serverSeq: 1,
        action: {
          type: "session/mcpServerStateChanged",
          id: "m",
          state: { kind: "authRequired", reason: "required" },
        },
      },
    ],
    ["action", null],
  ] as const) {
    assert.equal(readMcpAuthNotice(method, params), undefined, JSON.stringify(params));
  }
  const snapshot = readMcpAuthNoticesFromSnapshot("ahp-session:/s", {
    customizations: [
      { type: "mcpServer", id: "top", uri: "u", name: "top", state: { kind: "ready" } },
      {
        type: "plugin",
        id: "p",
        uri: "u",
        name: "plugin",
        children: [
          { type: "mcpServer", id: "child", uri: "u", name: "child", state: authRequired },
        ],
      },
      "garbage",
    ],
  });
  assert.deepEqual(
    snapshot.map((n) => [n.serverId, n.serverName]),
    [["child", "child"]],
  );
});

it("[AHP-MCP-client-new-issuer] an MCP server that moves to another authorization server: the client signs in where the host's latest McpServerAuthRequiredState points, not where the first one did", async () => {
  const second = await useIdp();
  const mcp = await stand.mcpServer({ issuer: stand.idp.issuer, scopes: ["read"] });
  const errors: Error[] = [];
  const store = new MemoryCredentialStore();
  const client = await connectAhpHost(stand.running.url, {
    store,
    dialects: ["official"],
    login: autoApprove(),
    authenticateMcpServers: true,
    onRenewalError: (e) => errors.push(e),
  });
  after(() => client.close());
  await client.authenticate();
  const session = `ahp-session:/${randomUUID()}`;
  await client.request("createSession", { channel: session, provider: "agent" });
  await client.watchSession(session);
  const server = await stand.host.mcpServers(session).add({ name: "files", url: mcp.url });
  await until(server, "ready");

  mcp.switchIssuer(second.issuer);
  await server.callTool("whoami").catch(() => undefined);
  await until(server, "ready");
  assert.deepEqual((await server.callTool("whoami")).content, [{ type: "text", text: "hello" }]);
  assert.equal((await store.list({ issuer: second.issuer, resource: mcp.url })).length, 1);
  assert.deepEqual(errors, []);
});

it("[AHP-MCP-client-oauth-client] a McpServerAuthRequiredState with oauthClient: the client signs in with that pre-registered client (AHP: clients MUST use it), not its own default", async () => {
  const preregistered = "mcp-preregistered";
  const idp = await useIdp({
    clients: [
      {
        client_id: preregistered,
        client_name: "pre-registered for the MCP server",
        application_type: "native",
        token_endpoint_auth_method: "none",
        grant_types: ["refresh_token", "urn:ietf:params:oauth:grant-type:device_code"],
        response_types: [],
        redirect_uris: [],
      },
    ],
  });
  const mcp = await stand.mcpServer({ issuer: idp.issuer, scopes: ["read"] });
  const store = new MemoryCredentialStore();
  const errors: Error[] = [];
  const client = await connectAhpHost(stand.running.url, {
    store,
    dialects: ["official"],
    login: autoApprove(),
    authenticateMcpServers: true,
    onRenewalError: (e) => errors.push(e),
  });
  after(() => client.close());
  await client.authenticate();
  const session = `ahp-session:/${randomUUID()}`;
  await client.request("createSession", { channel: session, provider: "agent" });
  await client.watchSession(session);
  const server = await stand.host
    .mcpServers(session)
    .add({ name: "files", url: mcp.url, oauthClientId: preregistered });
  await until(server, "ready");
  const stored = await store.list({ issuer: idp.issuer, resource: mcp.url });
  assert.deepEqual(
    stored.map((c) => c.clientId),
    [preregistered],
  );
  assert.deepEqual(errors, []);
});

it("[AHP-MCP-client-allow] authenticateMcpServers as a predicate: a resource it refuses gets no sign-in and no token (a host names resources, so a client holding tokens for other MCP servers must choose which to hand over); one it allows does", async () => {
  const refused = await stand.mcpServer({ issuer: stand.idp.issuer, scopes: ["read"] });
  const allowed = await stand.mcpServer({ issuer: stand.idp.issuer, scopes: ["read"] });
  const store = new MemoryCredentialStore();
  const prompts: string[] = [];
  const asked: string[] = [];
  const notices: McpAuthNotice[] = [];
  const client = await connectAhpHost(stand.running.url, {
    store,
    dialects: ["official"],
    login: autoApprove(prompts),
    authenticateMcpServers: (notice) => {
      asked.push(notice.resource.resource);
      return notice.resource.resource === allowed.url;
    },
    onMcpAuthRequired: (n) => notices.push(n),
  });
  after(() => client.close());
  await client.authenticate();
  const session = `ahp-session:/${randomUUID()}`;
  await client.request("createSession", { channel: session, provider: "agent" });
  await client.watchSession(session);
  const first = await stand.host.mcpServers(session).add({ name: "refused", url: refused.url });
  const second = await stand.host.mcpServers(session).add({ name: "allowed", url: allowed.url });
  await until(second, "ready");
  assert.deepEqual(asked.sort(), [allowed.url, refused.url].sort());
  assert.equal(first.state.kind, "authRequired", "no token was pushed for the refused resource");
  assert.equal((await store.list({ resource: refused.url })).length, 0, "no sign-in for it either");
  assert.equal((await store.list({ resource: allowed.url })).length, 1);
  assert.ok(
    notices.some((n) => n.resource.resource === refused.url),
    "the app still hears about it",
  );
});
