import assert from "node:assert/strict";
import { join } from "node:path";
import { test } from "node:test";
import { createLogger } from "../../src/core/index.ts";
import { REGISTRATION_SUBJECT } from "../../src/oauth/index.ts";
import { mcpBridgeToolset } from "../../src/rap/mcp-bridge/index.ts";
import {
  generateVaultKey,
  Keyring,
  MemoryCredentialStore,
  SqliteCredentialStore,
} from "../../src/vault/index.ts";
import { startProtectedMcpServer } from "../mcp/fixtures/protected-mcp-server.ts";
import { expireAccessToken } from "../support/credentials.ts";
import { useIdp } from "../support/idp.ts";
import { tempDir } from "../support/tmp.ts";
import { bridgeTools, startBridge, TOOLS } from "./mcp-bridge-fixture.ts";
import { authorize, providerUrl } from "./tool-oauth-fixture.ts";

const idp = await useIdp();
const mcp = await startProtectedMcpServer({ issuer: idp.issuer, registerTools: bridgeTools });
const store = new MemoryCredentialStore();
const stand = await startBridge(store, { serverUrl: mcp.url, tools: TOOLS });
const { runtime, recorded } = stand;

const keyOf = (userId: string) => ({ subject: userId, issuer: idp.issuer, resource: mcp.url });
const grants = (type: string) => idp.stats.byGrant[type] ?? { success: 0, error: 0 };

async function oauthFor(id: string): Promise<string> {
  for (let i = 0; i < 400; i++) {
    const found = recorded.authorizations.find((a) => a.id === id);
    if (found) return found.authUrl;
    const call = await runtime.getCall("thread", id);
    if (call?.status === "completed" || call?.status === "failed") {
      throw new Error(`the call ended without an oauth message: ${JSON.stringify(call)}`);
    }
    await new Promise((r) => setTimeout(r, 25));
  }
  throw new Error("no oauth message");
}

async function resultOf(id: string): Promise<{ status: string; text: string }> {
  const settled = await runtime.waitForResult("thread", id);
  return { status: settled.status, text: String(settled.result?.text ?? "") };
}

/** A user who has signed in through the bridge (one full flow). */
async function signedIn(userId: string): Promise<void> {
  const id = await stand.call(userId, "whoami");
  await authorize(await oauthFor(id));
  assert.equal((await resultOf(id)).text, "hello");
}

test("[RAP-mcp-bridge-toolset] each MCP tool is a RAP operation with requiresAuth, its input schema carried over", async () => {
  const response = await fetch(`${stand.toolUrl}/.well-known/rap-toolset`);
  const toolset = (await response.json()) as {
    tools: {
      name: string;
      inputSchema: Record<string, unknown>;
      annotations?: { requiresAuth?: string };
    }[];
  };
  assert.deepEqual(
    toolset.tools.map((t) => t.name),
    ["whoami", "echo", "fails", "huge"],
  );
  for (const tool of toolset.tools) assert.equal(tool.annotations?.requiresAuth, "mcp");
  const echo = toolset.tools.find((t) => t.name === "echo");
  assert.deepEqual(echo?.inputSchema.required, ["text"]);
  assert.equal(echo?.inputSchema.$schema, undefined, "the draft-07 $schema is dropped");
  assert.ok(stand.bridge.registeredClient?.clientId, "a client was registered (RFC 7591)");
  assert.equal(stand.bridge.canonicalUri, mcp.url);
});

test("[RAP-mcp-bridge-oauth-flow] a call → oauth message → the MCP server's authorization server (PKCE S256, resource = canonical URI) → the redirect → the MCP tool's result; tokens keyed by user_id", async () => {
  const toolCalls = mcp.stats.toolCalls;
  const id = await stand.call("u-alice", "echo", { text: "hi there" });
  const link = await oauthFor(id);
  assert.equal(
    new URL(link).origin,
    new URL(stand.toolUrl).origin,
    "the tool's consent page first",
  );
  const url = await providerUrl(link);
  assert.equal(url.origin, new URL(idp.issuer).origin, "the MCP server's authorization server");
  assert.equal(url.searchParams.get("resource"), mcp.url, "RFC 8707 resource = canonical URI");
  assert.equal(url.searchParams.get("code_challenge_method"), "S256");
  assert.equal(url.searchParams.get("redirect_uri"), `${stand.toolUrl}/oauth/callback`);
  assert.equal(url.searchParams.get("client_id"), stand.bridge.registeredClient?.clientId);
  assert.deepEqual(url.searchParams.get("scope")?.split(" ").sort(), ["offline_access", "read"]);
  assert.equal((await runtime.getCall("thread", id))?.status, "authorizing");

  const landed = await authorize(url.href);
  assert.equal(landed.status, 200);
  assert.deepEqual(await resultOf(id), { status: "completed", text: "echo: hi there" });
  assert.equal(mcp.stats.toolCalls, toolCalls, "whoami counts only its own calls");
  const record = await store.get(keyOf("u-alice"));
  assert.equal(
    record?.status,
    "active",
    "stored under {user_id, issuer, resource = canonical URI}",
  );
  assert.ok(record?.tokens.refreshToken);
});

test("[RAP-mcp-bridge-token-reuse] the same user's next call needs no sign-in; another user gets their own sign-in and tokens", async () => {
  await signedIn("u-bob");
  const codes = grants("authorization_code").success;
  const again = await stand.call("u-bob", "whoami");
  assert.deepEqual(await resultOf(again), { status: "completed", text: "hello" });
  assert.equal(grants("authorization_code").success, codes, "no new authorization");
  assert.ok(!recorded.authorizations.some((a) => a.id === again));

  const other = await stand.call("u-carol", "whoami");
  await authorize(await oauthFor(other));
  assert.equal((await resultOf(other)).text, "hello");
  const bob = await store.get(keyOf("u-bob"));
  const carol = await store.get(keyOf("u-carol"));
  assert.ok(bob && carol);
  assert.notEqual(bob.tokens.accessToken?.reveal(), carol.tokens.accessToken?.reveal());
  assert.notEqual(bob.tokens.refreshToken?.reveal(), carol.tokens.refreshToken?.reveal());
});

test("[RAP-mcp-bridge-refresh-single-flight] at expiry, concurrent calls of one user cause one refresh (rotation), and all complete", async (t) => {
  await signedIn("u-dave");
  const before = await store.get(keyOf("u-dave"));
  assert.ok(before);
  await expireAccessToken(store, before);
  idp.resetStats();
  const ids = await Promise.all(Array.from({ length: 20 }, () => stand.call("u-dave", "whoami")));
  const results = await Promise.all(ids.map(resultOf));
  t.diagnostic(`refresh grants: ${JSON.stringify(grants("refresh_token"))}`);
  assert.deepEqual(
    results.map((r) => r.text),
    ids.map(() => "hello"),
  );
  assert.deepEqual(grants("refresh_token"), { success: 1, error: 0 });
  assert.equal(grants("authorization_code").success, 0);
  const after = await store.get(keyOf("u-dave"));
  assert.notEqual(after?.tokens.refreshToken?.reveal(), before.tokens.refreshToken?.reveal());
});

test("[RAP-mcp-bridge-401] a token the MCP server refuses is refreshed once; refused again, the call asks the person to authorize again", async () => {
  await signedIn("u-erin");
  const record = await store.get(keyOf("u-erin"));
  assert.ok(record?.tokens.accessToken);
  // Revoked at the resource server only: one forced refresh brings a token it accepts.
  mcp.revoked.add(record.tokens.accessToken.reveal());
  idp.resetStats();
  const first = await stand.call("u-erin", "whoami");
  assert.deepEqual(await resultOf(first), { status: "completed", text: "hello" });
  assert.deepEqual(grants("refresh_token"), { success: 1, error: 0 });

  // Now every token of this issuer is refused (the server trusts another issuer for a while): after the one
  // refresh, the call asks the person again instead of failing or looping.
  const other = await useIdp();
  mcp.switchIssuer(other.issuer);
  idp.resetStats();
  const second = await stand.call("u-erin", "whoami");
  const link = await oauthFor(second);
  assert.deepEqual(grants("refresh_token"), { success: 1, error: 0 });
  mcp.switchIssuer(idp.issuer);
  await authorize(link);
  assert.deepEqual(await resultOf(second), { status: "completed", text: "hello" });
});

test("[RAP-mcp-bridge-401-single-flight] concurrent calls of one user whose token the MCP server refuses cause one refresh, not one per call", async (t) => {
  await signedIn("u-kim");
  const record = await store.get(keyOf("u-kim"));
  assert.ok(record?.tokens.accessToken);
  mcp.revoked.add(record.tokens.accessToken.reveal());
  idp.resetStats();
  const ids = await Promise.all(Array.from({ length: 20 }, () => stand.call("u-kim", "whoami")));
  const results = await Promise.all(ids.map(resultOf));
  t.diagnostic(`refresh grants: ${JSON.stringify(grants("refresh_token"))}`);
  assert.deepEqual(
    results.map((r) => r.text),
    ids.map(() => "hello"),
  );
  assert.deepEqual(grants("refresh_token"), { success: 1, error: 0 });
});

test("[RAP-mcp-bridge-step-up] a 403 insufficient_scope asks the person again for the union of the scopes; then the call completes", async () => {
  await signedIn("u-frank");
  mcp.requiredScopes = ["read", "write"];
  try {
    const id = await stand.call("u-frank", "whoami");
    const link = await oauthFor(id);
    const page = await (await fetch(link)).text();
    assert.match(page, /\bwrite\b/, "the consent page lists the scope the step-up adds");
    const url = await providerUrl(link);
    assert.deepEqual(url.searchParams.get("scope")?.split(" ").sort(), [
      "offline_access",
      "read",
      "write",
    ]);
    assert.equal(url.searchParams.get("resource"), mcp.url);
    await authorize(url.href);
    assert.deepEqual(await resultOf(id), { status: "completed", text: "hello" });
  } finally {
    mcp.requiredScopes = ["read"];
  }
});

test("[RAP-mcp-bridge-step-up-per-user] a step-up asks for the user's own granted scopes plus the required ones: never scopes another user's step-up needed, and a grant's scopes survive a new bridge instance", async () => {
  await signedIn("u-ivy");
  await signedIn("u-jack");
  const scopeOf = async (id: string) =>
    (await providerUrl(await oauthFor(id))).searchParams.get("scope")?.split(" ").sort();
  try {
    // Ivy needs write and grants it.
    mcp.requiredScopes = ["read", "write"];
    const ivy = await stand.call("u-ivy", "whoami");
    const ivyLink = await oauthFor(ivy);
    await authorize(ivyLink);
    assert.deepEqual(await resultOf(ivy), { status: "completed", text: "hello" });
    // Now the server needs admin: Jack is asked for his grant + admin, not for Ivy's write.
    mcp.requiredScopes = ["read", "admin"];
    const jack = await stand.call("u-jack", "whoami");
    assert.deepEqual(await scopeOf(jack), ["admin", "offline_access", "read"]);
    // A new bridge instance on the same vault (a restart, another replica): Ivy keeps the write she granted.
    const replica = await startBridge(store, { serverUrl: mcp.url, tools: TOOLS });
    const again = await replica.call("u-ivy", "whoami");
    const link = await (async () => {
      for (let i = 0; i < 400; i++) {
        const found = replica.recorded.authorizations.find((a) => a.id === again);
        if (found) return found.authUrl;
        await new Promise((r) => setTimeout(r, 25));
      }
      throw new Error("no oauth message");
    })();
    assert.deepEqual((await providerUrl(link)).searchParams.get("scope")?.split(" ").sort(), [
      "admin",
      "offline_access",
      "read",
      "write",
    ]);
  } finally {
    mcp.requiredScopes = ["read"];
  }
});

test("[RAP-mcp-bridge-tool-error] an MCP result with isError is the RAP call's error result, sanitised", async () => {
  await signedIn("u-gina");
  const id = await stand.call("u-gina", "fails");
  const { text } = await resultOf(id);
  assert.match(text, /fails reported an error: disk full\[31m evil/);
  // biome-ignore lint/suspicious/noControlCharactersInRegex: asserting their absence
  assert.doesNotMatch(text, /[\u0000-\u0008\u001b\u202E]/);
});

test("[RAP-mcp-bridge-oversized] an oversized MCP answer is a typed error result, not passed on", async () => {
  await signedIn("u-hank");
  const id = await stand.call("u-hank", "huge");
  const { text } = await resultOf(id);
  assert.match(text, /larger than this tool accepts/);
  assert.ok(text.length < 1000);
});

test("[RAP-mcp-bridge-no-user] a call without user_id gets an explaining error, and nothing reaches the MCP server", async () => {
  const calls = mcp.stats.toolCalls;
  const id = await stand.call(null, "whoami");
  assert.match((await resultOf(id)).text, /no user_id/);
  assert.equal(mcp.stats.toolCalls, calls);
});

test("[RAP-mcp-bridge-no-secrets] no user's token appears in any message the runtime got or in the tool's log", async () => {
  const secrets: string[] = [];
  for (const user of ["u-alice", "u-bob", "u-carol", "u-dave", "u-erin", "u-frank", "u-gina"]) {
    const record = await store.get(keyOf(user));
    for (const s of [
      record?.tokens.accessToken,
      record?.tokens.refreshToken,
      record?.tokens.idToken,
    ]) {
      if (s) secrets.push(s.reveal());
    }
  }
  assert.ok(secrets.length >= 10);
  const seen =
    JSON.stringify([recorded.results, recorded.authorizations, recorded.statuses]) +
    stand.logs.join("\n");
  for (const secret of secrets) assert.ok(!seen.includes(secret), "a token leaked");
  for (const a of recorded.authorizations) {
    assert.ok(
      !new URL(a.authUrl).searchParams.has("state"),
      "the auth_url is the consent link, no state",
    );
  }
});

test("[RAP-mcp-bridge-registration-kept] with `store`, the bridge keeps its registration in the vault: a restart over the same vault file registers nothing and signs users in as the same client; a registration the server forgot is replaced once", async (t) => {
  const path = join(tempDir(), "vault.db");
  const keyring = new Keyring(Buffer.from(generateVaultKey(), "base64"));
  const vault = new SqliteCredentialStore({ path, keyring });
  t.after(() => vault.close());
  const before = idp.memory().registrations;
  const first = await startBridge(vault, { serverUrl: mcp.url, tools: TOOLS, store: vault });
  assert.equal(first.bridge.registrationReused, false);
  const clientId = first.bridge.registeredClient?.clientId;
  assert.ok(clientId);
  const id = await first.call("u-lena", "whoami");
  const link = await (async () => {
    for (let i = 0; i < 400; i++) {
      const found = first.recorded.authorizations.find((a) => a.id === id);
      if (found) return found.authUrl;
      await new Promise((r) => setTimeout(r, 25));
    }
    throw new Error("no oauth message");
  })();
  const atServer = await providerUrl(link);
  assert.equal(atServer.searchParams.get("client_id"), clientId);
  assert.equal((await authorize(atServer.href)).status, 200);
  assert.equal((await first.runtime.waitForResult("thread", id)).result?.text, "hello");

  // The restart: a new process would open the same vault file; the tool's public URL is the same.
  const publicBaseUrl = new URL(first.toolUrl).origin;
  const restarted = new SqliteCredentialStore({ path, keyring });
  t.after(() => restarted.close());
  const logs: string[] = [];
  const again = await mcpBridgeToolset({
    serverUrl: mcp.url,
    publicBaseUrl,
    tools: TOOLS,
    store: restarted,
    logger: createLogger({ write: (line) => logs.push(line), level: "debug" }),
  });
  assert.equal(again.registrationReused, true);
  assert.equal(again.registeredClient?.clientId, clientId);
  assert.equal(idp.memory().registrations, before + 1, "no new registration");
  assert.match(logs.join("\n"), /rap\.mcp_bridge\.registration_reused/);
  const [registration] = await restarted.list({ subject: REGISTRATION_SUBJECT });
  const stored = registration && (await restarted.getById(registration.id));
  const rat = stored?.tokens.accessToken?.reveal();
  assert.ok(rat);
  assert.ok(
    !(logs.join("\n") + first.logs.join("\n")).includes(rat),
    "no registration access token logged",
  );

  // The server forgets the client (its storage was reset): the next start registers once more.
  await (
    idp.provider.Client as unknown as { adapter: { destroy(id: string): Promise<void> } }
  ).adapter.destroy(clientId);
  const count = idp.memory().registrations;
  const replaced = await mcpBridgeToolset({
    serverUrl: mcp.url,
    publicBaseUrl,
    tools: TOOLS,
    store: restarted,
  });
  assert.equal(replaced.registrationReused, false);
  assert.notEqual(replaced.registeredClient?.clientId, clientId);
  assert.equal(idp.memory().registrations, count + 1);
});
