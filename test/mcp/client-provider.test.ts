import assert from "node:assert/strict";
import { type TestContext, test } from "node:test";
import type { AgentAuthProviderOptions } from "../../src/mcp/index.ts";
import { discoverAuthorizationServer, revokeTokens } from "../../src/oauth/index.ts";
import { type CredentialRecord, MemoryCredentialStore } from "../../src/vault/index.ts";
import { expireAccessToken, loginForTest } from "../support/credentials.ts";
import { useIdp } from "../support/idp.ts";
import { findCode } from "./fixtures/find-code.ts";
import { browser, connect, hello, providerFor, whoami } from "./fixtures/mcp-client.ts";
import { startProtectedMcpServer } from "./fixtures/protected-mcp-server.ts";

// The embedded server rotates refresh tokens (RFC 9700 §4.14.2) and revokes the grant on reuse: a second refresh
// with the same refresh token would fail, so "one refresh_token grant" below is also "no lost sign-in".
const idp = await useIdp();

/** Alice signed in to a fresh protected MCP server; the official client connected with a provider over her vault. */
async function signedIn(
  t: TestContext,
  options: { fetch?: boolean; provider?: Partial<AgentAuthProviderOptions> } = {},
) {
  const mcp = await startProtectedMcpServer({ issuer: idp.issuer });
  const store = new MemoryCredentialStore();
  const record = await loginForTest(idp, store, {
    resource: mcp.url,
    scope: "openid offline_access read",
    subject: "alice",
  });
  const provider = providerFor(mcp.url, { store, issuer: idp.issuer, ...options.provider });
  const client = await connect(mcp.url, provider, { fetch: options.fetch, t });
  return { mcp, store, record, provider, client };
}

/** Retires a refresh token at the authorization server, as a user's "sign out everywhere" would. */
async function revokeAtIssuer(record: CredentialRecord) {
  const as = await discoverAuthorizationServer(idp.issuer);
  await revokeTokens({
    as,
    client: { clientId: "agentauth-cli" },
    refreshToken: record.tokens.refreshToken,
  });
}

test("[MCP-client-token] the official SDK client calls a protected tool with the vault's token", async (t) => {
  const { mcp, client, provider } = await signedIn(t);
  assert.equal(provider.canonicalUri, mcp.url);
  const result = await client.callTool(whoami);
  assert.deepEqual(result.content, hello);
  assert.equal(mcp.stats.unauthorized, 0, "the token was accepted on the first try");
  assert.equal(mcp.stats.toolCalls, 1);
});

test("[MCP-client-single-flight] 1,000 concurrent tool calls at token expiry make exactly one refresh_token grant, and all succeed", async (t) => {
  const { mcp, store, record, client } = await signedIn(t);
  const key = { subject: "alice", issuer: idp.issuer, resource: mcp.url };
  await expireAccessToken(store, (await store.get(key)) ?? record);
  idp.resetStats();

  const started = performance.now();
  const results = await Promise.allSettled(
    Array.from({ length: 1000 }, () => client.callTool(whoami)),
  );
  t.diagnostic(`1,000 calls in ${Math.round(performance.now() - started)} ms`);

  const failed = results.filter((r) => r.status === "rejected");
  assert.equal(failed.length, 0, `failed calls: ${failed.length}`);
  assert.deepEqual(idp.stats.byGrant.refresh_token, { success: 1, error: 0 });
  assert.equal(idp.stats.errors.length, 0, "no invalid_grant");
  assert.equal(mcp.stats.unauthorized, 0);
  const after = await store.get(key);
  assert.ok(after && after.version > record.version, "the rotated credential is stored");
  assert.notEqual(after.tokens.refreshToken?.reveal(), record.tokens.refreshToken?.reveal());
});

test("[MCP-client-401-forced-refresh] a 401 for a token the server no longer accepts forces one refresh and the retried call succeeds", async (t) => {
  const { mcp, record, client } = await signedIn(t, { fetch: false });
  mcp.revoked.add(record.tokens.accessToken?.reveal() ?? "");
  idp.resetStats();

  const result = await client.callTool(whoami);

  assert.deepEqual(result.content, hello);
  // The SDK's standalone GET (server-sent events) stream is refused too and shares the same forced refresh.
  t.diagnostic(`refused: ${mcp.refused.join(",")}`);
  assert.equal(
    mcp.refused.filter((m) => m === "POST").length,
    1,
    "one 401 for the call, then the retry with the new token passed",
  );
  assert.deepEqual(idp.stats.byGrant.refresh_token, { success: 1, error: 0 });
});

test("[MCP-client-401-shared] 200 concurrent calls refused with the same stale token share one forced refresh", async (t) => {
  const { mcp, record, client } = await signedIn(t);
  mcp.revoked.add(record.tokens.accessToken?.reveal() ?? "");
  idp.resetStats();

  const results = await Promise.allSettled(
    Array.from({ length: 200 }, () => client.callTool(whoami)),
  );

  assert.equal(results.filter((r) => r.status === "rejected").length, 0);
  assert.deepEqual(idp.stats.byGrant.refresh_token, { success: 1, error: 0 });
  assert.equal(idp.stats.errors.length, 0);
  t.diagnostic(`401 answers: ${mcp.stats.unauthorized}`);
  assert.ok(mcp.refused.filter((m) => m === "POST").length >= 1, "the stale token was refused");
});

test("[MCP-client-401-untied] without the provider's fetch, concurrent 401s may cost extra refreshes but never a refresh token", async (t) => {
  // The SDK's UnauthorizedContext does not say which token a 401 answered; without provider.fetch the provider
  // takes it to be the token last handed out, so a 401 for an older token can refresh a newer one again.
  const { mcp, store, record, client } = await signedIn(t, { fetch: false });
  mcp.revoked.add(record.tokens.accessToken?.reveal() ?? "");
  idp.resetStats();

  const results = await Promise.allSettled(
    Array.from({ length: 200 }, () => client.callTool(whoami)),
  );

  assert.equal(results.filter((r) => r.status === "rejected").length, 0);
  const refreshes = idp.stats.byGrant.refresh_token;
  t.diagnostic(`refresh_token grants without provider.fetch: ${JSON.stringify(refreshes)}`);
  assert.equal(refreshes?.error, 0, "no invalid_grant: every rotation was stored before the next");
  assert.equal(idp.stats.errors.length, 0);
  const stored = await store.get({ subject: "alice", issuer: idp.issuer, resource: mcp.url });
  assert.equal(stored?.status, "active", "the user is still signed in");
});

test("[MCP-client-login-required-callback] a refused refresh token asks the host's sign-in callback once; the calls then succeed", async (t) => {
  const person = browser();
  const { mcp, store, record, client } = await signedIn(t, {
    provider: {
      clientFor: (issuer) => (issuer === idp.issuer ? { clientId: "agentauth-cli" } : undefined),
      onAuthorizationUrl: person.open,
    },
  });
  const asked = person.asked;
  await revokeAtIssuer(record);
  mcp.revoked.add(record.tokens.accessToken?.reveal() ?? "");
  idp.resetStats();

  const results = await Promise.allSettled(
    Array.from({ length: 20 }, () => client.callTool(whoami)),
  );

  assert.equal(results.filter((r) => r.status === "rejected").length, 0);
  assert.equal(asked.length, 1, "one sign-in for every waiting call");
  const url = asked[0];
  assert.ok(url);
  assert.equal(
    url.searchParams.get("resource"),
    mcp.url,
    "RFC 8707 resource on the authorization request",
  );
  assert.equal(url.searchParams.get("code_challenge_method"), "S256");
  assert.ok(url.searchParams.get("scope")?.split(" ").includes("offline_access"));
  assert.equal(idp.stats.byGrant.refresh_token?.success ?? 0, 0);
  assert.equal(idp.stats.byGrant.authorization_code?.success, 1);
  const stored = await store.get({ subject: "alice", issuer: idp.issuer, resource: mcp.url });
  assert.equal(stored?.status, "active");
});

test("[MCP-client-login-required-typed] a refused refresh token without a sign-in callback fails the call with a typed login_required", async (t) => {
  const { mcp, record, client } = await signedIn(t);
  await revokeAtIssuer(record);
  mcp.revoked.add(record.tokens.accessToken?.reveal() ?? "");

  const error = await client.callTool(whoami).then(
    () => assert.fail("the call must not succeed"),
    (e: unknown) => e,
  );
  const typed = findCode(error);
  assert.equal(typed?.code, "login_required");
  assert.match(typed?.message ?? "", /onAuthorizationUrl|agentauth mcp login/);
  assert.doesNotMatch(String((error as Error).message), /eyJ/, "no token in the message");
});
