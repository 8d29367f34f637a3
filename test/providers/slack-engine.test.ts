/**
 * The engine with the Slack preset against the Slack simulator (test/sims/slack.ts, written from Slack's docs):
 * a browser login asking for user scopes, rotation refresh, auth.revoke, and hostile answers from oauth.v2.access.
 */

import assert from "node:assert/strict";
import { after, test } from "node:test";
import { AgentAuthError } from "../../src/core/errors.ts";
import { createLogger } from "../../src/core/log.ts";
import { login, logout, normaliseTokenAnswer, TokenRefresher } from "../../src/oauth/index.ts";
import { resolveProvider, slack } from "../../src/providers/index.ts";
import { accountFromAnswer, slackScopes } from "../../src/providers/slack-api.ts";
import { MemoryCredentialStore } from "../../src/vault/index.ts";
import { type SlackFault, startSlackSimulator } from "../sims/slack.ts";
import { assertNoneLeaked as assertNoSecret, browser } from "./support.ts";

async function startSlack(options: Parameters<typeof startSlackSimulator>[0] = {}) {
  const sim = await startSlackSimulator(options);
  after(() => sim.close());
  const provider = (scope?: string) =>
    slack({
      clientId: sim.clientId,
      clientSecret: sim.clientSecret,
      scope,
      origins: { "https://slack.com": sim.url },
    });
  return { sim, provider };
}

/** No secret of the exchange appears anywhere in the error a caller (or a log line) sees. */
test("[PROV-slack-browser-login] a browser login asks for user_scope, stores the user token and the TEAM:USER account", async () => {
  const { sim, provider } = await startSlack();
  const store = new MemoryCredentialStore();
  const { browse, seen } = browser();
  const record = await login({
    provider: provider("users:read chat:write"),
    flow: "browser",
    store,
    openUrl: browse,
  });
  assert.equal(seen.url?.searchParams.get("user_scope"), "users:read,chat:write");
  assert.equal(seen.url?.searchParams.has("scope"), false, "no bot scope is asked for");
  assert.equal(seen.url?.searchParams.get("code_challenge_method"), "S256");
  assert.equal(record.issuer, "https://slack.com");
  assert.equal(record.subject, "T0SIMTEAM1:U0SIMALICE");
  assert.equal(record.account.login, "alice");
  assert.equal(record.account.organization, "Simulated Workspace");
  assert.deepEqual(record.scopes, ["users:read", "chat:write"]);
  assert.match(record.tokens.accessToken?.reveal() ?? "", /^xoxp-/);
  assert.equal(record.expiresAt, undefined);
  assert.equal(record.provider?.name, "slack");
  assert.equal(sim.lastTokenRequest()?.auth, "basic");
  assert.ok(sim.isActive(record.tokens.accessToken?.reveal() ?? ""));
});

test("[PROV-slack-rotation-refresh] with token rotation, TokenRefresher refreshes at oauth.v2.access once and retires the refresh token", async () => {
  const { sim, provider } = await startSlack({ tokenRotation: true });
  const store = new MemoryCredentialStore();
  const first = await login({
    provider: provider(),
    flow: "browser",
    store,
    openUrl: browser().browse,
  });
  assert.match(first.tokens.accessToken?.reveal() ?? "", /^xoxe\.xoxp-1-/);
  assert.ok(first.tokens.refreshToken);
  assert.ok(first.expiresAt);
  await store.put({ ...first, expiresAt: Date.now() - 1000 });
  const refresher = new TokenRefresher({ store, providers: resolveProvider });
  const tokens = await Promise.all(
    Array.from({ length: 20 }, () => refresher.getAccessToken(first)),
  );
  assert.equal(new Set(tokens.map((t) => t.reveal())).size, 1);
  assert.equal(sim.stats().refreshGrants, 1);
  assert.equal(sim.lastTokenRequest()?.grantType, "refresh_token");
  const stored = await store.get(first);
  assert.notEqual(stored?.tokens.refreshToken?.reveal(), first.tokens.refreshToken?.reveal());
  assert.deepEqual(stored?.scopes, ["users:read"]);
  assert.ok(sim.isActive(tokens[0]?.reveal() ?? ""));
});

test("[PROV-slack-refresh-revoked] a refresh token Slack no longer knows (invalid_refresh_token) marks the credential login_required", async () => {
  const { sim, provider } = await startSlack({ tokenRotation: true });
  const store = new MemoryCredentialStore();
  const first = await login({
    provider: provider(),
    flow: "browser",
    store,
    openUrl: browser().browse,
  });
  // Revoking at Slack (auth.revoke) retires the whole grant, refresh token included.
  await fetch(`${sim.url}/api/auth.revoke`, {
    method: "POST",
    headers: { authorization: `Bearer ${first.tokens.accessToken?.reveal()}` },
  });
  await store.put({ ...first, expiresAt: Date.now() - 1000 });
  const refresher = new TokenRefresher({ store, providers: resolveProvider });
  const error = await refresher.getAccessToken(first).then(
    () => assert.fail("the refresh succeeded"),
    (e: unknown) => e,
  );
  assert.ok(error instanceof AgentAuthError);
  assert.equal(error.code, "login_required");
  assertNoSecret(error, [first.tokens.refreshToken?.reveal(), sim.clientSecret]);
  assert.equal((await store.get(first))?.status, "login_required");
});

test("[PROV-slack-revoke] logout calls auth.revoke with the token, then deletes the credential", async () => {
  const { sim, provider } = await startSlack({ tokenRotation: true });
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
  // Signing out of a token Slack already revoked is not an error: there is nothing left to revoke.
  const again = await login({
    provider: provider(),
    flow: "browser",
    store,
    openUrl: browser().browse,
  });
  await fetch(`${sim.url}/api/auth.revoke`, {
    method: "POST",
    headers: { authorization: `Bearer ${again.tokens.accessToken?.reveal()}` },
  });
  const second = await logout({ store, key: again, providers: resolveProvider });
  assert.deepEqual(second.outcome, { refreshToken: "absent", accessToken: "absent" });
});

test("[PROV-slack-revoke-expired] logout with an expired rotating token refreshes it once, then revokes the grant", async () => {
  const { sim, provider } = await startSlack({ tokenRotation: true });
  const store = new MemoryCredentialStore();
  const record = await login({
    provider: provider(),
    flow: "browser",
    store,
    openUrl: browser().browse,
  });
  sim.advanceTime(43_200 + 60);
  assert.equal(sim.isActive(record.tokens.accessToken?.reveal() ?? ""), false);
  const result = await logout({ store, key: record, providers: resolveProvider });
  assert.equal(result.revoked, true, String(result.error));
  assert.deepEqual(result.outcome, { refreshToken: "revoked", accessToken: "revoked" });
  assert.equal(sim.stats().refreshGrants, 1);
  assert.equal(sim.stats().revocations, 1);
  assert.equal(sim.grantCount(), 0);
  assert.equal(result.deleted, true);
});

const hostile: { fault: SlackFault; code: string; name: string }[] = [
  { fault: "html", code: "server_error", name: "an HTML page with 503" },
  { fault: "html200", code: "invalid_response", name: "an HTML page with 200" },
  { fault: "no_token", code: "invalid_response", name: "ok:true without a token" },
  { fault: "rate_limit", code: "rate_limited", name: "a 429 with Retry-After" },
];
for (const { fault, code, name } of hostile) {
  test(`[PROV-slack-hostile-${fault}] oauth.v2.access answering ${name} fails the login with ${code}, stores nothing, leaks nothing`, async () => {
    const { sim, provider } = await startSlack();
    const store = new MemoryCredentialStore();
    const { browse, seen } = browser();
    sim.failNext(fault);
    const error = await login({
      provider: provider(),
      flow: "browser",
      store,
      openUrl: browse,
    }).then(
      () => assert.fail("the login succeeded"),
      (e: unknown) => e,
    );
    assert.ok(error instanceof AgentAuthError, String(error));
    assert.equal(error.code, code);
    if (fault === "rate_limit")
      assert.equal((error as { retryAfterMs?: number }).retryAfterMs, 30_000);
    assertNoSecret(error, [seen.code, sim.clientSecret]);
    assert.equal((await store.list()).length, 0);
  });
}

test("[PROV-slack-bot-token-not-the-person] an exchange answer whose authed_user carries no token (only a bot token at the top level) is invalid_response: no token stored as the person's", async () => {
  const { sim, provider } = await startSlack();
  const store = new MemoryCredentialStore();
  const { browse } = browser();
  // The authorization asks for bot scopes only (`scope`), as an app misconfigured for a bot would: Slack then
  // answers with the workspace's bot token at the top level and authed_user holding just the person's id.
  const botOnly = {
    ...provider("users:read"),
    scopeFormat: { parameter: "scope", separator: "," },
  };
  await assert.rejects(
    login({ provider: botOnly, flow: "browser", store, openUrl: browse }),
    (error: unknown) => {
      assert.equal((error as AgentAuthError).code, "invalid_response", String(error));
      return true;
    },
  );
  assert.equal((await store.list()).length, 0, "nothing stored");
  assert.equal(sim.stats().codeExchanges, 1, "the exchange happened and was refused");
});

test("[PROV-slack-bot-token-not-the-person] a flat (refresh) answer with token_type bot keeps no token; a user one is read as bearer", () => {
  // The Slack preset's token quirks (src/providers/slack.ts).
  const quirks = { nestedTokens: "authed_user", requireNested: true, bearerTokenType: true };
  const flat = (token_type: string) =>
    normaliseTokenAnswer(
      {
        status: 200,
        body: { ok: true, access_token: "xoxe.xoxb-1", token_type, expires_in: 43200 },
      },
      quirks,
    ).body;
  assert.equal(flat("bot").access_token, undefined);
  assert.deepEqual([flat("user").access_token, flat("user").token_type], ["xoxe.xoxb-1", "bearer"]);
});

test("[PROV-slack-denied] a person pressing Cancel fails the login with access_denied and stores nothing", async () => {
  const { provider } = await startSlack({ deny: true });
  const store = new MemoryCredentialStore();
  const error = await login({
    provider: provider(),
    flow: "browser",
    store,
    openUrl: browser().browse,
  }).then(
    () => assert.fail("the login succeeded"),
    (e: unknown) => e,
  );
  assert.ok(error instanceof AgentAuthError);
  assert.equal(error.code, "access_denied");
  assert.equal((await store.list()).length, 0);
});

test("[PROV-slack-wrong-secret] a wrong client secret (bad_client_secret, HTTP 200) is a typed token error without the secret", async () => {
  const { sim } = await startSlack();
  const store = new MemoryCredentialStore();
  const { browse, seen } = browser();
  const wrong = "0123456789abcdef0123456789abcdef";
  const provider = slack({
    clientId: sim.clientId,
    clientSecret: wrong,
    origins: { "https://slack.com": sim.url },
  });
  const error = await login({ provider, flow: "browser", store, openUrl: browse }).then(
    () => assert.fail("the login succeeded"),
    (e: unknown) => e,
  );
  assert.ok(error instanceof AgentAuthError);
  assert.equal(error.code, "token_endpoint_error");
  assert.match(error.message, /invalid_client/);
  assertNoSecret(error, [wrong, seen.code, sim.clientSecret]);
  assert.equal((await store.list()).length, 0);
});

test("[PROV-slack-account-fallback] when auth.test fails the account still comes from the exchange answer", async () => {
  const { sim, provider } = await startSlack();
  const store = new MemoryCredentialStore();
  sim.failAccountNext("rate_limit");
  const lines: string[] = [];
  const { browse, seen } = browser();
  const record = await login({
    provider: provider(),
    flow: "browser",
    store,
    openUrl: browse,
    logger: createLogger({ write: (line) => lines.push(line), level: "debug" }),
  });
  assert.equal(record.subject, "T0SIMTEAM1:U0SIMALICE");
  assert.equal(record.account.organization, "Simulated Workspace");
  // The log says the login happened and names no secret of it.
  const log = lines.join("\n");
  assert.match(log, /oauth\.login/);
  for (const secret of [record.tokens.accessToken?.reveal(), seen.code, sim.clientSecret]) {
    assert.ok(secret && !log.includes(secret), "a secret reached the log");
  }
});

test("[PROV-slack-parse] scope lists and the account in an exchange answer", () => {
  assert.equal(slackScopes("chat:write users:read"), "chat:write,users:read");
  assert.equal(slackScopes(" chat:write, ,users:read "), "chat:write,users:read");
  assert.deepEqual(
    accountFromAnswer({ authed_user: { id: "U1" }, team: { id: "T1", name: "Acme" } }),
    { subject: "T1:U1", organization: "Acme" },
  );
  // An org-wide (Enterprise Grid) install has no team: the enterprise qualifies the user.
  assert.deepEqual(
    accountFromAnswer({
      authed_user: { id: "W1" },
      team: null,
      enterprise: { id: "E1", name: "Org" },
    }),
    { subject: "E1:W1", organization: "Org" },
  );
  assert.deepEqual(accountFromAnswer({ team: { id: 7 } }), {
    subject: undefined,
    organization: undefined,
  });
  assert.deepEqual(accountFromAnswer({ authed_user: "U1", team: "T1" }), {
    subject: undefined,
    organization: undefined,
  });
});

test("[PROV-slack-ref] a stored Slack ref rebuilds the same provider, and https://slack.com is recognised", async () => {
  const { presetForIssuer } = await import("../../src/providers/index.ts");
  const provider = slack({ clientId: "1.2", clientSecret: "s", scope: "a b" });
  const rebuilt = resolveProvider(provider.ref, provider.client);
  assert.equal(rebuilt.defaultScope, "a b");
  assert.deepEqual(rebuilt.scopeFormat, { parameter: "user_scope", separator: "," });
  assert.equal(rebuilt.issuer, "https://slack.com");
  assert.equal(presetForIssuer("https://slack.com")?.preset.name, "slack");
  assert.equal(presetForIssuer("https://slack.com/api")?.preset.name, undefined);
});

test("[PROV-slack-login-scope-is-user-scope] a scope given to login() goes out as user_scope, never as Slack's bot scope", async () => {
  const { provider } = await startSlack();
  const store = new MemoryCredentialStore();
  const { browse, seen } = browser();
  const record = await login({
    provider: provider(),
    flow: "browser",
    store,
    scope: "users:read channels:read",
    openUrl: browse,
  });
  assert.equal(seen.url?.searchParams.get("user_scope"), "users:read,channels:read");
  assert.equal(seen.url?.searchParams.has("scope"), false);
  assert.deepEqual(record.scopes, ["users:read", "channels:read"]);
});
