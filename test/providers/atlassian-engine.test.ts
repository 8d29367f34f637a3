/**
 * The engine with the Atlassian preset against the Atlassian 3LO simulator (test/sims/atlassian.ts, written from
 * developer.atlassian.com's "OAuth 2.0 (3LO) apps"): the real origins remapped to the simulator, a browser login
 * with audience/prompt and a JSON token body, the account and site, rotating refresh tokens, sign-out without a
 * revocation API, and hostile answers.
 */

import assert from "node:assert/strict";
import { after, test } from "node:test";
import {
  AuthorizationResponseError,
  DiscoveryError,
  LoginRequiredError,
  login,
  logout,
  TokenEndpointError,
  TokenRefresher,
} from "../../src/oauth/index.ts";
import { atlassian, presetForIssuer, resolveProvider } from "../../src/providers/index.ts";
import { MemoryCredentialStore } from "../../src/vault/index.ts";
import { type AtlassianSimulator, startAtlassianSimulator } from "../sims/atlassian.ts";
import { expireAccessToken } from "../support/credentials.ts";
import { assertHostileAnswers, assertNoSecret, browse } from "./support.ts";

const SITE = {
  id: "1324a887-45db-1bf4-1e99-ef0ff456d421",
  url: "https://acme.atlassian.net",
  name: "acme",
};

/** Plays the browser: follows the authorization URL to the simulator, then the simulator's redirect. */
async function simulator(options = {}): Promise<AtlassianSimulator> {
  const sim = await startAtlassianSimulator({ sites: [SITE], ...options });
  after(() => sim.close());
  return sim;
}

const providerFor = (sim: AtlassianSimulator, clientSecret = sim.clientSecret) =>
  atlassian({
    clientId: sim.clientId,
    clientSecret,
    origins: { "https://auth.atlassian.com": sim.url, "https://api.atlassian.com": sim.url },
  });

test("[PROV-atlassian-browser-login] a 3LO login asks for audience and consent, sends JSON, and stores the account, site and refresh token", async () => {
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
  assert.equal(asked?.searchParams.get("audience"), "api.atlassian.com");
  assert.equal(asked?.searchParams.get("prompt"), "consent");
  assert.equal(asked?.searchParams.get("scope"), "read:me offline_access");
  assert.equal(asked?.searchParams.get("code_challenge_method"), "S256");
  assert.equal(sim.lastTokenRequest()?.contentType, "application/json");
  assert.equal(sim.lastTokenRequest()?.auth, "post");
  assert.equal(record.issuer, "https://auth.atlassian.com");
  assert.equal(record.subject, "5b10ac8d82e05b22cc7d4ef5");
  assert.equal(record.account.email, "alice@example.com");
  assert.equal(record.account.label, "alice@example.com");
  assert.equal(record.account.name, "Alice Example");
  assert.equal(record.account.organization, "acme");
  assert.equal(record.provider?.name, "atlassian");
  assert.ok(record.tokens.refreshToken, "offline_access gave a refresh token");
  assert.equal(record.tokens.clientSecret?.reveal(), sim.clientSecret);
  assert.equal(JSON.stringify(record.provider).includes(sim.clientSecret), false);
});

test("[PROV-atlassian-refresh-rotation] 20 callers at expiry refresh once, with a JSON body; the rotated refresh token is stored", async () => {
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
  assert.equal(sim.lastTokenRequest()?.grantType, "refresh_token");
  assert.equal(sim.lastTokenRequest()?.contentType, "application/json");
  const stored = await store.get(record);
  assert.notEqual(stored?.tokens.refreshToken?.reveal(), first.tokens.refreshToken?.reveal());
  assert.ok(sim.isActive(tokens[0]?.reveal() ?? ""));
});

test("[PROV-atlassian-app-removed] after the person removes the app, the refresh is refused (403 invalid_grant) and the credential needs a new login", async () => {
  const sim = await simulator();
  const store = new MemoryCredentialStore();
  const record = await expireAccessToken(
    store,
    await login({ provider: providerFor(sim), flow: "browser", store, openUrl: browse }),
  );
  sim.removeAppAccess();
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

test("[PROV-atlassian-logout-local] logout deletes locally and names Atlassian's connected-apps page (no revocation API)", async () => {
  const sim = await simulator();
  const store = new MemoryCredentialStore();
  const record = await login({
    provider: providerFor(sim),
    flow: "browser",
    store,
    openUrl: browse,
  });
  const result = await logout({ store, key: record, providers: resolveProvider });
  assert.equal(result.revoked, false);
  assert.equal(result.deleted, true);
  assert.equal(result.manageUrl, "https://id.atlassian.com/manage-profile/apps");
  assert.equal(await store.get(record), undefined);
});

test("[PROV-atlassian-hostile-answers] an HTML 502, a 200 without a token, a 429 and a 500 are typed errors; nothing is stored, no secret shown", async () => {
  const sim = await simulator();
  await assertHostileAnswers({
    sim,
    retryAfterMs: 10_000,
    login: (store) =>
      login({ provider: providerFor(sim), flow: "browser", store, openUrl: browse }),
  });
});

test("[PROV-atlassian-denial] the person declining is AuthorizationResponseError access_denied, and nothing is stored", async () => {
  const sim = await simulator({ deny: true });
  const store = new MemoryCredentialStore();
  await assert.rejects(
    login({ provider: providerFor(sim), flow: "browser", store, openUrl: browse }),
    (error: unknown) =>
      error instanceof AuthorizationResponseError && error.oauthError === "access_denied",
  );
  assert.deepEqual(await store.list(), []);
});

test("[PROV-atlassian-wrong-secret] a wrong client secret is a typed error that does not show it", async () => {
  const sim = await simulator();
  const store = new MemoryCredentialStore();
  await assert.rejects(
    login({
      provider: providerFor(sim, "wrong-secret-value-0123456789"),
      flow: "browser",
      store,
      openUrl: browse,
    }),
    (error: unknown) =>
      error instanceof TokenEndpointError &&
      !error.message.includes("wrong-secret-value-0123456789"),
  );
  assert.deepEqual(await store.list(), []);
});

test("[PROV-atlassian-public-client-refused] without a client secret the browser flow is refused before any request (PKCE is undocumented)", async () => {
  const sim = await simulator();
  const store = new MemoryCredentialStore();
  const provider = atlassian({
    clientId: sim.clientId,
    origins: { "https://auth.atlassian.com": sim.url },
  });
  await assert.rejects(
    login({ provider, flow: "browser", store, openUrl: browse }),
    (error: unknown) => error instanceof DiscoveryError && error.code === "pkce_unsupported",
  );
  assert.equal(sim.stats().authorizations, 0);
  assert.equal(presetForIssuer("https://auth.atlassian.com")?.preset.name, "atlassian");
});
