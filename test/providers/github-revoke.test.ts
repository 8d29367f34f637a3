/**
 * Review #3 and #4: GitHub sign-out revokes one credential's token (REST "Delete an app token"), not the user's
 * whole grant, so other credentials of the same app and person keep working; and a GitHub App credential whose
 * access token has expired is refreshed first (the rotated tokens stored), so the revocation reaches a token
 * GitHub accepts and the refresh token does not stay live behind a "revoked" result.
 */

import assert from "node:assert/strict";
import { after, test } from "node:test";
import { login, logout } from "../../src/oauth/index.ts";
import { github, resolveProvider } from "../../src/providers/index.ts";
import { type CredentialKey, MemoryCredentialStore } from "../../src/vault/index.ts";
import { startGitHubSimulator } from "../sims/github.ts";
import { browse } from "./support.ts";

/** Remembers each record's refresh token as it is deleted, so the test can try it at GitHub afterwards. */
class WatchedStore extends MemoryCredentialStore {
  readonly deletedRefreshTokens: string[] = [];
  override async delete(key: CredentialKey): Promise<boolean> {
    const record = await this.get(key);
    const token = record?.tokens.refreshToken?.reveal();
    if (token) this.deletedRefreshTokens.push(token);
    return super.delete(key);
  }
}

/** A raw refresh grant at the simulator: whether GitHub still honours `refreshToken`. */
async function refreshWorks(
  sim: { url: string; clientId: string; clientSecret: string },
  refreshToken: string,
): Promise<boolean> {
  const answer = await fetch(`${sim.url}/login/oauth/access_token`, {
    method: "POST",
    headers: { accept: "application/json", "content-type": "application/x-www-form-urlencoded" },
    body: new URLSearchParams({
      grant_type: "refresh_token",
      refresh_token: refreshToken,
      client_id: sim.clientId,
      client_secret: sim.clientSecret,
    }),
  });
  const body = (await answer.json()) as { access_token?: string };
  return typeof body.access_token === "string";
}

test("[REVIEW-4-github-revoke-one-token] signing out of one credential leaves the same person's other credential of the app working", async () => {
  const sim = await startGitHubSimulator();
  after(() => sim.close());
  const store = new MemoryCredentialStore();
  const provider = github({
    clientId: sim.clientId,
    clientSecret: sim.clientSecret,
    host: sim.url,
  });
  const first = await login({ provider, flow: "browser", store, openUrl: browse });
  const second = await login({
    provider,
    flow: "browser",
    store,
    resource: "https://mcp.example.com/tools",
    openUrl: browse,
  });
  assert.notEqual(first.id, second.id);
  const result = await logout({ store, key: first, providers: resolveProvider });
  assert.equal(result.revoked, true, String(result.error));
  assert.equal(sim.isActive(first.tokens.accessToken?.reveal() ?? ""), false);
  assert.equal(sim.isActive(second.tokens.accessToken?.reveal() ?? ""), true);
  assert.ok(await store.get(second));
});

test("[REVIEW-3-github-app-expired-revoke] an expired GitHub App token is refreshed (stored) before revocation, and no refresh token stays live", async () => {
  const sim = await startGitHubSimulator({ appKind: "github_app" });
  after(() => sim.close());
  const store = new WatchedStore();
  const provider = github({
    clientId: sim.clientId,
    clientSecret: sim.clientSecret,
    host: sim.url,
    app: "github_app",
  });
  const record = await login({ provider, flow: "browser", store, openUrl: browse });
  const { id: _i, version: _v, createdAt: _c, updatedAt: _u, ...input } = record;
  await store.put({ ...input, expiresAt: Date.now() - 1000 });
  sim.advanceTime(9 * 3600); // past GitHub's 8 hours: GitHub no longer accepts the access token
  const result = await logout({ store, key: record, providers: resolveProvider });
  assert.equal(result.revoked, true, String(result.error));
  assert.equal(result.deleted, true);
  assert.equal(sim.stats().refreshGrants, 1);
  assert.equal(sim.grantCount(), 0);
  assert.equal(store.deletedRefreshTokens.length, 1);
  for (const token of [record.tokens.refreshToken?.reveal() ?? "", ...store.deletedRefreshTokens]) {
    assert.equal(await refreshWorks(sim, token), false, "a refresh token stayed live");
  }
});

test("[REVIEW-3-github-404-with-refresh-token] GitHub refusing an access token our clock thinks fresh: logout refreshes (stored) and revokes the new token instead of reporting the refused one revoked", async () => {
  const sim = await startGitHubSimulator({ appKind: "github_app" });
  after(() => sim.close());
  const store = new WatchedStore();
  const provider = github({
    clientId: sim.clientId,
    clientSecret: sim.clientSecret,
    host: sim.url,
    app: "github_app",
  });
  const record = await login({ provider, flow: "browser", store, openUrl: browse });
  // Our clock says fresh, GitHub's says expired (clock skew): GitHub answers 404 to the first deletion.
  sim.advanceTime(9 * 3600);
  const result = await logout({ store, key: record, providers: resolveProvider });
  assert.equal(result.revoked, true, String(result.error));
  assert.deepEqual(result.outcome, { refreshToken: "revoked", accessToken: "revoked" });
  assert.equal(sim.stats().refreshGrants, 1);
  assert.equal(sim.grantCount(), 0);
  for (const token of [record.tokens.refreshToken?.reveal() ?? "", ...store.deletedRefreshTokens]) {
    assert.equal(await refreshWorks(sim, token), false, "a refresh token stayed live");
  }
});

test("[REVIEW-3-github-revoked-on-site] a grant revoked on github.com: the refresh is refused, the credential is deleted, nothing claimed live", async () => {
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
  // The person revokes the app on GitHub's settings page (the simulator's own REST call stands in for it).
  const basic = Buffer.from(`${sim.clientId}:${sim.clientSecret}`).toString("base64");
  const removed = await fetch(`${sim.url}/api/v3/applications/${sim.clientId}/grant`, {
    method: "DELETE",
    headers: { authorization: `Basic ${basic}`, "content-type": "application/json" },
    body: JSON.stringify({ access_token: record.tokens.accessToken?.reveal() }),
  });
  assert.equal(removed.status, 204);
  const result = await logout({ store, key: record, providers: resolveProvider });
  assert.equal(result.revoked, true, String(result.error));
  assert.deepEqual(result.outcome, { refreshToken: "absent", accessToken: "absent" });
  assert.equal(result.deleted, true);
});
