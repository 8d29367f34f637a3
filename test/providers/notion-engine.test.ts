/**
 * The engine with the Notion preset against the Notion simulator (test/sims/notion.ts, written from
 * developers.notion.com): the real origin remapped to the simulator, a login with owner=user, Basic credentials
 * and a JSON body, the account from the token answer's owner, rolling refresh tokens, revocation, hostile answers.
 */

import assert from "node:assert/strict";
import { after, test } from "node:test";
import {
  AuthorizationResponseError,
  DiscoveryError,
  LoginRequiredError,
  login,
  logout,
  TokenRefresher,
} from "../../src/oauth/index.ts";
import { notion, resolveProvider } from "../../src/providers/index.ts";
import { MemoryCredentialStore } from "../../src/vault/index.ts";
import { type NotionSimulator, startNotionSimulator } from "../sims/notion.ts";
import { expireAccessToken } from "../support/credentials.ts";
import { assertHostileAnswers, assertNoSecret, browse } from "./support.ts";

async function simulator(options = {}): Promise<NotionSimulator> {
  const sim = await startNotionSimulator(options);
  after(() => sim.close());
  return sim;
}

const providerFor = (sim: NotionSimulator) =>
  notion({
    clientId: sim.clientId,
    clientSecret: sim.clientSecret,
    origins: { "https://api.notion.com": sim.url },
  });

test("[PROV-notion-browser-login] a login with owner=user sends Basic credentials and JSON, and stores the owner and workspace", async () => {
  const sim = await simulator();
  const store = new MemoryCredentialStore();
  let asked: URL | undefined;
  const record = await login({
    provider: providerFor(sim),
    flow: "browser",
    store,
    openUrl: async (url) => {
      asked = url;
      await browse(url);
    },
  });
  assert.equal(asked?.searchParams.get("owner"), "user");
  assert.equal(sim.lastTokenRequest()?.auth, "basic");
  assert.equal(sim.lastTokenRequest()?.contentType, "application/json");
  assert.equal(record.issuer, "https://api.notion.com");
  assert.equal(record.subject, "6794760a-1f15-45cd-9c65-0dfe42f5135a");
  assert.equal(record.account.name, "Alice Example");
  assert.equal(record.account.email, "alice@example.com");
  assert.equal(record.account.label, "alice@example.com");
  assert.equal(record.account.organization, "Alice's Notion");
  assert.equal(record.expiresAt, undefined, "Notion's tokens carry no expiry");
  assert.ok(record.tokens.refreshToken);
  assert.equal(record.tokens.clientSecret?.reveal(), sim.clientSecret);
  assert.equal(sim.stats().accountCalls, 0, "the account came from the token answer");
});

test("[PROV-notion-refresh-rolling] 20 callers refresh once; the new refresh token replaces the used one", async () => {
  const sim = await simulator();
  const store = new MemoryCredentialStore();
  const first = await login({
    provider: providerFor(sim),
    flow: "browser",
    store,
    openUrl: browse,
  });
  const record = await expireAccessToken(store, first);
  const refresher = new TokenRefresher({ store, providers: resolveProvider });
  const tokens = await Promise.all(
    Array.from({ length: 20 }, () => refresher.getAccessToken(record)),
  );
  assert.equal(new Set(tokens.map((t) => t.reveal())).size, 1);
  assert.equal(sim.stats().refreshGrants, 1);
  assert.equal(sim.lastTokenRequest()?.contentType, "application/json");
  const stored = await store.get(record);
  assert.notEqual(stored?.tokens.refreshToken?.reveal(), first.tokens.refreshToken?.reveal());
  assert.equal(sim.isRefreshTokenActive(first.tokens.refreshToken?.reveal() ?? ""), false);
  assert.ok(sim.isActive(tokens[0]?.reveal() ?? ""));
});

test("[PROV-notion-revoke] logout revokes at /v1/oauth/revoke, then deletes the credential", async () => {
  const sim = await simulator();
  const store = new MemoryCredentialStore();
  const record = await login({
    provider: providerFor(sim),
    flow: "browser",
    store,
    openUrl: browse,
  });
  const result = await logout({ store, key: record, providers: resolveProvider });
  assert.equal(result.revoked, true, String(result.error));
  assert.deepEqual(result.outcome, { accessToken: "revoked", refreshToken: "revoked" });
  assert.equal(result.deleted, true);
  assert.equal(sim.grantCount(), 0);
  assert.equal(sim.isActive(record.tokens.accessToken?.reveal() ?? ""), false);
});

test("[PROV-notion-revoked-refresh] after the connection is revoked, the refresh is refused and the credential needs a new login", async () => {
  const sim = await simulator();
  const store = new MemoryCredentialStore();
  const record = await expireAccessToken(
    store,
    await login({ provider: providerFor(sim), flow: "browser", store, openUrl: browse }),
  );
  const basic = Buffer.from(`${sim.clientId}:${sim.clientSecret}`).toString("base64");
  const revoked = await fetch(`${sim.url}/v1/oauth/revoke`, {
    method: "POST",
    headers: { authorization: `Basic ${basic}`, "content-type": "application/json" },
    body: JSON.stringify({ token: record.tokens.accessToken?.reveal() }),
  });
  assert.equal(revoked.status, 200);
  await assert.rejects(
    new TokenRefresher({ store, providers: resolveProvider }).getAccessToken(record),
    (error: unknown) => {
      assert.ok(error instanceof LoginRequiredError, String(error));
      assertNoSecret(error, sim);
      return true;
    },
  );
  assert.equal((await store.get(record))?.status, "login_required");
});

test("[PROV-notion-hostile-answers] an HTML 502, a 200 without a token, a 429 and a 500 are typed errors; nothing stored, no secret shown", async () => {
  const sim = await simulator();
  await assertHostileAnswers({
    sim,
    retryAfterMs: 30_000,
    login: (store) =>
      login({ provider: providerFor(sim), flow: "browser", store, openUrl: browse }),
  });
});

test("[PROV-notion-denial-and-public-client] a denial is access_denied with nothing stored; without a secret the login is refused up front", async () => {
  const sim = await simulator({ deny: true });
  const store = new MemoryCredentialStore();
  await assert.rejects(
    login({ provider: providerFor(sim), flow: "browser", store, openUrl: browse }),
    (error: unknown) =>
      error instanceof AuthorizationResponseError && error.oauthError === "access_denied",
  );
  await assert.rejects(
    login({
      provider: notion({ clientId: sim.clientId, origins: { "https://api.notion.com": sim.url } }),
      flow: "browser",
      store,
      openUrl: browse,
    }),
    (error: unknown) => error instanceof DiscoveryError && error.code === "pkce_unsupported",
  );
  assert.deepEqual(await store.list(), []);
});
