/**
 * Signing in to an MCP server without a person (issue 18 item 5), against the strict embedded server playing the
 * MCP server's authorization server and, for enterprise-managed authorization, a second one playing the enterprise
 * identity provider: client credentials (client_secret_basic, private_key_jwt), workload identity (the RFC 7523 JWT
 * bearer grant with a platform's token) and enterprise-managed authorization (ID token → ID-JAG → access token).
 * The real official SDK client, the real protected MCP server fixture, real HTTP on loopback.
 */

import assert from "node:assert/strict";
import { test } from "node:test";
import { Secret } from "../../src/core/index.ts";
import { clientCredentials, enterpriseManaged, workloadIdentity } from "../../src/mcp/index.ts";
import { MemoryCredentialStore } from "../../src/vault/index.ts";
import { expireAccessToken } from "../support/credentials.ts";
import {
  CC_SECRET,
  clientPem,
  EMA_SECRET,
  enterprise,
  enterpriseIdToken,
  idp,
  JWT_BEARER_GRANT,
  workloadToken,
} from "./fixtures/grant-servers.ts";
import { connect, connectRefused, hello, providerFor, whoami } from "./fixtures/mcp-client.ts";
import { startProtectedMcpServer } from "./fixtures/protected-mcp-server.ts";

/** The OAuth error code the server answered with, along the cause chain the SDK wraps it in. */
function oauthErrorOf(error: unknown): string | undefined {
  for (
    let e = error as { oauthError?: unknown; cause?: unknown } | undefined;
    e;
    e = e.cause as typeof e
  ) {
    if (typeof e.oauthError === "string") return e.oauthError;
  }
  return undefined;
}

test("[MCP-client-credentials-basic] client credentials with client_secret_basic: no person, a token for the server, a new grant (not a bare request) when it expires", async (t) => {
  const mcp = await startProtectedMcpServer({ issuer: idp.issuer });
  const store = new MemoryCredentialStore();
  const provider = providerFor(mcp.url, {
    store,
    subject: "indexer",
    grant: clientCredentials(),
    clientFor: (issuer) =>
      issuer === idp.issuer
        ? { clientId: "cc-basic", clientSecret: new Secret(CC_SECRET) }
        : undefined,
  });
  idp.resetStats();
  const client = await connect(mcp.url, provider, { t });
  assert.deepEqual((await client.callTool(whoami)).content, hello);
  assert.deepEqual(idp.stats.byGrant.client_credentials, { success: 1, error: 0 });
  const stored = await store.get({ subject: "indexer", issuer: idp.issuer, resource: mcp.url });
  assert.equal(stored?.clientId, "cc-basic");
  assert.equal(stored?.tokens.refreshToken, undefined, "no refresh token kept");
  assert.equal(stored?.tokens.clientSecret, undefined, "the client's secret is not stored");

  await expireAccessToken(store, stored);
  const refusedBefore = mcp.stats.unauthorized;
  assert.deepEqual((await client.callTool(whoami)).content, hello);
  assert.deepEqual(idp.stats.byGrant.client_credentials, { success: 2, error: 0 });
  assert.equal(
    mcp.stats.unauthorized,
    refusedBefore,
    "the expired token was replaced before the request",
  );
});

test("[MCP-client-credentials-private-key-jwt] client credentials with private_key_jwt (RFC 7523 §2.2, a PKCS#8 PEM key)", async (t) => {
  const mcp = await startProtectedMcpServer({ issuer: idp.issuer });
  const provider = providerFor(mcp.url, {
    subject: "indexer",
    grant: clientCredentials(),
    clientFor: () => ({
      clientId: "cc-key",
      authMethod: "private_key_jwt",
      privateKey: new Secret(clientPem),
    }),
  });
  idp.resetStats();
  const client = await connect(mcp.url, provider, { t });
  assert.deepEqual((await client.callTool(whoami)).content, hello);
  assert.deepEqual(idp.stats.byGrant.client_credentials, { success: 1, error: 0 });
});

test("[MCP-client-credentials-refused] a wrong secret is the server's invalid_client, typed, once, and no person is asked", async (t) => {
  const mcp = await startProtectedMcpServer({ issuer: idp.issuer });
  const provider = providerFor(mcp.url, {
    subject: "indexer",
    grant: clientCredentials(),
    clientFor: () => ({
      clientId: "cc-basic",
      clientSecret: new Secret("wrong-secret-0123456789abcdef"),
    }),
  });
  idp.resetStats();
  const error = await connectRefused(t, mcp.url, provider);
  assert.equal(oauthErrorOf(error), "invalid_client");
  assert.ok(!JSON.stringify(error, Object.getOwnPropertyNames(error)).includes(CC_SECRET));
});

test("[MCP-client-workload-identity] a workload's platform token is exchanged with the JWT bearer grant (RFC 7523 §2.1) for a token for the server, as its subject", async (t) => {
  const mcp = await startProtectedMcpServer({ issuer: idp.issuer });
  const store = new MemoryCredentialStore();
  let read = 0;
  const provider = providerFor(mcp.url, {
    store,
    subject: "indexer",
    grant: workloadIdentity({
      assertion: () => {
        read++;
        return workloadToken();
      },
    }),
    clientFor: () => ({ clientId: "workload" }),
  });
  idp.resetStats();
  const client = await connect(mcp.url, provider, { t });
  assert.deepEqual((await client.callTool(whoami)).content, hello);
  assert.deepEqual(idp.stats.byGrant[JWT_BEARER_GRANT], { success: 1, error: 0 });
  const stored = await store.get({ subject: "indexer", issuer: idp.issuer, resource: mcp.url });
  const claims = JSON.parse(
    Buffer.from(String(stored?.tokens.accessToken?.reveal().split(".")[1]), "base64url").toString(),
  );
  assert.equal(claims.sub, "spiffe://example.test/ns/prod/sa/indexer");
  assert.equal(claims.aud, mcp.url);
  // Read afresh at each sign-in: platform tokens are short-lived.
  await expireAccessToken(store, stored as NonNullable<typeof stored>);
  await client.callTool(whoami);
  assert.equal(read, 2);
});

for (const [name, claims] of [
  ["for another audience", { aud: "https://another-as.example.test" }],
  ["expired", { exp: Math.floor(Date.now() / 1000) - 120 }],
] as const) {
  test(`[MCP-client-workload-identity-refused] an assertion ${name} is refused with invalid_grant, once: no retry, no other grant, nobody asked`, async (t) => {
    const mcp = await startProtectedMcpServer({ issuer: idp.issuer });
    const asked: URL[] = [];
    const provider = providerFor(mcp.url, {
      subject: "indexer",
      grant: workloadIdentity({ assertion: () => workloadToken(claims) }),
      clientFor: () => ({ clientId: "workload" }),
      onAuthorizationUrl: async (url) => {
        asked.push(url);
      },
    });
    idp.resetStats();
    const error = await connectRefused(t, mcp.url, provider);
    assert.equal(oauthErrorOf(error), "invalid_grant");
    assert.deepEqual(idp.stats.byGrant[JWT_BEARER_GRANT], { success: 0, error: 1 });
    assert.deepEqual(
      Object.keys(idp.stats.byGrant),
      [JWT_BEARER_GRANT],
      "no other grant was tried",
    );
    assert.equal(asked.length, 0);
  });
}

test("[MCP-client-workload-identity-replay] the same platform token presented twice is refused the second time (RFC 7523 §3 item 7)", async (t) => {
  const mcp = await startProtectedMcpServer({ issuer: idp.issuer });
  const once = await workloadToken();
  const store = new MemoryCredentialStore();
  const provider = providerFor(mcp.url, {
    store,
    subject: "indexer",
    grant: workloadIdentity({ assertion: once }),
    clientFor: () => ({ clientId: "workload" }),
  });
  const client = await connect(mcp.url, provider, { t });
  await client.callTool(whoami);
  const stored = await store.get({ subject: "indexer", issuer: idp.issuer, resource: mcp.url });
  await expireAccessToken(store, stored as NonNullable<typeof stored>);
  await assert.rejects(client.callTool(whoami), (e: unknown) =>
    /invalid_grant|already used/.test(String(e)),
  );
});

test("[MCP-client-enterprise-managed] enterprise-managed authorization: the person's ID token becomes an ID-JAG at the enterprise IdP (RFC 8693), then a token for the server at its authorization server (RFC 7523)", async (t) => {
  const mcp = await startProtectedMcpServer({ issuer: idp.issuer });
  const idToken = await enterpriseIdToken();
  const store = new MemoryCredentialStore();
  const provider = providerFor(mcp.url, {
    store,
    subject: "alice",
    grant: enterpriseManaged({
      idp: { issuer: enterprise.issuer, client: { clientId: "ema-app" } },
      idToken: () => new Secret(idToken),
    }),
    clientFor: (issuer) =>
      issuer === idp.issuer
        ? { clientId: "ema-client", clientSecret: new Secret(EMA_SECRET) }
        : undefined,
  });
  enterprise.resetStats();
  idp.resetStats();
  const client = await connect(mcp.url, provider, { t });
  assert.deepEqual((await client.callTool(whoami)).content, hello);
  assert.deepEqual(enterprise.stats.byGrant["urn:ietf:params:oauth:grant-type:token-exchange"], {
    success: 1,
    error: 0,
  });
  assert.deepEqual(idp.stats.byGrant[JWT_BEARER_GRANT], { success: 1, error: 0 });
  const stored = await store.get({ subject: "alice", issuer: idp.issuer, resource: mcp.url });
  const claims = JSON.parse(
    Buffer.from(String(stored?.tokens.accessToken?.reveal().split(".")[1]), "base64url").toString(),
  );
  assert.equal(claims.sub, "alice", "the person the enterprise signed in");
  assert.equal(claims.client_id, "ema-client");
});

test("[MCP-client-enterprise-managed-refused] an ID token issued to another client is not exchanged: invalid_grant at the enterprise IdP, nothing reaches the MCP server's authorization server", async (t) => {
  const mcp = await startProtectedMcpServer({ issuer: idp.issuer });
  const idToken = await enterpriseIdToken();
  const provider = providerFor(mcp.url, {
    subject: "alice",
    grant: enterpriseManaged({
      // Not the client the ID token was issued to (its aud): another client of the enterprise IdP.
      idp: { issuer: enterprise.issuer, client: { clientId: "ema-other" } },
      idToken,
    }),
    clientFor: () => ({ clientId: "ema-client", clientSecret: new Secret(EMA_SECRET) }),
  });
  idp.resetStats();
  const error = await connectRefused(t, mcp.url, provider);
  assert.equal(oauthErrorOf(error), "invalid_grant");
  assert.equal(idp.stats.byGrant[JWT_BEARER_GRANT], undefined);
  assert.ok(!JSON.stringify(error, Object.getOwnPropertyNames(error)).includes(idToken));
});
