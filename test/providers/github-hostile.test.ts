/**
 * What GitHub (the simulator, test/sims/github.ts) can answer that is not a token: an HTML page, a 200 without a
 * token, a rate limit, a denial, a refresh token it no longer knows. Each is a typed error with a stable code,
 * nothing is stored, and no secret reaches the message.
 */

import assert from "node:assert/strict";
import { after, test } from "node:test";
import {
  AuthorizationResponseError,
  DeviceFlowError,
  LoginRequiredError,
  login,
  RateLimitedError,
  TokenEndpointError,
  TokenRefresher,
} from "../../src/oauth/index.ts";
import { github, resolveProvider } from "../../src/providers/index.ts";
import { MemoryCredentialStore } from "../../src/vault/index.ts";
import { type GitHubFault, startGitHubSimulator } from "../sims/github.ts";
import { browse } from "./support.ts";

async function setup(appKind: "oauth_app" | "github_app" = "oauth_app") {
  const sim = await startGitHubSimulator({ appKind });
  after(() => sim.close());
  const store = new MemoryCredentialStore();
  const provider = github({
    clientId: sim.clientId,
    clientSecret: sim.clientSecret,
    host: sim.url,
    app: appKind,
  });
  return { sim, store, provider };
}

function assertNoSecret(error: unknown, ...secrets: (string | undefined)[]): void {
  const text = `${(error as Error).message} ${JSON.stringify(error)}`;
  for (const s of secrets) if (s) assert.equal(text.includes(s), false, "a secret leaked");
}

for (const [fault, code] of [
  ["html", "server_error"],
  ["html200", "invalid_response"],
  ["no_token", "invalid_response"],
  ["server_error", "server_error"],
] as [GitHubFault, string][]) {
  test(`[PROV-github-bad-answer] a code exchange answered with ${fault} is a typed ${code}, nothing stored`, async () => {
    const { sim, store, provider } = await setup();
    sim.failNext(fault);
    const error = await login({ provider, flow: "browser", store, openUrl: browse }).catch(
      (e: unknown) => e,
    );
    assert.ok(error instanceof TokenEndpointError, String(error));
    assert.equal(error.code, code);
    assertNoSecret(error, sim.clientSecret);
    assert.deepEqual(await store.list(), []);
  });
}

test("[PROV-github-rate-limit] a rate-limited code exchange is a retryable rate_limited error, nothing stored", async () => {
  const { sim, store, provider } = await setup();
  sim.failNext("rate_limit");
  const error = await login({ provider, flow: "browser", store, openUrl: browse }).catch(
    (e: unknown) => e,
  );
  assert.ok(error instanceof RateLimitedError, String(error));
  assert.equal(error.code, "rate_limited");
  assert.equal(error.retryable, true);
  assert.ok(error.retryAfterMs !== undefined && error.retryAfterMs >= 0);
  assert.deepEqual(await store.list(), []);
});

test("[PROV-github-denied] Cancel on GitHub's consent page is access_denied, nothing stored", async () => {
  const { sim, store, provider } = await setup();
  sim.setBehaviour({ deny: true });
  const error = await login({ provider, flow: "browser", store, openUrl: browse }).catch(
    (e: unknown) => e,
  );
  assert.ok(error instanceof AuthorizationResponseError, String(error));
  assert.equal(error.code, "access_denied");
  assert.deepEqual(await store.list(), []);
});

test("[PROV-github-wrong-state] a redirect with a state we never issued is refused before any token request", async () => {
  const { sim, store, provider } = await setup();
  const error = await login({
    provider,
    flow: "browser",
    store,
    timeoutMs: 2000,
    openUrl: async (url) => {
      const consent = await fetch(url, { redirect: "manual" });
      const location = new URL(consent.headers.get("location") as string);
      location.searchParams.set("state", "forged-state");
      // Our loopback listener ignores requests without the expected state (RFC 8252 §8.9); the login times out.
      await (await fetch(location)).text();
    },
  }).catch((e: unknown) => e);
  assert.ok(error instanceof Error);
  assert.equal((error as { code?: string }).code, "login_timeout");
  assert.equal(sim.stats().codeExchanges, 0);
  assert.deepEqual(await store.list(), []);
});

test("[PROV-github-bad-refresh-token] GitHub's bad_refresh_token marks the credential login_required, once", async () => {
  const { sim, store, provider } = await setup("github_app");
  const record = await login({ provider, flow: "browser", store, openUrl: browse });
  const refresh = record.tokens.refreshToken?.reveal();
  // Spend the refresh token behind the vault's back (another client with the same grant), then expire ours.
  const spent = await fetch(`${sim.url}/login/oauth/access_token`, {
    method: "POST",
    headers: { accept: "application/json", "content-type": "application/x-www-form-urlencoded" },
    body: new URLSearchParams({
      grant_type: "refresh_token",
      refresh_token: refresh as string,
      client_id: sim.clientId,
      client_secret: sim.clientSecret,
    }),
  });
  assert.equal(spent.status, 200);
  await store.put({ ...record, expiresAt: Date.now() - 1000 });
  const refresher = new TokenRefresher({ store, providers: resolveProvider });
  const error = await refresher.getAccessToken(record).catch((e: unknown) => e);
  assert.ok(error instanceof LoginRequiredError, String(error));
  assertNoSecret(error, refresh, sim.clientSecret);
  assert.equal((await store.get(record))?.status, "login_required");
  const grantsBefore = sim.stats().refreshGrants;
  await assert.rejects(refresher.getAccessToken(record), LoginRequiredError);
  assert.equal(sim.stats().refreshGrants, grantsBefore, "no second refresh attempt");
});

test("[PROV-github-refresh-rate-limit] a rate-limited refresh is retryable and marks nothing", async () => {
  const { sim, store, provider } = await setup("github_app");
  const record = await login({ provider, flow: "browser", store, openUrl: browse });
  await store.put({ ...record, expiresAt: Date.now() - 1000 });
  sim.failNext("rate_limit");
  const refresher = new TokenRefresher({ store, providers: resolveProvider });
  await assert.rejects(refresher.getAccessToken(record), RateLimitedError);
  assert.equal((await store.get(record))?.status, "active");
  assert.ok(await refresher.getAccessToken(record));
});

test("[PROV-github-device-flow-disabled] an app with Device Flow off is a typed device_flow_unsupported that says what to enable", async () => {
  const { sim, store, provider } = await setup();
  sim.setBehaviour({ deviceFlowEnabled: false });
  const error = await login({ provider, flow: "device", store }).catch((e: unknown) => e);
  assert.ok(error instanceof DeviceFlowError, String(error));
  assert.equal(error.code, "device_flow_unsupported");
  assert.match(error.message, /Enable Device Flow/);
  assert.deepEqual(await store.list(), []);
});

test("[PROV-account-unreadable] GitHub's account API failing twice fails the login with nothing stored, not a credential under 'default'", async () => {
  const { sim, store, provider } = await setup();
  sim.failAccountNext("rate_limit", 2);
  const error = await login({ provider, flow: "browser", store, openUrl: browse }).catch(
    (e: unknown) => e,
  );
  assert.equal((error as { code?: string }).code, "account_unreadable", String(error));
  assert.deepEqual(await store.list(), []);
  // One failure is retried: the login succeeds under the account's id.
  sim.failAccountNext("rate_limit", 1);
  const record = await login({ provider, flow: "browser", store, openUrl: browse });
  assert.equal(record.subject, "1001");
  // A caller that names the subject needs no account read.
  sim.failAccountNext("rate_limit", 2);
  const named = await login({ provider, flow: "browser", store, subject: "me", openUrl: browse });
  assert.equal(named.subject, "me");
});
