/** What the page reads: the state over a real SQLite vault (no token in it), and server-sent events on a change. */

import assert from "node:assert/strict";
import { test } from "node:test";
import type { ConsoleState } from "../../src/console/index.ts";
import { secret } from "../../src/core/secret.ts";
import { openVault } from "../../src/vault/index.ts";
import { tempDir } from "../support/tmp.ts";
import { nextState, signedInConsole } from "./support.ts";

const ACCESS = "at-console-state-test-0123456789";
const REFRESH = "rt-console-state-test-0123456789";

function input(subject: string) {
  return {
    subject,
    issuer: "https://as.example.test",
    resource: "https://api.example.test/",
    clientId: "agentauth-cli",
    provider: { name: "github", options: { host: "ghe.example.test" } },
    tokens: {
      accessToken: secret(ACCESS),
      refreshToken: secret(REFRESH),
      idToken: secret("id.token.value"),
    },
    expiresAt: Date.now() + 3_600_000,
    scopes: ["read", "write"],
    account: { label: `${subject}-login`, email: `${subject}@example.test` },
    status: "active" as const,
  };
}

test("[CONSOLE-state-vault] the state lists a credential from a real SQLite vault, flattened, without any token", async () => {
  const home = tempDir();
  const store = openVault({ env: { AGENTAUTH_HOME: home } });
  const record = await store.put(input("alice"));
  const signedIn = await signedInConsole({
    store,
    connectTargets: [
      { id: "demo", label: "Demo", issuer: "http://127.0.0.1:9", clientId: "c", scope: "openid" },
    ],
  });
  const response = await fetch(new URL("/api/state", signedIn.console.url), {
    headers: { cookie: signedIn.cookie },
  });
  assert.equal(response.status, 200);
  const text = await response.text();
  for (const secretText of [ACCESS, REFRESH, "id.token.value"])
    assert.ok(!text.includes(secretText));
  const state = JSON.parse(text) as ConsoleState;
  assert.equal(state.accounts.length, 1);
  const [account] = state.accounts;
  assert.deepEqual(
    {
      ...account,
      expiresAt: typeof account?.expiresAt,
      updatedAt: typeof account?.updatedAt,
      createdAt: typeof account?.createdAt,
    },
    {
      id: record.id,
      subject: "alice",
      // By name (names.ts): the preset with its self-hosted host; no names given, so "github" as stored.
      provider: "github (ghe.example.test)",
      issuer: "https://as.example.test",
      resource: "https://api.example.test/",
      resourceName: "https://api.example.test/",
      account: "alice-login",
      scopes: ["read", "write"],
      expiresAt: "number",
      status: "active",
      updatedAt: "number",
      createdAt: "number",
      canRefresh: true,
    },
  );
  assert.deepEqual(state.connectTargets, [{ id: "demo", label: "Demo" }]);
  assert.ok(
    !JSON.stringify(state.connectTargets).includes("http://127.0.0.1:9"),
    "targets show id and label only",
  );
  // The page: landmarks the browser test relies on.
  const page = await (
    await fetch(signedIn.console.url, { headers: { cookie: signedIn.cookie } })
  ).text();
  for (const landmark of [
    "agentauth console</h1>",
    ">Connected accounts</h2>",
    ">Pending authorizations</h2>",
    ">Activity</h2>",
    "<caption",
    // Until the state arrives (issue 21: the first paint tells the truth); the empty text waits hidden.
    '<p id="accounts-loading" class="loading">Loading…</p>',
    "No connected accounts yet.",
    '<select name="connect-target">',
    '<select name="activity-filter">',
    '<dialog id="confirm-disconnect"',
    'href="/help"',
    'role="status"',
  ]) {
    assert.ok(page.includes(landmark), landmark);
  }
  assert.ok(!page.includes(ACCESS));
  await store.close();
});

test("[CONSOLE-state-sse] a write by another vault handle (another process) reaches the page as a new state event", async () => {
  const home = tempDir();
  const store = openVault({ env: { AGENTAUTH_HOME: home } });
  const signedIn = await signedInConsole({ store, vaultPollMs: 50 });
  const other = openVault({ env: { AGENTAUTH_HOME: home } });
  let written = "";
  const state = await nextState<ConsoleState>(
    signedIn,
    (s) => s.accounts.some((a) => a.subject === "bob"),
    async () => {
      written = (await other.put(input("bob"))).id;
    },
  );
  assert.equal(state.accounts[0]?.id, written);
  assert.ok(
    state.activity.some(
      (e) => e.kind === "sign_in" && e.subject === "bob" && e.component === "vault",
    ),
  );
  assert.ok(!JSON.stringify(state).includes(ACCESS));
  // A deletion elsewhere is a logout event in the next state.
  const after = await nextState<ConsoleState>(
    signedIn,
    (s) => s.accounts.length === 0,
    async () => {
      await other.deleteById(written);
    },
  );
  assert.ok(after.activity.some((e) => e.kind === "logout" && e.subject === "bob"));
  await other.close();
  await store.close();
});

test("[CONSOLE-state-close] close() ends open event streams and the server", async () => {
  const { startConsole } = await import("../../src/console/index.ts");
  const { MemoryCredentialStore } = await import("../../src/vault/index.ts");
  const running = await startConsole({ store: new MemoryCredentialStore() });
  const login = await fetch(running.loginUrl, { redirect: "manual" });
  const cookie = (login.headers.get("set-cookie") ?? "").split(";")[0] as string;
  const events = await fetch(new URL("/api/events", running.url), { headers: { cookie } });
  assert.equal(events.status, 200);
  assert.match(events.headers.get("content-type") ?? "", /text\/event-stream/);
  const reading = events.text();
  await running.close();
  const text = await reading;
  assert.match(text, /^retry: 2000\n\nevent: state\ndata: \{/);
  await assert.rejects(fetch(running.url));
});

test("[CONSOLE-start-failed-cleanup] a console that cannot listen stops its vault poller (nothing keeps reading the store)", async () => {
  const { createServer } = await import("node:net");
  const { startConsole } = await import("../../src/console/index.ts");
  const { MemoryCredentialStore } = await import("../../src/vault/index.ts");
  const taken = createServer();
  await new Promise<void>((resolve) => taken.listen(0, "127.0.0.1", resolve));
  const port = (taken.address() as { port: number }).port;
  const store = new MemoryCredentialStore();
  let reads = 0;
  const listReport = store.listReport.bind(store);
  store.listReport = (...args: Parameters<typeof store.listReport>) => {
    reads++;
    return listReport(...args);
  };
  await assert.rejects(startConsole({ store, port, vaultPollMs: 10 }), /EADDRINUSE/);
  const after = reads;
  await new Promise((resolve) => setTimeout(resolve, 200));
  assert.equal(reads, after, "no poll after the failed start");
  await new Promise<void>((resolve) => taken.close(() => resolve()));
});

test("[CONSOLE-security-bad-target] a request target that is not a URL is a typed 400, not a failure", async () => {
  const { startConsole } = await import("../../src/console/index.ts");
  const { MemoryCredentialStore } = await import("../../src/vault/index.ts");
  const { rawRequest } = await import("./support.ts");
  const running = await startConsole({ store: new MemoryCredentialStore() });
  const host = new URL(running.url).host;
  const answer = await rawRequest(running.url, { headers: { host }, path: "http://[zz/" });
  assert.equal(answer.status, 400, answer.body);
  assert.equal(JSON.parse(answer.body).error.code, "console_bad_request");
  await running.close();
});
