/**
 * Review #2: Microsoft Entra's v2.0 endpoints refuse RFC 8707's `resource` (AADSTS901002), so a preset whose docs
 * do not mention RFC 8707 never sends it; the credential is still stored under the resource (the vault key) and
 * its refresh sends no `resource` either.
 */

import assert from "node:assert/strict";
import { after, test } from "node:test";
import { login, TokenRefresher } from "../../src/oauth/index.ts";
import { microsoft, resolveProvider } from "../../src/providers/index.ts";
import { LOGIN } from "../../src/providers/microsoft-tenant.ts";
import { MemoryCredentialStore } from "../../src/vault/index.ts";
import { startMicrosoftSimulator } from "../sims/microsoft.ts";

const RESOURCE = "https://mcp.example.com/mcp";

async function startEntra() {
  const sim = await startMicrosoftSimulator({ deviceIntervalSeconds: 1 });
  after(() => sim.close());
  const provider = microsoft({
    clientId: sim.clientId,
    origins: { [LOGIN]: sim.url, "https://graph.microsoft.com": sim.url },
  });
  return { sim, provider };
}

test("[REVIEW-2-microsoft-no-resource-browser] a browser login for a resource sends no resource parameter, stores the credential under it, and refreshes without it", async () => {
  const { provider } = await startEntra();
  assert.equal(provider.resourceIndicators, false);
  const store = new MemoryCredentialStore();
  let authorizeUrl: URL | undefined;
  const record = await login({
    provider,
    flow: "browser",
    store,
    resource: RESOURCE,
    openUrl: async (url) => {
      authorizeUrl = url;
      const consent = await fetch(url, { redirect: "manual" });
      const location = consent.headers.get("location");
      assert.ok(location, `the simulator redirected (HTTP ${consent.status})`);
      assert.equal(new URL(location).searchParams.get("error"), null, location);
      await (await fetch(location)).text();
    },
  });
  assert.equal(authorizeUrl?.searchParams.has("resource"), false);
  assert.equal(record.resource, RESOURCE);
  assert.ok(record.tokens.refreshToken);
  await store.put({ ...record, expiresAt: Date.now() - 1000 });
  const refresher = new TokenRefresher({ store, providers: resolveProvider });
  const token = await refresher.getAccessToken(record);
  assert.notEqual(token.reveal(), record.tokens.accessToken?.reveal());
  assert.equal((await store.get(record))?.resource, RESOURCE);
});

test("[REVIEW-2-microsoft-no-resource-device] a device login for several resources sends no resource parameter and stores under the first", async () => {
  const { sim, provider } = await startEntra();
  const store = new MemoryCredentialStore();
  const record = await login({
    provider,
    flow: "device",
    store,
    resource: RESOURCE,
    alsoResources: ["https://other.example.com/mcp"],
    onDevicePrompt: (prompt) => sim.approveDevice(prompt.userCode),
  });
  assert.equal(record.resource, RESOURCE);
  assert.ok(record.tokens.accessToken);
});

test("[REVIEW-2-mint-for-resource-unsupported] minting a token for another resource is refused for a provider without resource indicators, sending nothing", async () => {
  const { sim, provider } = await startEntra();
  const store = new MemoryCredentialStore();
  const record = await login({
    provider,
    flow: "device",
    store,
    resource: RESOURCE,
    onDevicePrompt: (prompt) => sim.approveDevice(prompt.userCode),
  });
  const before = (await store.get(record))?.tokens.refreshToken?.reveal();
  const refresher = new TokenRefresher({ store, providers: resolveProvider });
  await assert.rejects(refresher.mintForResource(record, "https://other.example.com/mcp"), {
    code: "resource_indicators_unsupported",
  });
  assert.equal((await store.get(record))?.tokens.refreshToken?.reveal(), before);
});
