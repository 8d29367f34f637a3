/**
 * The engine with the GitLab preset against the GitLab simulator (test/sims/gitlab.ts, written from
 * docs.gitlab.com/api/oauth2): browser and device logins on a self-managed host, the account from /api/v4/user,
 * rotating refresh tokens, RFC 7009 revocation, and hostile answers.
 */

import assert from "node:assert/strict";
import { after, test } from "node:test";
import type { Secret } from "../../src/core/secret.ts";
import {
  AuthorizationResponseError,
  LoginRequiredError,
  login,
  logout,
  TokenRefresher,
} from "../../src/oauth/index.ts";
import {
  gitlab,
  ProviderConfigError,
  presetForIssuer,
  resolveProvider,
} from "../../src/providers/index.ts";
import { MemoryCredentialStore } from "../../src/vault/index.ts";
import { type GitLabSimulator, startGitLabSimulator } from "../sims/gitlab.ts";
import { expireAccessToken } from "../support/credentials.ts";
import { assertHostileAnswers, assertNoSecret, browse } from "./support.ts";

/** Plays the browser: follows the authorization URL to the simulator, then its redirect to our loopback listener. */
async function simulator(options = {}): Promise<GitLabSimulator> {
  const sim = await startGitLabSimulator(options);
  after(() => sim.close());
  return sim;
}

const providerFor = (sim: GitLabSimulator) =>
  gitlab({ clientId: sim.clientId, clientSecret: sim.clientSecret, host: sim.url });

test("[PROV-gitlab-browser-login] a browser login on a self-managed host stores the tokens, the GitLab username and the provider", async () => {
  const sim = await simulator();
  const store = new MemoryCredentialStore();
  const record = await login({
    provider: providerFor(sim),
    flow: "browser",
    store,
    openUrl: browse,
  });
  assert.equal(record.issuer, sim.url);
  assert.equal(record.subject, "1");
  assert.equal(record.account.login, "alice");
  assert.equal(record.account.label, "alice");
  assert.equal(record.account.email, "alice@example.com");
  assert.deepEqual(record.provider, { name: "gitlab", options: { host: sim.url } });
  assert.deepEqual(record.scopes, ["read_user"]);
  // Two hours, as GitLab documents (give the clock a minute either side).
  const lifetime = (record.expiresAt ?? 0) - Date.now();
  assert.ok(lifetime > 7100_000 && lifetime <= 7200_000, `expires in ${lifetime} ms`);
  assert.ok(record.tokens.refreshToken);
  assert.equal(record.tokens.clientSecret?.reveal(), sim.clientSecret);
  assert.equal(sim.lastTokenRequest()?.auth, "post");
  assert.ok(sim.lastTokenRequest()?.params.code_verifier, "PKCE was used");
  assert.ok(sim.isActive(record.tokens.accessToken?.reveal() ?? ""));
});

test("[PROV-gitlab-openid] with the openid scope, GitLab's ID token (issuer = the instance's origin) is validated and names the same user", async () => {
  const sim = await simulator();
  const store = new MemoryCredentialStore();
  const record = await login({
    provider: providerFor(sim),
    flow: "browser",
    store,
    scope: "openid read_user",
    openUrl: browse,
  });
  assert.ok(record.tokens.idToken, "an ID token was issued and accepted");
  assert.equal(record.subject, "1");
  assert.equal(record.account.login, "alice");
  assert.deepEqual(record.scopes, ["openid", "read_user"]);
});

test("[PROV-gitlab-refresh-rotation] 20 callers at expiry refresh once; the rotated refresh token replaces the retired one", async () => {
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
  const stored = await store.get(record);
  const oldRefresh = first.tokens.refreshToken?.reveal() ?? "";
  assert.notEqual(stored?.tokens.refreshToken?.reveal(), oldRefresh);
  assert.equal(sim.isRefreshTokenActive(oldRefresh), false);
  assert.equal(sim.isRefreshTokenActive(stored?.tokens.refreshToken?.reveal() ?? ""), true);
  assert.ok(sim.isActive(tokens[0]?.reveal() ?? ""));
});

test("[PROV-gitlab-device] a device login (/oauth/authorize_device) completes once the person approves", async () => {
  const sim = await simulator({ deviceIntervalSeconds: 1, confidential: false });
  const store = new MemoryCredentialStore();
  const record = await login({
    provider: gitlab({ clientId: sim.clientId, host: sim.url }),
    flow: "device",
    store,
    onDevicePrompt: (prompt) => {
      assert.ok(prompt.verificationUri.startsWith(sim.url));
      sim.approveDevice(prompt.userCode);
    },
  });
  assert.equal(record.account.login, "alice");
  assert.equal(record.tokens.clientSecret, undefined);
  assert.equal(sim.lastTokenRequest()?.grantType, "urn:ietf:params:oauth:grant-type:device_code");
});

test("[PROV-gitlab-revoke] logout revokes at /oauth/revoke (RFC 7009), then deletes the credential", async () => {
  const sim = await simulator();
  const store = new MemoryCredentialStore();
  const record = await login({
    provider: providerFor(sim),
    flow: "browser",
    store,
    openUrl: browse,
  });
  assert.equal(sim.grantCount(), 1);
  const result = await logout({ store, key: record, providers: resolveProvider });
  assert.equal(result.revoked, true, String(result.error));
  assert.equal(result.deleted, true);
  assert.equal(sim.grantCount(), 0);
  assert.equal(sim.isActive(record.tokens.accessToken?.reveal() ?? ""), false);
});

test("[PROV-gitlab-revoked-refresh] a refresh token GitLab no longer knows marks the credential login_required, once", async () => {
  const sim = await simulator();
  const store = new MemoryCredentialStore();
  const record = await expireAccessToken(
    store,
    await login({ provider: providerFor(sim), flow: "browser", store, openUrl: browse }),
  );
  // The person revokes the app in GitLab's settings: the grant is gone at the server.
  const revoked = await fetch(`${sim.url}/oauth/revoke`, {
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded" },
    body: new URLSearchParams({
      token: (record.tokens.refreshToken as Secret).reveal(),
      client_id: sim.clientId,
      client_secret: sim.clientSecret,
    }),
  });
  assert.equal(revoked.status, 200);
  const refresher = new TokenRefresher({ store, providers: resolveProvider });
  await assert.rejects(refresher.getAccessToken(record), (error: unknown) => {
    assert.ok(error instanceof LoginRequiredError, String(error));
    assertNoSecret(error, sim);
    return true;
  });
  assert.equal((await store.get(record))?.status, "login_required");
  assert.equal(sim.stats().refreshGrants, 1, "the refused refresh token was sent once");
});

test("[PROV-gitlab-hostile-answers] an HTML 502, a 200 without a token, a 429 and a JSON 500 are typed errors; nothing is stored, no secret shown", async () => {
  const sim = await simulator();
  await assertHostileAnswers({
    sim,
    retryAfterMs: 60_000,
    login: (store) =>
      login({ provider: providerFor(sim), flow: "browser", store, openUrl: browse }),
  });
});

test("[PROV-gitlab-denial] the person denying access is AuthorizationResponseError access_denied, and nothing is stored", async () => {
  const sim = await simulator({ deny: true });
  const store = new MemoryCredentialStore();
  await assert.rejects(
    login({ provider: providerFor(sim), flow: "browser", store, openUrl: browse }),
    (error: unknown) =>
      error instanceof AuthorizationResponseError && error.oauthError === "access_denied",
  );
  assert.deepEqual(await store.list(), []);
});

test("[PROV-gitlab-config] gitlab.com is recognised as an issuer; a plain-HTTP or path-carrying host is refused", () => {
  assert.equal(presetForIssuer("https://gitlab.com")?.preset.name, "gitlab");
  assert.equal(presetForIssuer("https://gitlab.com/")?.preset.name, "gitlab");
  assert.equal(presetForIssuer("https://gitlab.example.com")?.preset.name, undefined);
  const provider = gitlab({ clientId: "app" });
  assert.equal(provider.issuer, "https://gitlab.com");
  assert.equal(provider.displayName, "GitLab");
  assert.deepEqual(provider.ref, { name: "gitlab", options: {} });
  for (const host of [
    "http://gitlab.example.com",
    "https://gitlab.example.com/gitlab",
    "nonsense",
  ]) {
    assert.throws(
      () => gitlab({ clientId: "app", host }),
      (error: unknown) =>
        error instanceof ProviderConfigError && error.code === "provider_host_invalid",
      host,
    );
  }
});
