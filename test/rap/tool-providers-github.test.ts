/**
 * The RAP tool with the GitHub preset (`providers: { github: github({ ... }) }`) end to end: a real runtime invokes,
 * the tool answers `oauth`, a browser walks auth_url through the consent page to the GitHub simulator
 * (test/sims/github.ts, written from docs.github.com) and back, the tokens land in a SQLite vault under the user,
 * and the operation's result (the handler calls the simulator's REST `GET /user`) reaches the runtime. Then GitHub
 * App refresh, a refused refresh token, a rate-limited refresh, a denial, disconnecting, and secrets.
 */

import assert from "node:assert/strict";
import { test } from "node:test";
import { Secret } from "../../src/core/index.ts";
import { github } from "../../src/providers/index.ts";
import { createToolServer, type OperationDefinition } from "../../src/rap/tool/index.ts";
import { MemoryCredentialStore } from "../../src/vault/index.ts";
import { rewrite, signIn } from "./tool-providers-fixture.ts";
import { expire, githubStand, ISSUER, signedIn } from "./tool-providers-github-stand.ts";

test("[RAP-prov-github-e2e] invoke → oauth message → consent → GitHub → callback → tokens stored per user (provider ref, login) → result", async () => {
  const { sim, stand } = await githubStand();
  const call = await stand.invoke("u-alice");
  const authUrl = new URL(await stand.authUrl(call.id));
  assert.equal(authUrl.origin, new URL(stand.url).origin, "auth_url is the tool's consent page");

  const visit = await signIn(authUrl.href);
  assert.match(visit.consentPage, /Connect GitHub to test-tools\?/);
  assert.match(visit.consentPage, new RegExp(`sign-in at ${new URL(sim.url).host}`));
  assert.match(visit.consentPage, /<dd>read:user<\/dd>/, "the preset's default scope is shown");
  const p = visit.providerUrl;
  assert.equal(`${p.origin}${p.pathname}`, `${sim.url}/login/oauth/authorize`);
  assert.equal(p.searchParams.get("client_id"), sim.clientId);
  assert.equal(p.searchParams.get("scope"), "read:user");
  assert.equal(p.searchParams.get("code_challenge_method"), "S256");
  assert.equal(p.searchParams.get("redirect_uri"), `${stand.url}/oauth/callback`);
  assert.equal(visit.status, 200);
  assert.match(visit.page, /signed in to GitHub as @alice \(Alice Liddell/);

  assert.equal(await stand.result(call), "GitHub user alice (1001)");
  const record = await stand.store.get({ subject: "u-alice", issuer: ISSUER, resource: "" });
  assert.ok(record, "stored under the RAP user_id and GitHub's issuer");
  assert.equal(record.provider?.name, "github");
  assert.equal(record.provider?.options?.app, "oauth_app");
  assert.deepEqual(JSON.parse(record.provider?.options?.origins ?? "{}"), {
    "https://github.com": sim.url,
    "https://api.github.com": sim.url,
  });
  assert.equal(record.account.login, "alice");
  assert.equal(record.account.label, "alice");
  assert.equal(record.account.name, "Alice Liddell");
  assert.deepEqual(record.scopes, ["read:user"]);
  assert.equal(record.clientId, sim.clientId);
  assert.equal(record.tokens.clientSecret?.reveal(), sim.clientSecret, "sealed with the tokens");
  assert.ok(sim.isActive(record.tokens.accessToken?.reveal() ?? ""));
  assert.equal(sim.lastTokenRequest()?.accept, "application/json");
  assert.equal(sim.stats().codeExchanges, 1);

  const again = await stand.invoke("u-alice");
  assert.equal(await stand.result(again), "GitHub user alice (1001)");
  assert.equal(stand.authorizations(), 1, "the same user needs no new authorization");
  const other = await stand.invoke("u-bob");
  assert.match(await stand.authUrl(other.id), /\/oauth\/start\?consent=/, "tokens are per user_id");
  assert.equal(sim.stats().codeExchanges, 1);
});

test("[RAP-prov-github-app-refresh] a GitHub App token past expiry is refreshed once for concurrent calls, with the tool's configured client", async () => {
  const { sim, stand } = await githubStand("github_app");
  await signedIn(stand, "u-alice");
  const before = await stand.store.get({ subject: "u-alice", issuer: ISSUER, resource: "" });
  assert.ok(
    before?.tokens.refreshToken && before.expiresAt,
    "GitHub App tokens expire and refresh",
  );
  // 8 hours later at GitHub too: the old access token is dead there, not only in our record.
  sim.advanceTime(28_800 + 1);
  // A stale client secret sealed in the record must not matter: the tool refreshes with its configured client.
  await rewrite(stand.store, { subject: "u-alice", issuer: ISSUER, resource: "" }, (input) => ({
    ...input,
    expiresAt: Date.now() - 1000,
    tokens: { ...input.tokens, clientSecret: new Secret("stale") },
  }));
  const authorizations = stand.authorizations();

  const calls = await Promise.all([1, 2, 3, 4, 5].map(() => stand.invoke("u-alice")));
  for (const call of calls) assert.equal(await stand.result(call), "GitHub user alice (1001)");
  assert.equal(sim.stats().refreshGrants, 1, "exactly one refresh");
  assert.equal(stand.authorizations(), authorizations, "no new sign-in");
  // GitHub checks the client secret on this refresh: it succeeding shows the configured one was sent.
  assert.equal(sim.lastTokenRequest()?.auth, "post");

  const after1 = await stand.store.get({ subject: "u-alice", issuer: ISSUER, resource: "" });
  assert.notEqual(after1?.tokens.refreshToken?.reveal(), before.tokens.refreshToken?.reveal());
  assert.ok((after1?.expiresAt ?? 0) > Date.now(), "the new expiry is stored");
  assert.equal(after1?.account.login, "alice", "the display fields survive the refresh");
});

test("[RAP-prov-github-refresh-refused] a refresh token GitHub refuses (bad_refresh_token) leads to a new oauth message, not an error", async () => {
  const { sim, stand } = await githubStand("github_app");
  await signedIn(stand, "u-alice");
  // Six months on: the access token and the refresh token have both expired at GitHub.
  sim.advanceTime(15_897_600 + 1);
  await expire(stand, "u-alice");
  const call = await stand.invoke("u-alice");
  const authUrl = await stand.authUrl(call.id);
  assert.equal(sim.stats().refreshGrants, 1, "the refresh was tried");
  const marked = await stand.store.get({ subject: "u-alice", issuer: ISSUER, resource: "" });
  assert.equal(marked?.status, "login_required");
  await signIn(authUrl);
  assert.equal(
    await stand.result(call),
    "GitHub user alice (1001)",
    "signing in again completes it",
  );
  const renewed = await stand.store.get({ subject: "u-alice", issuer: ISSUER, resource: "" });
  assert.equal(renewed?.status, "active");
});

test("[RAP-prov-github-rate-limited] a rate-limited refresh ends the call with an error saying to retry later; the grant is kept", async () => {
  const { sim, stand } = await githubStand("github_app");
  await signedIn(stand, "u-alice");
  sim.advanceTime(28_800 + 1);
  await expire(stand, "u-alice");
  const authorizations = stand.authorizations();
  const requests = sim.stats().tokenRequests;
  sim.failNext("rate_limit");
  const call = await stand.invoke("u-alice");
  const text = await stand.result(call);
  assert.match(text, /^Error: GitHub is limiting requests right now \(rate limit\)/);
  assert.match(text, /Retry in \d+ (s|min); you do not need to sign in again\./);
  assert.equal(stand.authorizations(), authorizations, "no oauth message");
  const kept = await stand.store.get({ subject: "u-alice", issuer: ISSUER, resource: "" });
  assert.equal(kept?.status, "active", "a rate limit does not cost the grant");
  const retried = await stand.invoke("u-alice");
  assert.equal(await stand.result(retried), "GitHub user alice (1001)", "a later retry works");
  assert.equal(sim.stats().tokenRequests, requests + 2, "one refused, one refresh");
  assert.equal(sim.stats().refreshGrants, 1);
});

test("[RAP-prov-github-denied] a denial at GitHub ends the call with an error result; nothing is stored", async () => {
  const { sim, stand } = await githubStand();
  sim.setBehaviour({ deny: true });
  const call = await stand.invoke("u-alice");
  const visit = await signIn(await stand.authUrl(call.id));
  assert.equal(visit.callback.searchParams.get("error"), "access_denied");
  assert.match(visit.page, /Access to GitHub was not granted/);
  assert.match(await stand.result(call), /^Error: GitHub authorization was denied by the user/);
  assert.equal(
    await stand.store.get({ subject: "u-alice", issuer: ISSUER, resource: "" }),
    undefined,
  );
  assert.deepEqual(await stand.store.list(), []);
  assert.equal(sim.stats().codeExchanges, 0);
});

test("[RAP-prov-github-disconnect] disconnecting revokes the grant at GitHub (DELETE /applications/{client_id}/grant) and deletes the credential", async () => {
  const { sim, stand } = await githubStand();
  await signedIn(stand, "u-alice");
  const record = await stand.store.get({ subject: "u-alice", issuer: ISSUER, resource: "" });
  const token = record?.tokens.accessToken?.reveal() ?? "";
  assert.equal(sim.grantCount(), 1);
  const call = await stand.invoke("u-alice", "disconnect");
  assert.equal(await stand.result(call), "found true, revoked true, deleted true");
  assert.equal(sim.stats().revocations, 1);
  assert.equal(sim.grantCount(), 0);
  assert.equal(sim.isActive(token), false, "GitHub no longer accepts the token");
  assert.equal(
    await stand.store.get({ subject: "u-alice", issuer: ISSUER, resource: "" }),
    undefined,
  );
  const next = await stand.invoke("u-alice");
  assert.match(
    await stand.authUrl(next.id),
    /\/oauth\/start\?consent=/,
    "the next call asks again",
  );
  assert.match(stand.logs.join("\n"), /"event":"rap.oauth.disconnected"/);
});

test("[RAP-prov-github-no-secrets] no token, code, state or client secret in any result, auth_url, log line or the vault's files", async () => {
  const { sim, stand } = await githubStand("github_app");
  const call = await stand.invoke("u-alice");
  const visit = await signIn(await stand.authUrl(call.id));
  const code = visit.callback.searchParams.get("code") ?? "";
  await stand.result(call);
  sim.advanceTime(28_800 + 1);
  await expire(stand, "u-alice");
  await stand.result(await stand.invoke("u-alice"));
  const record = await stand.store.get({ subject: "u-alice", issuer: ISSUER, resource: "" });
  const secrets = {
    code,
    clientSecret: sim.clientSecret,
    accessToken: record?.tokens.accessToken?.reveal() ?? "",
    refreshToken: record?.tokens.refreshToken?.reveal() ?? "",
    state: visit.providerUrl.searchParams.get("state") ?? "",
  };
  for (const [name, value] of Object.entries(secrets)) assert.ok(value.length >= 16, name);
  const logs = stand.logs.join("\n");
  const results = stand.results().join("\n");
  const authUrls = stand.authUrls().join("\n");
  const vault = stand.vaultBytes();
  // Positive controls: what is looked in is the real thing.
  assert.match(logs, /"event":"rap.oauth.authorized".*"account_login":"alice"/);
  assert.match(results, /GitHub user alice/);
  assert.ok(vault.includes(Buffer.from("alice")), "the display fields are in the vault in clear");
  for (const [name, value] of Object.entries(secrets)) {
    assert.ok(!logs.includes(value), `${name} in a log line`);
    assert.ok(!results.includes(value), `${name} in a result`);
    assert.ok(!authUrls.includes(value), `${name} in an auth_url`);
    assert.ok(!vault.includes(Buffer.from(value)), `${name} in the vault's files in clear`);
  }
  assert.ok(!JSON.stringify(record?.provider).includes(sim.clientSecret), "the stored ref");
});

test("[RAP-prov-config] presets and discovery configs side by side; a preset without a browser flow or an http issuer is refused at startup", () => {
  const preset = github({ clientId: "Iv1.x" });
  const op = (provider: string): OperationDefinition => ({
    name: `op_${provider}`,
    description: "x",
    inputSchema: { type: "object" },
    requiresAuth: provider,
    handler: () => "x",
  });
  const base = { toolset: { name: "t" }, store: new MemoryCredentialStore() };
  assert.throws(
    () =>
      createToolServer({
        ...base,
        providers: { github: { ...preset, flows: ["device"] as const } },
        operations: [op("github")],
      }),
    { code: "provider_flow_unsupported" },
  );
  assert.throws(
    () =>
      createToolServer({
        ...base,
        providers: { demo: { issuer: "http://as.example", client: { clientId: "c" } } },
        operations: [op("demo")],
      }),
    { code: "insecure_url" },
  );
  const tool = createToolServer({
    ...base,
    publicBaseUrl: "https://tool.example",
    providers: {
      github: preset,
      demo: { issuer: "https://as.example", client: { clientId: "c" } },
    },
    operations: [op("github"), op("demo")],
  });
  assert.deepEqual(
    tool.toolset().tools.map((t) => t.annotations?.requiresAuth),
    ["github", "demo"],
  );
});
