/**
 * The RAP tool with the Slack preset (`providers: { slack: slack({ ... }) }`) end to end: a real runtime invokes, the
 * tool answers `oauth`, a browser walks auth_url through the consent page to the Slack simulator
 * (test/sims/slack.ts, written from docs.slack.dev) and back, the user token (nested in `authed_user`) lands in a
 * SQLite vault under the user, and the operation's result (the handler calls the simulator's `auth.test`) reaches
 * the runtime. Then token rotation, a refresh token Slack refuses, a rate limit (429 Retry-After), a denial,
 * disconnecting with `auth.revoke`, and secrets.
 */

import assert from "node:assert/strict";
import { after, test } from "node:test";
import { slack } from "../../src/providers/index.ts";
import {
  type OperationDefinition,
  TokenRejectedError,
  type ToolServer,
} from "../../src/rap/tool/index.ts";
import { type SlackSimulator, startSlackSimulator } from "../sims/slack.ts";
import { rewrite, type SignIn, type Stand, signIn, startStand } from "./tool-providers-fixture.ts";

const KEY = (userId: string) => ({ subject: userId, issuer: "https://slack.com", resource: "" });
const SCOPE = "users:read chat:write";

async function slackStand(tokenRotation = false): Promise<{ sim: SlackSimulator; stand: Stand }> {
  const sim = await startSlackSimulator({
    tokenRotation,
    retryAfterSeconds: 30,
    // The app's Redirect URL: the tool's redirect endpoint on loopback.
    redirectUrls: ["http://127.0.0.1/oauth/callback"],
  });
  after(() => sim.close());
  const holder: { tool?: ToolServer } = {};
  const stand = await startStand({
    providers: {
      slack: slack({
        clientId: sim.clientId,
        clientSecret: sim.clientSecret,
        scope: SCOPE,
        origins: { "https://slack.com": sim.url },
      }),
    },
    operations: operations(sim, holder),
  });
  holder.tool = stand.tool;
  return { sim, stand };
}

function operations(sim: SlackSimulator, holder: { tool?: ToolServer }): OperationDefinition[] {
  return [
    {
      name: "whoami",
      description: "Who the user is on Slack (auth.test).",
      inputSchema: { type: "object" },
      requiresAuth: "slack",
      handler: async ({ accessToken, signal }) => {
        const response = await fetch(`${sim.url}/api/auth.test`, {
          method: "POST",
          headers: { authorization: `Bearer ${accessToken?.reveal()}` },
          signal,
        });
        const answer = (await response.json()) as {
          ok: boolean;
          error?: string;
          user?: string;
          team?: string;
        };
        // Web API errors are HTTP 200 with ok:false; these mean the token is no good.
        if (
          !answer.ok &&
          ["invalid_auth", "token_expired", "token_revoked"].includes(answer.error ?? "")
        )
          throw new TokenRejectedError();
        return `Slack user ${answer.user} in ${answer.team}`;
      },
    },
    {
      name: "disconnect",
      description: "Removes the user's Slack connection.",
      inputSchema: { type: "object" },
      handler: async ({ userId }) => {
        const outcome = await (holder.tool as ToolServer).disconnect(userId ?? "", "slack");
        return `found ${outcome.found}, revoked ${outcome.revoked}, deleted ${outcome.deleted}`;
      },
    },
  ];
}

const RESULT = "Slack user alice in Simulated Workspace";

async function signedIn(stand: Stand, userId: string): Promise<SignIn> {
  const call = await stand.invoke(userId);
  const visit = await signIn(await stand.authUrl(call.id));
  assert.equal(await stand.result(call), RESULT);
  return visit;
}

test("[RAP-prov-slack-e2e] invoke → oauth message → consent → Slack (user_scope) → callback → user token stored per user (provider ref, login) → result", async () => {
  const { sim, stand } = await slackStand();
  const call = await stand.invoke("u-alice");
  const visit = await signIn(await stand.authUrl(call.id));
  assert.match(visit.consentPage, /Connect Slack to test-tools\?/);
  assert.match(visit.consentPage, new RegExp(`sign-in at ${new URL(sim.url).host}`));
  assert.match(
    visit.consentPage,
    /<dd>users:read, chat:write<\/dd>/,
    "Slack's user_scope is shown",
  );
  const p = visit.providerUrl;
  assert.equal(`${p.origin}${p.pathname}`, `${sim.url}/oauth/v2/authorize`);
  assert.equal(p.searchParams.get("user_scope"), "users:read,chat:write");
  assert.equal(p.searchParams.has("scope"), false, "no bot scopes");
  assert.equal(p.searchParams.get("code_challenge_method"), "S256");
  assert.equal(p.searchParams.get("redirect_uri"), `${stand.url}/oauth/callback`);
  assert.equal(visit.status, 200);
  assert.match(visit.page, /signed in to Slack as @alice/);

  assert.equal(await stand.result(call), RESULT);
  const record = await stand.store.get(KEY("u-alice"));
  assert.ok(record, "stored under the RAP user_id and Slack's issuer");
  assert.equal(record.provider?.name, "slack");
  assert.equal(record.provider?.options?.scope, SCOPE);
  assert.equal(record.account.login, "alice");
  assert.equal(record.account.organization, "Simulated Workspace");
  assert.deepEqual(record.scopes, ["users:read", "chat:write"]);
  assert.match(
    record.tokens.accessToken?.reveal() ?? "",
    /^xoxp-/,
    "the user token, not a bot token",
  );
  assert.equal(sim.lastTokenRequest()?.auth, "basic");
  assert.match(stand.logs.join("\n"), /"account_sub":"T0SIMTEAM1:U0SIMALICE"/);

  const again = await stand.invoke("u-alice");
  assert.equal(await stand.result(again), RESULT);
  assert.equal(stand.authorizations(), 1, "the same user needs no new authorization");
  assert.equal(sim.stats().codeExchanges, 1);
});

test("[RAP-prov-slack-rotation] with token rotation, an expired token is refreshed once for concurrent calls; the used refresh token is retired", async () => {
  const { sim, stand } = await slackStand(true);
  await signedIn(stand, "u-alice");
  const before = await stand.store.get(KEY("u-alice"));
  assert.match(before?.tokens.accessToken?.reveal() ?? "", /^xoxe\./, "a rotating token");
  assert.ok(before?.tokens.refreshToken && before.expiresAt);
  sim.advanceTime(43_200 + 1);
  await rewrite(stand.store, KEY("u-alice"));
  const calls = await Promise.all([1, 2, 3].map(() => stand.invoke("u-alice")));
  for (const call of calls) assert.equal(await stand.result(call), RESULT);
  assert.equal(sim.stats().refreshGrants, 1);
  assert.equal(stand.authorizations(), 1, "no new sign-in");
  const after1 = await stand.store.get(KEY("u-alice"));
  assert.notEqual(after1?.tokens.refreshToken?.reveal(), before.tokens.refreshToken?.reveal());
  assert.equal(after1?.account.login, "alice");
});

test("[RAP-prov-slack-refresh-refused] a refresh token Slack refuses (invalid_refresh_token) leads to a new oauth message, not an error", async () => {
  const { sim, stand } = await slackStand(true);
  await signedIn(stand, "u-alice");
  const record = await stand.store.get(KEY("u-alice"));
  // Another copy of the grant spends the refresh token first (Slack retires it on use).
  const spent = await fetch(`${sim.url}/api/oauth.v2.access`, {
    method: "POST",
    headers: {
      authorization: `Basic ${Buffer.from(`${sim.clientId}:${sim.clientSecret}`).toString("base64")}`,
      "content-type": "application/x-www-form-urlencoded",
    },
    body: new URLSearchParams({
      grant_type: "refresh_token",
      refresh_token: record?.tokens.refreshToken?.reveal() ?? "",
    }),
  });
  assert.equal(((await spent.json()) as { ok: boolean }).ok, true);
  sim.advanceTime(43_200 + 1);
  await rewrite(stand.store, KEY("u-alice"));
  const call = await stand.invoke("u-alice");
  const authUrl = await stand.authUrl(call.id);
  assert.equal((await stand.store.get(KEY("u-alice")))?.status, "login_required");
  await signIn(authUrl);
  assert.equal(await stand.result(call), RESULT, "signing in again completes the call");
});

test("[RAP-prov-slack-rate-limited] a 429 with Retry-After on refresh ends the call with an error saying when to retry", async () => {
  const { sim, stand } = await slackStand(true);
  await signedIn(stand, "u-alice");
  sim.advanceTime(43_200 + 1);
  await rewrite(stand.store, KEY("u-alice"));
  sim.failNext("rate_limit");
  const call = await stand.invoke("u-alice");
  const text = await stand.result(call);
  assert.match(text, /^Error: Slack is limiting requests right now \(rate limit\)/);
  assert.match(text, /Retry in 30 s; you do not need to sign in again\./);
  assert.equal(stand.authorizations(), 1, "no oauth message");
  assert.equal((await stand.store.get(KEY("u-alice")))?.status, "active");
});

test("[RAP-prov-slack-denied] a denial at Slack ends the call with an error result; nothing is stored", async () => {
  const { sim, stand } = await slackStand();
  sim.setBehaviour({ deny: true });
  const call = await stand.invoke("u-alice");
  const visit = await signIn(await stand.authUrl(call.id));
  assert.equal(visit.callback.searchParams.get("error"), "access_denied");
  assert.match(await stand.result(call), /^Error: Slack authorization was denied by the user/);
  assert.deepEqual(await stand.store.list(), []);
  assert.equal(sim.stats().codeExchanges, 0);
});

test("[RAP-prov-slack-disconnect-no-secrets] disconnecting revokes with auth.revoke and deletes; no secret in results, auth_urls, logs or the vault's files", async () => {
  const { sim, stand } = await slackStand(true);
  const visit = await signedIn(stand, "u-alice");
  const record = await stand.store.get(KEY("u-alice"));
  const secrets = {
    code: visit.callback.searchParams.get("code") ?? "",
    state: visit.providerUrl.searchParams.get("state") ?? "",
    clientSecret: sim.clientSecret,
    accessToken: record?.tokens.accessToken?.reveal() ?? "",
    refreshToken: record?.tokens.refreshToken?.reveal() ?? "",
  };
  for (const [name, value] of Object.entries(secrets)) assert.ok(value.length >= 16, name);
  const vault = stand.vaultBytes();
  assert.ok(vault.includes(Buffer.from("Simulated Workspace")), "positive control: clear fields");

  assert.equal(sim.grantCount(), 1);
  const call = await stand.invoke("u-alice", "disconnect");
  assert.equal(await stand.result(call), "found true, revoked true, deleted true");
  assert.equal(sim.grantCount(), 0);
  assert.equal(sim.isActive(secrets.accessToken), false);
  assert.equal(await stand.store.get(KEY("u-alice")), undefined);

  const logs = stand.logs.join("\n");
  const results = stand.results().join("\n");
  const authUrls = stand.authUrls().join("\n");
  assert.match(logs, /"event":"rap.oauth.disconnected"/);
  assert.match(results, /Slack user alice/);
  for (const [name, value] of Object.entries(secrets)) {
    assert.ok(!logs.includes(value), `${name} in a log line`);
    assert.ok(!results.includes(value), `${name} in a result`);
    assert.ok(!authUrls.includes(value), `${name} in an auth_url`);
    assert.ok(!vault.includes(Buffer.from(value)), `${name} in the vault's files in clear`);
  }
});
