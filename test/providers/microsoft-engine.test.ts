/**
 * The engine with the Microsoft Entra ID preset against the Entra simulator (test/sims/microsoft.ts, written from
 * Microsoft's docs): multi-tenant and single-tenant logins (the ID token issuer check), rotating refresh, the device
 * flow and its refusal, sign-out without a revocation API, and hostile token answers.
 */

import assert from "node:assert/strict";
import { after, test } from "node:test";
import { login, logout, TokenRefresher } from "../../src/oauth/index.ts";
import { microsoft, presetForIssuer, resolveProvider } from "../../src/providers/index.ts";
import {
  CONSUMERS_TID,
  checkTenant,
  expectedIssuer,
  LOGIN,
} from "../../src/providers/microsoft-tenant.ts";
import { MemoryCredentialStore } from "../../src/vault/index.ts";
import { type MicrosoftSimulatorOptions, startMicrosoftSimulator } from "../sims/microsoft.ts";
import { assertNoneLeaked as assertNoSecret, browser, failure } from "./support.ts";

const TID = "72f988bf-86f1-41af-91ab-2d7cd011db47";
const OID = "00000000-0000-0000-66f3-3332eca7ea81";

async function startEntra(options: MicrosoftSimulatorOptions = {}) {
  const sim = await startMicrosoftSimulator({ deviceIntervalSeconds: 1, ...options });
  after(() => sim.close());
  const origins = { [LOGIN]: sim.url, "https://graph.microsoft.com": sim.url };
  const provider = (tenant?: string) =>
    microsoft({
      clientId: sim.clientId,
      clientSecret: options.clientType === "confidential" ? sim.clientSecret : undefined,
      tenant,
      origins,
    });
  return { sim, provider };
}

test("[PROV-microsoft-common-login] a multi-tenant browser login checks the ID token's iss against the {tenantid} template and stores the oid account", async () => {
  const { sim, provider } = await startEntra();
  const store = new MemoryCredentialStore();
  const { browse, seen } = browser();
  const record = await login({ provider: provider(), flow: "browser", store, openUrl: browse });
  assert.equal(seen.url?.pathname, "/common/oauth2/v2.0/authorize");
  assert.equal(seen.url?.searchParams.get("scope"), "openid profile email offline_access");
  assert.equal(seen.url?.searchParams.get("code_challenge_method"), "S256");
  assert.equal(record.issuer, `${LOGIN}/common/v2.0`);
  assert.equal(record.subject, OID);
  assert.equal(record.account.login, "alice@contoso.onmicrosoft.com");
  assert.equal(record.account.label, "alice@contoso.onmicrosoft.com");
  assert.equal(record.account.organization, TID);
  assert.ok(record.tokens.refreshToken);
  assert.equal(record.tokens.clientSecret, undefined);
  assert.deepEqual(record.provider?.options?.tenant, "common");
  assert.equal(sim.lastTokenRequest()?.auth, "none");
});

test("[PROV-microsoft-tenant-login] a single-tenant login uses that tenant's endpoints and issuer", async () => {
  const { provider } = await startEntra();
  const store = new MemoryCredentialStore();
  const { browse, seen } = browser();
  const record = await login({ provider: provider(TID), flow: "browser", store, openUrl: browse });
  assert.equal(seen.url?.pathname, `/${TID}/oauth2/v2.0/authorize`);
  assert.equal(record.issuer, `${LOGIN}/${TID}/v2.0`);
  assert.equal(record.subject, OID);
});

test("[PROV-microsoft-graph-account] without openid there is no ID token: the account comes from Graph /me", async () => {
  const { sim } = await startEntra();
  const store = new MemoryCredentialStore();
  const record = await login({
    provider: microsoft({
      clientId: sim.clientId,
      scope: "offline_access https://graph.microsoft.com/User.Read",
      origins: { [LOGIN]: sim.url, "https://graph.microsoft.com": sim.url },
    }),
    flow: "browser",
    store,
    openUrl: browser().browse,
  });
  assert.equal(record.subject, OID);
  assert.equal(record.account.login, "alice@contoso.onmicrosoft.com");
  assert.equal(record.account.email, "alice@contoso.com");
  assert.equal(sim.stats().accountCalls, 1);
});

test("[PROV-microsoft-refresh-rotates] a confidential app's refresh sends client_secret in the body and stores the rotated refresh token", async () => {
  const { sim, provider } = await startEntra({ clientType: "confidential" });
  const store = new MemoryCredentialStore();
  const first = await login({
    provider: provider(),
    flow: "browser",
    store,
    openUrl: browser().browse,
  });
  assert.equal(first.tokens.clientSecret?.reveal(), sim.clientSecret);
  await store.put({ ...first, expiresAt: Date.now() - 1000 });
  const refresher = new TokenRefresher({ store, providers: resolveProvider });
  const tokens = await Promise.all(
    Array.from({ length: 10 }, () => refresher.getAccessToken(first)),
  );
  assert.equal(new Set(tokens.map((t) => t.reveal())).size, 1);
  assert.equal(sim.stats().refreshGrants, 1);
  assert.equal(sim.lastTokenRequest()?.auth, "post");
  const stored = await store.get(first);
  assert.notEqual(stored?.tokens.refreshToken?.reveal(), first.tokens.refreshToken?.reveal());
  assert.equal(stored?.subject, OID);
  assert.ok(sim.isActive(tokens[0]?.reveal() ?? ""));
});

test("[PROV-microsoft-refresh-expired] an expired refresh token (invalid_grant AADSTS700082) marks the credential login_required", async () => {
  const { sim, provider } = await startEntra();
  const store = new MemoryCredentialStore();
  const first = await login({
    provider: provider(),
    flow: "browser",
    store,
    openUrl: browser().browse,
  });
  sim.advanceTime(91 * 86400);
  await store.put({ ...first, expiresAt: Date.now() - 1000 });
  const refresher = new TokenRefresher({ store, providers: resolveProvider });
  const error = await failure(refresher.getAccessToken(first));
  assert.equal(error.code, "login_required");
  assertNoSecret(error, [first.tokens.refreshToken?.reveal()]);
  assert.equal((await store.get(first))?.status, "login_required");
});

test("[PROV-microsoft-device-login] a device login polls until approved and stores the account", async () => {
  const { sim, provider } = await startEntra();
  const store = new MemoryCredentialStore();
  const record = await login({
    provider: provider("organizations"),
    flow: "device",
    store,
    onDevicePrompt: (prompt) => {
      assert.equal(prompt.verificationUri, "https://microsoft.com/devicelogin");
      sim.approveDevice(prompt.userCode);
    },
  });
  assert.equal(record.issuer, `${LOGIN}/organizations/v2.0`);
  assert.equal(record.subject, OID);
  assert.ok(record.tokens.refreshToken);
});

test("[PROV-microsoft-device-declined] authorization_declined on the device flow is a typed access_denied, nothing stored", async () => {
  const { sim, provider } = await startEntra();
  const store = new MemoryCredentialStore();
  const error = await failure(
    login({
      provider: provider(),
      flow: "device",
      store,
      onDevicePrompt: (prompt) => sim.denyDevice(prompt.userCode),
    }),
  );
  assert.equal(error.code, "access_denied");
  assert.equal((await store.list()).length, 0);
});

test("[PROV-microsoft-logout-no-api] logout deletes locally and says where to remove the app (no revocation API)", async () => {
  const { provider } = await startEntra();
  const store = new MemoryCredentialStore();
  const record = await login({
    provider: provider(),
    flow: "browser",
    store,
    openUrl: browser().browse,
  });
  const result = await logout({ store, key: record, providers: resolveProvider });
  assert.equal(result.revoked, false);
  assert.equal(result.deleted, true);
  assert.equal(result.manageUrl, "https://myapps.microsoft.com");
  assert.equal(microsoft({ clientId: "x", tenant: "consumers" }).revocation.kind, "none");
});

const hostile = [
  { fault: "html", code: "server_error", name: "a 502 HTML page" },
  { fault: "no_token", code: "invalid_response", name: "200 without a token" },
  { fault: "rate_limit", code: "rate_limited", name: "a 429 (AADSTS90055)" },
] as const;
for (const { fault, code, name } of hostile) {
  test(`[PROV-microsoft-hostile-${fault}] the token endpoint answering ${name} fails the login with ${code}, stores nothing, leaks nothing`, async () => {
    const { sim, provider } = await startEntra({ clientType: "confidential" });
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

test("[PROV-microsoft-denied] a declined consent fails the login with access_denied and stores nothing", async () => {
  const { sim, provider } = await startEntra();
  sim.deny = true;
  const store = new MemoryCredentialStore();
  const error = await failure(
    login({ provider: provider(), flow: "browser", store, openUrl: browser().browse }),
  );
  assert.equal(error.code, "access_denied");
  assert.equal((await store.list()).length, 0);
});

test("[PROV-microsoft-issuer-rules] the ID token issuer per tenant configuration, with organizations/consumers restricted", () => {
  const work = { tid: TID };
  const personal = { tid: CONSUMERS_TID };
  assert.equal(expectedIssuer("common", work), `${LOGIN}/${TID}/v2.0`);
  assert.equal(expectedIssuer("common", personal), `${LOGIN}/${CONSUMERS_TID}/v2.0`);
  assert.equal(expectedIssuer(TID, { tid: CONSUMERS_TID }), `${LOGIN}/${TID}/v2.0`);
  assert.equal(expectedIssuer("contoso.onmicrosoft.com", work), `${LOGIN}/${TID}/v2.0`);
  assert.equal(expectedIssuer("organizations", work), `${LOGIN}/${TID}/v2.0`);
  assert.throws(() => expectedIssuer("organizations", personal), {
    code: "provider_account_refused",
  });
  assert.equal(expectedIssuer("consumers", personal), `${LOGIN}/${CONSUMERS_TID}/v2.0`);
  assert.throws(() => expectedIssuer("consumers", work), { code: "provider_account_refused" });
  // A tid that is not a GUID is never pasted into the expected issuer.
  for (const tid of [undefined, "", "evil/v2.0", `${TID}/x`, 42]) {
    assert.throws(() => expectedIssuer("common", { tid }), { code: "provider_response_invalid" });
  }
});

test("[PROV-microsoft-tenant-option] tenants accepted and refused; issuer identifiers recognised", () => {
  assert.equal(checkTenant(undefined), "common");
  assert.equal(checkTenant("Organizations"), "organizations");
  assert.equal(checkTenant(TID.toUpperCase()), TID);
  assert.equal(checkTenant("contoso.onmicrosoft.com"), "contoso.onmicrosoft.com");
  for (const bad of ["", "../common", "a b", "x".repeat(300), "common/v2.0"]) {
    assert.throws(() => microsoft({ clientId: "x", tenant: bad }), {
      code: "provider_option_invalid",
    });
  }
  assert.deepEqual(presetForIssuer(`${LOGIN}/${TID}/v2.0`)?.options, { tenant: TID });
  assert.deepEqual(presetForIssuer(`${LOGIN}/common/v2.0/`)?.options, { tenant: "common" });
  assert.deepEqual(presetForIssuer(`${LOGIN}/{tenantid}/v2.0`)?.options, { tenant: "common" });
  assert.equal(presetForIssuer(`${LOGIN}/common/oauth2/v2.0/token`), undefined);
  assert.equal(presetForIssuer("https://login.example.com/common/v2.0"), undefined);
  const rebuilt = resolveProvider(microsoft({ clientId: "x", tenant: TID }).ref, { clientId: "x" });
  assert.equal(rebuilt.issuer, `${LOGIN}/${TID}/v2.0`);
});
