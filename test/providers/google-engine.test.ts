/**
 * The engine with the Google preset against the Google simulator (test/sims/google.ts, written from Google's
 * docs): browser login with offline access, non-rotating refresh, the device flow (verification_url, allowed
 * scopes), grant revocation, the Workspace domain check, and hostile token answers.
 */

import assert from "node:assert/strict";
import { after, test } from "node:test";
import { login, logout, TokenRefresher } from "../../src/oauth/index.ts";
import { checkIdToken, GOOGLE_ISSUER } from "../../src/providers/google.ts";
import { renameField } from "../../src/providers/google-device.ts";
import { google, presetForIssuer, resolveProvider } from "../../src/providers/index.ts";
import { MemoryCredentialStore } from "../../src/vault/index.ts";
import { type GoogleSimulatorOptions, startGoogleSimulator } from "../sims/google.ts";
import { assertNoneLeaked as assertNoSecret, browser, failure } from "./support.ts";

const GOOGLE_ORIGINS = [
  "https://accounts.google.com",
  "https://oauth2.googleapis.com",
  "https://openidconnect.googleapis.com",
  "https://www.googleapis.com",
];

async function startGoogle(options: GoogleSimulatorOptions = {}) {
  const sim = await startGoogleSimulator({ deviceIntervalSeconds: 1, ...options });
  after(() => sim.close());
  const origins = Object.fromEntries(GOOGLE_ORIGINS.map((o) => [o, sim.url]));
  const provider = (extra: { hd?: string; scope?: string } = {}) =>
    google({ clientId: sim.clientId, clientSecret: sim.clientSecret, origins, ...extra });
  return { sim, provider };
}

test("[PROV-google-browser-login] a browser login asks for offline access and stores tokens, refresh token and the ID token's account", async () => {
  const { sim, provider } = await startGoogle();
  const store = new MemoryCredentialStore();
  const { browse, seen } = browser();
  const record = await login({ provider: provider(), flow: "browser", store, openUrl: browse });
  assert.equal(seen.url?.searchParams.get("access_type"), "offline");
  assert.equal(seen.url?.searchParams.get("prompt"), "consent");
  assert.equal(seen.url?.searchParams.get("scope"), "openid email profile");
  assert.equal(seen.url?.searchParams.get("code_challenge_method"), "S256");
  assert.equal(record.issuer, GOOGLE_ISSUER);
  assert.equal(record.subject, "108712345678901234567");
  assert.equal(record.account.email, "alice@example.com");
  assert.equal(record.account.name, "Alice Example");
  assert.equal(record.account.avatarUrl, "https://lh3.googleusercontent.com/a/alice");
  assert.equal(record.account.label, "alice@example.com");
  assert.ok(record.tokens.refreshToken);
  assert.ok(record.expiresAt);
  assert.equal(record.provider?.name, "google");
  assert.equal(sim.lastTokenRequest()?.auth, "post");
  assert.ok(sim.isActive(record.tokens.accessToken?.reveal() ?? ""));
});

test("[PROV-google-userinfo-account] without openid there is no ID token: the account comes from the userinfo endpoint", async () => {
  const { sim, provider } = await startGoogle();
  const store = new MemoryCredentialStore();
  const record = await login({
    provider: provider({ scope: "email profile" }),
    flow: "browser",
    store,
    openUrl: browser().browse,
  });
  assert.equal(record.subject, "108712345678901234567");
  assert.equal(record.account.email, "alice@example.com");
  assert.equal(record.account.avatarUrl, "https://lh3.googleusercontent.com/a/alice");
  assert.equal(sim.stats().accountCalls, 1);
});

test("[PROV-google-refresh-keeps-token] TokenRefresher gets a new access token and keeps the non-rotating refresh token", async () => {
  const { sim, provider } = await startGoogle();
  const store = new MemoryCredentialStore();
  const first = await login({
    provider: provider(),
    flow: "browser",
    store,
    openUrl: browser().browse,
  });
  await store.put({ ...first, expiresAt: Date.now() - 1000 });
  const refresher = new TokenRefresher({ store, providers: resolveProvider });
  const tokens = await Promise.all(
    Array.from({ length: 10 }, () => refresher.getAccessToken(first)),
  );
  assert.equal(new Set(tokens.map((t) => t.reveal())).size, 1);
  assert.notEqual(tokens[0]?.reveal() ?? "", first.tokens.accessToken?.reveal());
  assert.equal(sim.stats().refreshGrants, 1);
  const stored = await store.get(first);
  assert.equal(stored?.tokens.refreshToken?.reveal(), first.tokens.refreshToken?.reveal());
  assert.ok(sim.isActive(tokens[0]?.reveal() ?? ""));
});

test("[PROV-google-device-login] a device login reads Google's verification_url and stores the account", async () => {
  const { sim, provider } = await startGoogle();
  const store = new MemoryCredentialStore();
  const record = await login({
    provider: provider(),
    flow: "device",
    store,
    onDevicePrompt: (prompt) => {
      assert.equal(prompt.verificationUri, "https://www.google.com/device");
      sim.approveDevice(prompt.userCode);
    },
  });
  assert.equal(record.subject, "108712345678901234567");
  assert.equal(record.account.email, "alice@example.com");
  assert.ok(record.tokens.refreshToken);
});

test("[PROV-google-device-scope] a scope Google's device flow does not allow is refused with invalid_scope, nothing stored", async () => {
  const { sim, provider } = await startGoogle();
  const store = new MemoryCredentialStore();
  const error = await failure(
    login({
      provider: provider({ scope: "https://www.googleapis.com/auth/gmail.readonly" }),
      flow: "device",
      store,
      onDevicePrompt: () => assert.fail("no prompt for a refused scope"),
    }),
  );
  assert.equal(error.code, "token_endpoint_error");
  assert.match(error.message, /invalid_scope/);
  assertNoSecret(error, [sim.clientSecret]);
  assert.equal((await store.list()).length, 0);
});

test("[PROV-google-revoke] logout revokes the grant once at /revoke; a grant already gone is not an error", async () => {
  const { sim, provider } = await startGoogle();
  const store = new MemoryCredentialStore();
  const record = await login({
    provider: provider(),
    flow: "browser",
    store,
    openUrl: browser().browse,
  });
  assert.equal(sim.grantCount(), 1);
  const result = await logout({ store, key: record, providers: resolveProvider });
  assert.equal(result.revoked, true, String(result.error));
  assert.deepEqual(result.outcome, { refreshToken: "revoked", accessToken: "revoked" });
  assert.equal(result.deleted, true);
  assert.equal(sim.grantCount(), 0);
  assert.equal(sim.isActive(record.tokens.accessToken?.reveal() ?? ""), false);
  await store.put(record);
  const again = await logout({ store, key: record, providers: resolveProvider });
  assert.equal(again.revoked, true, String(again.error));
  assert.deepEqual(again.outcome, { refreshToken: "absent", accessToken: "absent" });
});

test("[PROV-google-refresh-revoked] a revoked refresh token (invalid_grant) marks the credential login_required", async () => {
  const { sim, provider } = await startGoogle();
  const store = new MemoryCredentialStore();
  const first = await login({
    provider: provider(),
    flow: "browser",
    store,
    openUrl: browser().browse,
  });
  await fetch(`${sim.url}/revoke`, {
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded" },
    body: new URLSearchParams({ token: first.tokens.refreshToken?.reveal() ?? "" }),
  });
  await store.put({ ...first, expiresAt: Date.now() - 1000 });
  const refresher = new TokenRefresher({ store, providers: resolveProvider });
  const error = await failure(refresher.getAccessToken(first));
  assert.equal(error.code, "login_required");
  assertNoSecret(error, [first.tokens.refreshToken?.reveal(), sim.clientSecret]);
});

test("[PROV-google-hd-enforced] with hd, an ID token without that Workspace domain fails the login and stores nothing", async () => {
  const { sim, provider } = await startGoogle();
  const store = new MemoryCredentialStore();
  const { browse, seen } = browser();
  const error = await failure(
    login({ provider: provider({ hd: "corp.example" }), flow: "browser", store, openUrl: browse }),
  );
  assert.equal(seen.url?.searchParams.get("hd"), "corp.example");
  assert.equal(error.code, "provider_account_refused");
  assertNoSecret(error, [seen.code, sim.clientSecret]);
  assert.equal((await store.list()).length, 0);
});

test("[PROV-google-hd-needs-openid] with hd, a scope without openid cannot store a foreign account: the preset's scope gains openid, and a login() scope without it is refused before anything is stored", async () => {
  const { sim, provider } = await startGoogle();
  // The preset's own scope option: openid is added, so the ID token (and its hd claim) always comes back.
  assert.deepEqual(
    provider({ hd: "corp.example", scope: "email profile" }).defaultScope?.split(" ").sort(),
    ["email", "openid", "profile"],
  );
  assert.equal(
    provider({ scope: "email" }).defaultScope,
    "email",
    "without hd, the scope is as given",
  );
  // A scope handed to login() itself: no ID token comes back, so there is no hd claim to check; refused.
  for (const flow of ["browser", "device"] as const) {
    const store = new MemoryCredentialStore();
    const { browse, seen } = browser();
    const error = await failure(
      login({
        provider: provider({ hd: "corp.example" }),
        flow,
        scope: "email",
        store,
        openUrl: browse,
        onDevicePrompt: (p) => sim.approveDevice(p.userCode),
      }),
    );
    assert.equal(error.code, "provider_account_refused", `${flow}: ${error.message}`);
    assert.match(error.message, /openid/);
    assertNoSecret(error, [seen.code, sim.clientSecret]);
    assert.equal((await store.list()).length, 0, `${flow}: nothing stored`);
  }
});

test("[PROV-google-hd-userinfo] with hd, an account read from userinfo outside the domain is refused too", async () => {
  const { googleAccount } = await import("../../src/providers/google.ts");
  const { createServer } = await import("node:http");
  const server = createServer((_req, res) => {
    res.setHeader("content-type", "application/json");
    res.end(JSON.stringify({ sub: "1", email: "mallory@gmail.com", hd: undefined }));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  after(() => server.close());
  const url = `http://127.0.0.1:${(server.address() as { port: number }).port}/userinfo`;
  const { Secret } = await import("../../src/core/secret.ts");
  await assert.rejects(
    googleAccount(url, { accessToken: new Secret("ya29.test"), response: {} }, "corp.example"),
    { code: "provider_account_refused" },
  );
});

const hostile = [
  { fault: "html", code: "server_error", name: "a 502 HTML page" },
  { fault: "no_token", code: "invalid_response", name: "200 without a token" },
  { fault: "rate_limit", code: "rate_limited", name: "a 429" },
] as const;
for (const { fault, code, name } of hostile) {
  test(`[PROV-google-hostile-${fault}] the token endpoint answering ${name} fails the login with ${code}, stores nothing, leaks nothing`, async () => {
    const { sim, provider } = await startGoogle();
    const store = new MemoryCredentialStore();
    const { browse, seen } = browser();
    sim.failNext(fault);
    const error = await failure(
      login({ provider: provider(), flow: "browser", store, openUrl: browse }),
    );
    assert.equal(error.code, code);
    assertNoSecret(error, [seen.code, sim.clientSecret]);
    assert.equal((await store.list()).length, 0);
  });
}

test("[PROV-google-denied] a denied consent fails the login with access_denied and stores nothing", async () => {
  const { sim, provider } = await startGoogle();
  sim.deny = true;
  const store = new MemoryCredentialStore();
  const error = await failure(
    login({ provider: provider(), flow: "browser", store, openUrl: browser().browse }),
  );
  assert.equal(error.code, "access_denied");
  assert.equal((await store.list()).length, 0);
});

test("[PROV-google-parse] ID token issuer spellings, the hd check, and the verification_url alias", async () => {
  assert.equal(checkIdToken({ iss: "accounts.google.com" }, undefined), "accounts.google.com");
  assert.equal(checkIdToken({ iss: GOOGLE_ISSUER }, undefined), GOOGLE_ISSUER);
  // Any other issuer is compared against Google's, so oauth4webapi refuses it.
  assert.equal(checkIdToken({ iss: "https://evil.example" }, undefined), GOOGLE_ISSUER);
  assert.equal(
    checkIdToken({ iss: GOOGLE_ISSUER, hd: "corp.example" }, "corp.example"),
    GOOGLE_ISSUER,
  );
  assert.throws(() => checkIdToken({ iss: GOOGLE_ISSUER, hd: "other.example" }, "corp.example"), {
    code: "provider_account_refused",
  });
  const renamed = await renameField(
    new Response(
      JSON.stringify({ verification_url: "https://www.google.com/device", user_code: "A" }),
    ),
  );
  assert.equal((await renamed.json()).verification_uri, "https://www.google.com/device");
  const standard = await renameField(
    new Response(JSON.stringify({ verification_uri: "https://a", verification_url: "https://b" })),
  );
  assert.equal((await standard.json()).verification_uri, "https://a");
  assert.equal(await (await renameField(new Response("not json"))).text(), "not json");
  assert.throws(() => google({ clientId: "x", hd: "not a domain" }), {
    code: "provider_option_invalid",
  });
});

test("[PROV-google-ref] a stored Google ref rebuilds the provider with hd; the issuer is recognised", () => {
  const provider = google({
    clientId: "x.apps.googleusercontent.com",
    clientSecret: "s",
    hd: "Corp.Example",
  });
  const rebuilt = resolveProvider(provider.ref, provider.client);
  assert.equal(rebuilt.authorizationParams?.hd, "corp.example");
  assert.equal(presetForIssuer("https://accounts.google.com")?.preset.name, "google");
  assert.equal(presetForIssuer("https://accounts.google.com/o")?.preset.name, undefined);
});
