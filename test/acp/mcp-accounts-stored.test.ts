/**
 * `auth/status` lists the MCP server credentials the agent keeps in its vault, not only the servers a session has
 * named since the agent started: a real agent process signs in to a real protected MCP server, ends, and a new
 * process on the same vault shows the sign-in to a real ACP SDK client before any session, and its `logout`
 * revokes it at the authorization server. Plus the hostile vaults: odd resource URLs, 10,000 unrelated records.
 */

import assert from "node:assert/strict";
import { DatabaseSync } from "node:sqlite";
import { type TestContext, test } from "node:test";
import { setTimeout as delay } from "node:timers/promises";
import * as acp from "@agentclientprotocol/sdk/unstable";
import { createAgentAuth } from "../../src/acp/agent/index.ts";
import { storedServerAccount, toStatusAccount } from "../../src/acp/agent/mcp/accounts.ts";
import { Secret } from "../../src/core/secret.ts";
import { REGISTRATION_SUBJECT } from "../../src/oauth/registration-store.ts";
import {
  credentialId,
  MemoryCredentialStore,
  openVault,
  vaultDbPath,
} from "../../src/vault/index.ts";
import {
  type ProtectedMcpServer,
  startProtectedMcpServer,
} from "../mcp/fixtures/protected-mcp-server.ts";
import { useIdp } from "../support/idp.ts";
import { tempDir } from "../support/tmp.ts";
import { vaultSummaries, vaultTokens } from "./fixtures/agent-process.ts";
import { credentialSummary } from "./fixtures/credential-summary.ts";
import { mcpServers, prompt, withMcpAgent } from "./fixtures/mcp-agent-process.ts";
import {
  assertRefreshRefused,
  authStatus,
  httpServer,
  newSession,
} from "./fixtures/mcp-session.ts";

const idp = await useIdp();
const SUBJECT = "acp-agent:mcp-agent";

/**
 * A fresh vault home and protected MCP server; a first agent process signs in to the server through a session,
 * then ends (its `t.after` waits for the exit).
 */
async function signInThenEnd(t: TestContext): Promise<{ home: string; mcp: ProtectedMcpServer }> {
  const home = tempDir();
  const mcp = await startProtectedMcpServer({ issuer: idp.issuer });
  t.after(() => mcp.close());
  await t.test("a first agent process signs in, then ends", async (st) => {
    await withMcpAgent(st, { home, issuer: idp.issuer, elicitation: "accept" }, async (run) => {
      const sessionId = await newSession(run, home, [httpServer("fixture", mcp.url)]);
      assert.deepEqual(await prompt(run, sessionId, "call fixture whoami"), ["hello"]);
      await run.waitForStatus((s) => s[0]?.state === "signed_in");
    });
  });
  return { home, mcp };
}

test("[ACP-mcp-accounts-stored] a restarted agent lists its stored MCP sign-in in auth/status before any session, and logout revokes it", {
  timeout: 90_000,
}, async (t) => {
  const { home, mcp } = await signInThenEnd(t);

  const stored = (await vaultSummaries(home)).filter((r) => r.resource === mcp.url);
  assert.equal(stored.length, 1, "the first process left its MCP credential in the vault");
  assert.ok(
    (await vaultSummaries(home)).some((r) => r.subject === REGISTRATION_SUBJECT),
    "the vault also holds the dynamic client registration (so leaving it out below is checked)",
  );
  const [held] = (await vaultTokens(home)).filter((r) => r.refreshToken);
  const refreshToken = held?.refreshToken?.reveal();
  assert.ok(refreshToken, "the stored sign-in has a refresh token");

  await withMcpAgent(t, { home, issuer: idp.issuer, elicitation: "accept" }, async (run) => {
    const before = await authStatus(run);
    assert.equal(before.state, "authenticated", "the agent's own state is its API key's");
    const host = new URL(mcp.url).host;
    assert.deepEqual(
      mcpServers(before),
      [{ name: `${host}/mcp`, url: mcp.url, state: "signed_in", scopes: ["read"] }],
      "one account, the stored sign-in (not the client registration), with no session named",
    );
    assert.equal(
      before.accounts.find((a) => a._meta?.agentauth?.mcpServer)?.label,
      `MCP server “${host}/mcp”: signed in`,
    );

    await run.agent.request(acp.methods.agent.logout, {});

    // Revoked at the authorization server (RFC 7009), not only forgotten here.
    await assertRefreshRefused(idp.issuer, refreshToken, stored[0]?.clientId as string);
    assert.deepEqual(
      (await vaultSummaries(home)).filter((r) => r.resource === mcp.url),
      [],
      "the credential is gone from the vault",
    );
    assert.deepEqual(mcpServers(await authStatus(run)), [], "auth/status no longer lists it");

    const wire = run.wire();
    assert.ok(wire.includes("auth/status"), "the pipe was recorded");
    assert.ok(!wire.includes(refreshToken.slice(0, 24)), "the refresh token crossed ACP");
  });
});

test("[ACP-mcp-accounts-stored-one] a stored server that a session names again is one account, under the session's name", {
  timeout: 90_000,
}, async (t) => {
  const { home, mcp } = await signInThenEnd(t);
  const secrets = (await vaultTokens(home)).flatMap((r) =>
    [r.accessToken, r.refreshToken].flatMap((s) => (s ? [s.reveal()] : [])),
  );
  assert.ok(secrets.length >= 2, "the vault holds tokens (the check at the end is not vacuous)");

  await withMcpAgent(t, { home, issuer: idp.issuer, elicitation: "accept" }, async (run) => {
    await newSession(run, home, [httpServer("fixture", mcp.url)]);
    // The session is recorded before session/new answers: no wait needed.
    assert.deepEqual(mcpServers(await authStatus(run)), [
      { name: "fixture", url: mcp.url, transport: "http", state: "signed_in", scopes: ["read"] },
    ]);
    assert.equal(run.elicitations.length, 0, "the stored sign-in is used, nobody is asked");
    for (const secret of secrets) {
      assert.ok(!run.wire().includes(secret.slice(0, 24)), "a token crossed ACP");
    }
  });
});

/**
 * `count` copies of one sealed row under other subjects, in one SQL transaction (10,000 sealed `put`s take about
 * 40 s on a 2-core box). Each copy has its key's real id, so it lists as a record; its tokens would not open (the
 * seal is bound to the template's key), which no listing does.
 */
function copyRows(home: string, templateSubject: string, count: number): void {
  const db = new DatabaseSync(vaultDbPath(home));
  try {
    const insert = db.prepare(
      `INSERT INTO credentials SELECT ?, issuer, resource, ?, client_id, status, expires_at, scopes, account,
         provider, has_access, has_refresh, has_id, kid, nonce, ciphertext, version, created_at, updated_at
       FROM credentials WHERE subject = ?`,
    );
    const template = db
      .prepare("SELECT issuer, resource FROM credentials WHERE subject = ?")
      .get(templateSubject) as { issuer: string; resource: string };
    db.exec("BEGIN");
    for (let i = 0; i < count; i++) {
      const subject = `other-${i}`;
      insert.run(subject, credentialId({ ...template, subject }), templateSubject);
    }
    db.exec("COMMIT");
  } finally {
    db.close();
  }
}

function input(subject: string, issuer: string, resource: string) {
  return {
    subject,
    issuer,
    resource,
    clientId: "c",
    tokens: { accessToken: new Secret(`token-for-${resource}-${subject}`) },
    scopes: ["read", "bad\u202escope"],
    account: {},
    status: "active" as const,
  };
}

test("[ACP-mcp-accounts-stored-hostile] a vault of 10,000 unrelated records and 150 of the agent's: auth/status answers with at most 100 servers, odd URLs shown sanitised", {
  timeout: 90_000,
}, async (t) => {
  const home = tempDir();
  const vault = openVault({ env: { AGENTAUTH_HOME: home } });
  try {
    await vault.put(input("someone-else", "https://as.example", "https://other.example/mcp"));
    for (let i = 0; i < 150; i++) {
      await vault.put(input(SUBJECT, "https://as.example", `https://flood-${i}.example/mcp`));
    }
    // Not MCP servers: the agent's API key record, a non-http resource.
    await vault.put(input(SUBJECT, "apikey:api-key", ""));
    await vault.put(input(SUBJECT, "https://as.example", "urn:example:not-a-server"));
    await delay(5); // the hostile records below are the newest, so they are among the 100 shown
    await vault.put(
      input(SUBJECT, "https://as.example", "https://evil.example/mcp?api_key=SECRETKEY#frag"),
    );
    await vault.put(
      input(SUBJECT, "https://as.example", "https://user:pw@evil.example/\u202eodd\u0007 path"),
    );
  } finally {
    await vault.close();
  }
  copyRows(home, "someone-else", 10_000);
  assert.equal((await vaultSummaries(home)).length, 10_155);

  await withMcpAgent(t, { home, issuer: idp.issuer, elicitation: false }, async (run) => {
    const started = performance.now();
    const answer = await authStatus(run);
    t.diagnostic(`auth/status over 10,155 records: ${Math.round(performance.now() - started)} ms`);
    const servers = mcpServers(answer);
    assert.equal(servers.length, 100, "at most 100 MCP servers are listed");
    assert.ok(servers.every((s) => s.state === "signed_in"));
    assert.ok(!servers.some((s) => s.url.includes("not-a-server") || s.url === ""));
    const shown = JSON.stringify(answer);
    for (const bad of ["SECRETKEY", "user:pw", "pw@", "\u202e", "\u0007", "bad", "token-for"]) {
      assert.ok(!shown.includes(bad), `auth/status shows ${JSON.stringify(bad)}`);
    }
    const query = servers.find((s) => s.url.startsWith("https://evil.example/mcp"));
    assert.deepEqual(query, {
      name: "evil.example/mcp",
      url: "https://evil.example/mcp?…",
      state: "signed_in",
      scopes: ["read"],
    });
    const odd = servers.find((s) => s.url.startsWith("https://evil.example/%"));
    assert.ok(odd, `the odd URL is listed, percent-encoded: ${servers.map((s) => s.url)}`);
  });
});

test("[ACP-mcp-accounts-stored-pure] a stored record as an account: only http(s) resources, shown without query or user info", () => {
  const summary = (resource: string, status: "active" | "login_required" = "active") =>
    credentialSummary({ subject: SUBJECT, resource, status });
  assert.equal(storedServerAccount(summary("")), undefined);
  assert.equal(storedServerAccount(summary("urn:x")), undefined);
  assert.equal(storedServerAccount(summary("javascript:alert(1)//https://x")), undefined);
  assert.equal(storedServerAccount(summary("not a url")), undefined);
  const account = storedServerAccount(summary("https://u:p@mcp.example:8443/a/b?k=v"));
  assert.deepEqual(account, {
    name: "mcp.example:8443/a/b",
    url: "https://mcp.example:8443/a/b?…",
    state: "signed_in",
    scopes: ["read"],
  });
  assert.equal(storedServerAccount(summary("HTTPS://MCP.example/x"))?.url, "https://mcp.example/x");
  const root = storedServerAccount(summary("https://mcp.example/", "login_required"));
  assert.equal(root?.name, "mcp.example");
  assert.equal(root?.state, "needs_sign_in");
  assert.equal(root?.error?.code, "login_required");
  assert.equal(
    toStatusAccount(root as NonNullable<typeof root>).label,
    "MCP server “mcp.example”: needs sign-in",
  );
  const long = storedServerAccount(summary(`https://mcp.example/${"a".repeat(5000)}`));
  assert.ok((long?.url.length ?? 0) <= 301 && (long?.name.length ?? 0) <= 101);
});

test("[ACP-mcp-accounts-stored-own] the agent's own OAuth credential bound to an http(s) resource is its account, not an MCP server; an MCP sign-in beside it is", async () => {
  const store = new MemoryCredentialStore();
  const auth = createAgentAuth({
    name: "mcp-agent",
    methods: [
      {
        kind: "oauth",
        id: "oauth",
        name: "Sign in",
        issuer: "https://as.example",
        clientId: "agent-client",
        resource: "https://api.example/",
      },
    ],
    store,
    mcp: { probe: false },
  });
  await store.put({
    ...input(SUBJECT, "https://as.example", "https://api.example/"),
    clientId: "agent-client",
  });
  await store.put(input(SUBJECT, "https://as.example", "https://mcp.example/mcp"));
  const status = await auth.status();
  assert.equal(status.state, "authenticated");
  assert.deepEqual(
    status.accounts.map((a) => a._meta?.agentauth?.mcpServer?.url ?? "own"),
    ["own", "https://mcp.example/mcp"],
  );
});
