/**
 * Review #1: a stored credential's provider reference is rebuilt into a provider whose issuer must be the record's
 * issuer; otherwise a row whose issuer and provider disagree would send its tokens to another server.
 */

import assert from "node:assert/strict";
import { after, test } from "node:test";
import { login, logout, TokenRefresher } from "../../src/oauth/index.ts";
import { github, resolveProvider } from "../../src/providers/index.ts";
import { MemoryCredentialStore } from "../../src/vault/index.ts";
import { startGitHubSimulator } from "../sims/github.ts";

async function browse(url: URL): Promise<void> {
  const consent = await fetch(url, { redirect: "manual" });
  const location = consent.headers.get("location");
  assert.ok(location, `the simulator redirected (HTTP ${consent.status})`);
  await (await fetch(location)).text();
}

test("[REVIEW-1-provider-issuer-mismatch] logout and refresh refuse a record whose provider rebuilds to another issuer, sending nothing", async () => {
  const sim = await startGitHubSimulator({ appKind: "github_app" });
  after(() => sim.close());
  const store = new MemoryCredentialStore();
  const provider = github({
    clientId: sim.clientId,
    clientSecret: sim.clientSecret,
    host: sim.url,
    app: "github_app",
  });
  const record = await login({ provider, flow: "browser", store, openUrl: browse });
  const { id: _id, version: _v, createdAt: _c, updatedAt: _u, ...input } = record;
  const forged = await store.put({
    ...input,
    issuer: "https://other-server.example/oauth",
    expiresAt: Date.now() - 1000,
  });
  const refreshes = sim.stats().refreshGrants;

  const refresher = new TokenRefresher({ store, providers: resolveProvider });
  await assert.rejects(refresher.getAccessToken(forged), { code: "provider_issuer_mismatch" });
  assert.equal(sim.stats().refreshGrants, refreshes);

  const result = await logout({ store, key: forged, providers: resolveProvider });
  assert.equal(result.revoked, false);
  assert.equal(result.deleted, false);
  assert.equal((result.error as { code?: string } | undefined)?.code, "provider_issuer_mismatch");
  assert.match(result.error?.message ?? "", /other-server\.example/);
  assert.equal(sim.grantCount(), 1);
  assert.ok(sim.isActive(record.tokens.accessToken?.reveal() ?? ""));
});
