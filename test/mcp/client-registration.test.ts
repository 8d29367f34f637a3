/**
 * What survives a process: every credential keeps the client id it was issued to, and dynamic registrations are
 * kept in the vault too (src/oauth/registration-store.ts). A second provider over the same vault (a new process)
 * therefore refreshes with the stored client, and a new sign-in over the same vault reuses the stored registration;
 * only another vault registers again. A registration the server forgot is replaced once.
 */

import assert from "node:assert/strict";
import { test } from "node:test";
import { registrationMetadata } from "../../src/mcp/client/registration.ts";
import { agentAuthProvider } from "../../src/mcp/index.ts";
import { REGISTRATION_SUBJECT, registrationKey } from "../../src/oauth/index.ts";
import { MemoryCredentialStore } from "../../src/vault/index.ts";
import { expireAccessToken } from "../support/credentials.ts";
import { useIdp } from "../support/idp.ts";
import {
  browser,
  connect,
  connectWithPerson,
  hello,
  providerFor,
  whoami,
} from "./fixtures/mcp-client.ts";
import { startProtectedMcpServer } from "./fixtures/protected-mcp-server.ts";

const idp = await useIdp();

test("[MCP-client-registration-across-processes] a second provider over the same vault refreshes with the stored client id: no registration, no sign-in", async () => {
  const mcp = await startProtectedMcpServer({ issuer: idp.issuer });
  const store = new MemoryCredentialStore();
  const before = idp.memory().registrations;
  const { client: a } = await connectWithPerson(mcp.url, {
    store,
  });
  assert.deepEqual((await a.callTool(whoami)).content, hello);
  assert.equal(idp.memory().registrations, before + 1);
  const stored = await store.get({ subject: "alice", issuer: idp.issuer, resource: mcp.url });
  assert.ok(stored);
  await expireAccessToken(store, stored);

  const second = browser();
  idp.resetStats();
  const b = await connect(
    mcp.url,
    providerFor(mcp.url, {
      store,
      issuer: idp.issuer,
      onAuthorizationUrl: second.open,
    }),
  );
  assert.deepEqual((await b.callTool(whoami)).content, hello);

  assert.deepEqual(idp.stats.byGrant.refresh_token, { success: 1, error: 0 });
  assert.equal(second.asked.length, 0, "no sign-in");
  assert.equal(idp.memory().registrations, before + 1, "no new registration");
  const after = await store.get({ subject: "alice", issuer: idp.issuer, resource: mcp.url });
  assert.equal(after?.clientId, stored.clientId);
});

test("[MCP-client-registration-memory] within one provider, a second sign-in (step-up) reuses the registration; a new provider over another vault registers again", async () => {
  const mcp = await startProtectedMcpServer({ issuer: idp.issuer, scopes: ["read"] });
  const store = new MemoryCredentialStore();
  const person = browser();
  const before = idp.memory().registrations;
  const provider = providerFor(mcp.url, {
    store,
    onAuthorizationUrl: person.open,
  });
  const client = await connect(mcp.url, provider);
  await client.callTool(whoami);
  await provider.stepUp({ requiredScope: "write" });
  assert.equal(person.asked.length, 2);
  assert.equal(
    person.asked[1]?.searchParams.get("client_id"),
    person.asked[0]?.searchParams.get("client_id"),
  );
  assert.equal(idp.memory().registrations, before + 1);

  // A new process with an empty vault for this server signs in, and registers again.
  const { client: fresh } = await connectWithPerson(mcp.url);
  await fresh.callTool(whoami);
  assert.equal(idp.memory().registrations, before + 2);
});

test("[MCP-client-first-401-no-refresh] a new provider without the issuer over a vault holding a live token: the first, tokenless request's 401 names the issuer and the stored token is used as it is, no refresh", async () => {
  const mcp = await startProtectedMcpServer({ issuer: idp.issuer });
  const store = new MemoryCredentialStore();
  const { client: a } = await connectWithPerson(mcp.url, {
    store,
  });
  assert.deepEqual((await a.callTool(whoami)).content, hello);
  const stored = await store.get({ subject: "alice", issuer: idp.issuer, resource: mcp.url });
  assert.ok(stored?.tokens.refreshToken);

  idp.resetStats();
  const { client: b, person: second } = await connectWithPerson(mcp.url, {
    store,
  });
  assert.deepEqual((await b.callTool(whoami)).content, hello);
  assert.equal(second.asked.length, 0, "no sign-in");
  // The 401 answered a request that carried no token: nothing was stale, so nothing is refreshed (a refresh here
  // would rotate the refresh token at every process start, for every process).
  assert.equal(idp.stats.byGrant.refresh_token, undefined);
  const after = await store.get({ subject: "alice", issuer: idp.issuer, resource: mcp.url });
  assert.equal(after?.version, stored.version, "the stored credential was used as it was");
});

test("[MCP-client-registration-vault-shared] two providers for two people over one vault, signing in at once, register one client: the server saw one registration", async () => {
  const mcp = await startProtectedMcpServer({ issuer: idp.issuer });
  const store = new MemoryCredentialStore();
  const before = idp.memory().registrations;
  const people = [browser(), browser()];
  const clients = await Promise.all(
    ["alice", "bob"].map((subject, i) =>
      connect(
        mcp.url,
        agentAuthProvider({
          serverUrl: mcp.url,
          store,
          subject,
          onAuthorizationUrl: (people[i] as ReturnType<typeof browser>).open,
        }),
      ),
    ),
  );
  for (const client of clients) assert.deepEqual((await client.callTool(whoami)).content, hello);
  assert.equal(idp.memory().registrations, before + 1);
  const ids = people.map((p) => p.asked[0]?.searchParams.get("client_id"));
  assert.ok(ids[0]);
  assert.equal(ids[0], ids[1]);
  const [registration] = await store.list({ subject: REGISTRATION_SUBJECT });
  assert.equal(registration?.clientId, ids[0]);
});

test("[MCP-client-registration-forgotten] a stored registration the server forgot is replaced by one new registration, and the sign-in works", async () => {
  const mcp = await startProtectedMcpServer({ issuer: idp.issuer });
  const store = new MemoryCredentialStore();
  const first = browser();
  await (
    await connect(
      mcp.url,
      providerFor(mcp.url, {
        store,
        onAuthorizationUrl: first.open,
      }),
    )
  ).callTool(whoami);
  const oldId = first.asked[0]?.searchParams.get("client_id") as string;
  await (
    idp.provider.Client as unknown as { adapter: { destroy(id: string): Promise<void> } }
  ).adapter.destroy(oldId);
  const before = idp.memory().registrations;
  const second = browser();
  const client = await connect(
    mcp.url,
    agentAuthProvider({
      serverUrl: mcp.url,
      store,
      subject: "bob",
      onAuthorizationUrl: second.open,
    }),
  );
  assert.deepEqual((await client.callTool(whoami)).content, hello);
  assert.equal(idp.memory().registrations, before + 1, "one new registration");
  const newId = second.asked[0]?.searchParams.get("client_id");
  assert.ok(newId && newId !== oldId);
  assert.equal(second.asked.length, 1);
  const [registration] = await store.list({ subject: REGISTRATION_SUBJECT });
  assert.equal(registration?.clientId, newId);
});

test("[MCP-client-registration-invalid-client-retry] a stored registration the server refuses with invalid_client at the device authorization endpoint is forgotten and registered once again; the sign-in works", async () => {
  const mcp = await startProtectedMcpServer({ issuer: idp.issuer });
  const store = new MemoryCredentialStore();
  // Well-formed, but unknown to the server, and without a registration access token (so no RFC 7592 check first).
  const key = registrationKey(idp.issuer, registrationMetadata({}, "device"));
  await store.put({
    ...key,
    clientId: "a-client-the-server-never-knew",
    provider: { name: "client-registration", options: { auth_method: "none" } },
    tokens: { tokenType: "registration" },
    scopes: [],
    account: {},
    status: "active",
  });
  const before = idp.memory().registrations;
  const prompts: string[] = [];
  const client = await connect(
    mcp.url,
    providerFor(mcp.url, {
      store,
      onDeviceCode: async (prompt) => {
        prompts.push(prompt.userCode);
        void fetch(prompt.verificationUriComplete ?? prompt.verificationUri).then((r) =>
          r.arrayBuffer(),
        );
      },
    }),
  );
  assert.deepEqual((await client.callTool(whoami)).content, hello);
  assert.equal(idp.memory().registrations, before + 1);
  assert.equal(prompts.length, 1, "the person was asked once");
  const stored = await store.get(key);
  assert.ok(stored && stored.clientId !== "a-client-the-server-never-knew");
});

test("[MCP-client-reserved-subject] a provider for a subject in agentauth's reserved namespace is refused (typed invalid_subject)", () => {
  assert.throws(
    () =>
      agentAuthProvider({
        serverUrl: "http://127.0.0.1:1/mcp",
        store: new MemoryCredentialStore(),
        subject: REGISTRATION_SUBJECT,
      }),
    { code: "invalid_subject" },
  );
});
