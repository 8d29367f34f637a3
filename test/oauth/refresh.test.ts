import assert from "node:assert/strict";
import { test } from "node:test";
import {
  discoverAuthorizationServer,
  introspectToken,
  LoginRequiredError,
  TokenRefresher,
} from "../../src/oauth/index.ts";
import { MemoryCredentialStore } from "../../src/vault/index.ts";
import { expireAccessToken, loginForTest, TEST_RESOURCE } from "../support/credentials.ts";
import { useIdp } from "../support/idp.ts";

const idp = await useIdp();

test("[REFRESH-single-flight] 1,000 concurrent requests for a due token make exactly one refresh request and no invalid_grant", async () => {
  const store = new MemoryCredentialStore();
  const record = await expireAccessToken(
    store,
    await loginForTest(idp, store, { resource: TEST_RESOURCE }),
  );
  const key = { subject: record.subject, issuer: record.issuer, resource: record.resource };
  const refresher = new TokenRefresher({ store });
  idp.resetStats();

  const tokens = await Promise.all(
    Array.from({ length: 1000 }, () => refresher.getAccessToken(key)),
  );

  assert.deepEqual(idp.stats.byGrant.refresh_token, { success: 1, error: 0 });
  assert.equal(idp.stats.errors.length, 0);
  const distinct = new Set(tokens.map((t) => t.reveal()));
  assert.equal(distinct.size, 1, "every caller gets the same fresh token");
  assert.notEqual(
    [...distinct][0],
    record.tokens.accessToken?.reveal(),
    "the token was actually renewed",
  );
});

test("[REFRESH-rotation-persisted] the rotated refresh token is stored before the new access token is handed out", async () => {
  const store = new MemoryCredentialStore();
  const record = await expireAccessToken(
    store,
    await loginForTest(idp, store, { resource: TEST_RESOURCE }),
  );
  const key = { subject: record.subject, issuer: record.issuer, resource: record.resource };
  const refresher = new TokenRefresher({ store });
  const token = await refresher.getAccessToken(key);
  const stored = await store.get(key);
  assert.ok(stored);
  assert.equal(stored.tokens.accessToken?.reveal(), token.reveal());
  assert.ok(stored.tokens.refreshToken);
  assert.notEqual(
    stored.tokens.refreshToken.reveal(),
    record.tokens.refreshToken?.reveal(),
    "oidc-provider rotates; we must keep the new one",
  );
  assert.ok(stored.version > record.version);
  assert.ok((stored.expiresAt ?? 0) > Date.now());
  // The new refresh token is live at the server.
  const as = await discoverAuthorizationServer(idp.issuer);
  const info = await introspectToken({
    as,
    client: { clientId: "agentauth-cli" },
    token: stored.tokens.refreshToken,
    tokenTypeHint: "refresh_token",
  });
  assert.equal(info.active, true);
});

test("[REFRESH-proactive-skew] a token inside the skew window is refreshed; one outside it is not", async () => {
  const store = new MemoryCredentialStore();
  const record = await loginForTest(idp, store, { resource: TEST_RESOURCE });
  const key = { subject: record.subject, issuer: record.issuer, resource: record.resource };
  const { id: _i, version, createdAt: _c, updatedAt: _u, ...input } = record;
  await store.compareAndSwap(version, { ...input, expiresAt: Date.now() + 30_000 });
  idp.resetStats();
  const lenient = new TokenRefresher({ store, skewMs: 10_000 });
  assert.equal((await lenient.getAccessToken(key)).reveal(), record.tokens.accessToken?.reveal());
  assert.equal(
    idp.stats.byGrant.refresh_token,
    undefined,
    "no refresh when the token is outside the skew",
  );
  const eager = new TokenRefresher({ store, skewMs: 60_000 });
  assert.notEqual((await eager.getAccessToken(key)).reveal(), record.tokens.accessToken?.reveal());
  assert.deepEqual(idp.stats.byGrant.refresh_token, { success: 1, error: 0 });
});

test("[REFRESH-invalid-grant-no-loop] a refused refresh token marks the credential login_required once and is never retried", async () => {
  const store = new MemoryCredentialStore();
  const record = await expireAccessToken(
    store,
    await loginForTest(idp, store, { resource: TEST_RESOURCE }),
  );
  const key = { subject: record.subject, issuer: record.issuer, resource: record.resource };
  // Kill the grant at the server behind the vault's back.
  const as = await discoverAuthorizationServer(idp.issuer);
  const { revokeTokens } = await import("../../src/oauth/index.ts");
  await revokeTokens({
    as,
    client: { clientId: "agentauth-cli" },
    refreshToken: record.tokens.refreshToken,
  });
  const events: string[] = [];
  const refresher = new TokenRefresher({ store, onChange: (e) => events.push(e.kind) });
  idp.resetStats();

  const results = await Promise.allSettled(
    Array.from({ length: 50 }, () => refresher.getAccessToken(key)),
  );
  for (const r of results) {
    assert.equal(r.status, "rejected");
    assert.ok(r.reason instanceof LoginRequiredError);
    assert.equal(r.reason.code, "login_required");
    assert.doesNotMatch(r.reason.message, new RegExp(record.tokens.refreshToken?.reveal() ?? "x"));
  }
  assert.deepEqual(
    idp.stats.byGrant.refresh_token,
    { success: 0, error: 1 },
    "one refresh attempt for 50 callers",
  );
  assert.equal((await store.get(key))?.status, "login_required");
  assert.deepEqual(events, ["login_required"]);

  await assert.rejects(refresher.getAccessToken(key), LoginRequiredError);
  assert.deepEqual(
    idp.stats.byGrant.refresh_token,
    { success: 0, error: 1 },
    "later calls fail fast without a request",
  );
});

test("[REFRESH-no-credential] asking for a token nobody logged in for is a typed login_required error", async () => {
  const refresher = new TokenRefresher({ store: new MemoryCredentialStore() });
  await assert.rejects(
    refresher.getAccessToken({ subject: "nobody", issuer: idp.issuer, resource: "" }),
    (e: unknown) => e instanceof LoginRequiredError && e.code === "login_required",
  );
});

test("[REFRESH-force] forceRefresh renews a still-fresh token once, even with concurrent callers", async () => {
  const store = new MemoryCredentialStore();
  const record = await loginForTest(idp, store, { resource: TEST_RESOURCE });
  const key = { subject: record.subject, issuer: record.issuer, resource: record.resource };
  const refresher = new TokenRefresher({ store });
  idp.resetStats();
  const results = await Promise.all(Array.from({ length: 20 }, () => refresher.forceRefresh(key)));
  assert.deepEqual(idp.stats.byGrant.refresh_token, { success: 1, error: 0 });
  assert.equal(new Set(results.map((r) => r.version)).size, 1);
});
