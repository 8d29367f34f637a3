/**
 * The engine with the GitHub preset against the GitHub simulator (test/sims/github.ts, written from GitHub's
 * docs): browser and device logins, the account, GitHub App refresh (single-use refresh tokens) and revocation.
 */

import assert from "node:assert/strict";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { after, test } from "node:test";
import { login, logout, TokenRefresher } from "../../src/oauth/index.ts";
import { github, resolveProvider } from "../../src/providers/index.ts";
import { MemoryCredentialStore } from "../../src/vault/index.ts";
import { startGitHubSimulator } from "../sims/github.ts";
import { browse } from "./support.ts";

/** Plays the browser: follows the authorization URL to the simulator, then its redirect to our loopback listener. */
test("[PROV-github-browser-login] a browser login stores the token, the GitHub login and the provider", async () => {
  const sim = await startGitHubSimulator();
  after(() => sim.close());
  const store = new MemoryCredentialStore();
  const provider = github({
    clientId: sim.clientId,
    clientSecret: sim.clientSecret,
    host: sim.url,
  });
  const record = await login({ provider, flow: "browser", store, openUrl: browse });
  assert.equal(record.issuer, `${sim.url}/login/oauth`);
  assert.equal(record.subject, "1001");
  assert.equal(record.account.login, "alice");
  assert.equal(record.account.label, "alice");
  assert.deepEqual(record.provider, {
    name: "github",
    options: { app: "oauth_app", host: sim.url },
  });
  assert.deepEqual(record.scopes, ["read:user"]);
  assert.equal(record.expiresAt, undefined);
  assert.equal(record.tokens.clientSecret?.reveal(), sim.clientSecret);
  assert.ok(sim.isActive(record.tokens.accessToken?.reveal() ?? ""));
  assert.equal(sim.lastTokenRequest()?.accept, "application/json");
});

test("[PROV-github-app-refresh-single-use] a GitHub App token is refreshed once by 50 callers, and the old refresh token is retired", async () => {
  const sim = await startGitHubSimulator({ appKind: "github_app" });
  after(() => sim.close());
  const store = new MemoryCredentialStore();
  const provider = github({
    clientId: sim.clientId,
    clientSecret: sim.clientSecret,
    host: sim.url,
    app: "github_app",
  });
  const first = await login({ provider, flow: "browser", store, openUrl: browse });
  assert.ok(first.tokens.refreshToken);
  await store.put({ ...first, expiresAt: Date.now() - 1000 });
  const refresher = new TokenRefresher({ store, providers: resolveProvider });
  const tokens = await Promise.all(
    Array.from({ length: 50 }, () => refresher.getAccessToken(first)),
  );
  assert.equal(new Set(tokens.map((t) => t.reveal())).size, 1);
  assert.equal(sim.stats().refreshGrants, 1);
  const after1 = await store.get(first);
  assert.notEqual(after1?.tokens.refreshToken?.reveal(), first.tokens.refreshToken?.reveal());
  assert.ok(sim.isActive(tokens[0]?.reveal() ?? ""));
});

test("[PROV-github-revoke] logout revokes the grant with GitHub's REST call, then deletes the credential", async () => {
  const sim = await startGitHubSimulator();
  after(() => sim.close());
  const store = new MemoryCredentialStore();
  const provider = github({
    clientId: sim.clientId,
    clientSecret: sim.clientSecret,
    host: sim.url,
  });
  const record = await login({ provider, flow: "browser", store, openUrl: browse });
  assert.equal(sim.grantCount(), 1);
  const result = await logout({ store, key: record, providers: resolveProvider });
  assert.equal(result.revoked, true, String(result.error));
  assert.equal(result.deleted, true);
  assert.equal(sim.grantCount(), 0);
  assert.equal(sim.isActive(record.tokens.accessToken?.reveal() ?? ""), false);
});

test("[PROV-github-device-slow-down] a device login meets slow_down, waits longer, and succeeds", async () => {
  const sim = await startGitHubSimulator({ deviceIntervalSeconds: 1 });
  after(() => sim.close());
  const store = new MemoryCredentialStore();
  const provider = github({ clientId: sim.clientId, host: sim.url });
  sim.slowDownNext(1);
  const polls: string[] = [];
  const record = await login({
    provider,
    flow: "device",
    store,
    onDevicePrompt: (prompt) => {
      assert.equal(prompt.verificationUri, `${sim.url}/login/device`);
      sim.approveDevice(prompt.userCode);
    },
    onPoll: (event) => polls.push(`${event.result}:${event.intervalSeconds}`),
  });
  assert.deepEqual(polls, ["slow_down:6"]);
  assert.equal(record.account.login, "alice");
  assert.equal(record.tokens.clientSecret, undefined);
});

test("[PROV-redirect-port] a fixed redirect port, for providers that match the registered redirect URI exactly", async () => {
  const sim = await startGitHubSimulator();
  after(() => sim.close());
  const probe = createServer();
  await new Promise<void>((resolve) => probe.listen(0, "127.0.0.1", resolve));
  const port = (probe.address() as AddressInfo).port;
  await new Promise((resolve) => probe.close(resolve));
  const store = new MemoryCredentialStore();
  const provider = github({
    clientId: sim.clientId,
    clientSecret: sim.clientSecret,
    host: sim.url,
  });
  let redirect: string | null = null;
  await login({
    provider,
    flow: "browser",
    store,
    redirectPort: port,
    openUrl: async (url) => {
      redirect = url.searchParams.get("redirect_uri");
      await browse(url);
    },
  });
  assert.equal(redirect, `http://127.0.0.1:${port}/callback`);
});
