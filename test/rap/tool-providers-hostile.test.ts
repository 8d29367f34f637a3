/**
 * The RAP tool with a provider preset when the provider misbehaves or the preset is not github.com: bad answers at
 * the code exchange (HTML, a 200 without a token, a rate limit), an account API that fails, a `Provider` the
 * catalog does not list (it must still refresh through the tool's configuration), and GitHub Enterprise Server.
 */

import assert from "node:assert/strict";
import { after, test } from "node:test";
import type { Provider } from "../../src/oauth/index.ts";
import { github } from "../../src/providers/index.ts";
import { startGitHubSimulator } from "../sims/github.ts";
import { signIn, startStand } from "./tool-providers-fixture.ts";
import { expire, githubStand, ISSUER, signedIn } from "./tool-providers-github-stand.ts";

test("[RAP-prov-hostile-exchange] HTML, a 200 without a token, or a rate limit at GitHub's token endpoint: an error result that says what to do, nothing stored, no secret", async () => {
  const { sim, stand } = await githubStand();
  const cases = [
    ["html200", /the sign-in service answered with something that is not a token response/],
    ["html", /the sign-in service could not be reached|not a token response/],
    ["no_token", /Signing in to GitHub did not complete \(/],
    ["rate_limit", /the sign-in service is limiting requests; wait a minute first/],
  ] as const;
  for (const [fault, expected] of cases) {
    sim.failNext(fault);
    const call = await stand.invoke("u-alice");
    const visit = await signIn(await stand.authUrl(call.id));
    assert.equal(visit.status, 400, `${fault}: the failure page`);
    assert.match(visit.page, /Signing in to GitHub did not complete/);
    const text = await stand.result(call);
    assert.match(text, /^Error: Signing in to GitHub did not complete \(/, fault);
    assert.match(text, expected, fault);
    assert.match(text, /Ask again to get a new sign-in link\.$/, fault);
    const code = visit.callback.searchParams.get("code") ?? "";
    assert.ok(code.length > 0);
    assert.ok(!text.includes(code) && !stand.logs.join("\n").includes(code), `${fault}: code`);
  }
  assert.deepEqual(await stand.store.list(), [], "nothing stored");
  assert.ok(!stand.logs.join("\n").includes(sim.clientSecret));
  // The same user can still sign in once GitHub behaves.
  await signedIn(stand, "u-alice");
});

test("[RAP-prov-account-unreadable] GitHub's account API failing costs the display fields, not the sign-in", async () => {
  const { sim, stand } = await githubStand();
  sim.failAccountNext("server_error");
  const call = await stand.invoke("u-alice");
  const visit = await signIn(await stand.authUrl(call.id));
  assert.equal(visit.status, 200);
  assert.match(visit.page, /You are signed in to GitHub\./, "no account to name");
  assert.equal(await stand.result(call), "GitHub user alice (1001)");
  const record = await stand.store.get({ subject: "u-alice", issuer: ISSUER, resource: "" });
  assert.equal(record?.status, "active");
  assert.equal(record?.account.login, undefined);
  assert.match(stand.logs.join("\n"), /"event":"oauth.account_unreadable"/);
});

test("[RAP-prov-custom-preset] a Provider the tool author wrote (not in the catalog) is stored under its own name and still refreshes", async () => {
  const custom = (preset: Provider): Provider => ({
    ...preset,
    name: "corp-github",
    displayName: "Corp GitHub",
    ref: { name: "corp-github", options: {} },
  });
  const { sim, stand } = await githubStand("github_app", custom);
  await signedIn(stand, "u-alice");
  const record = await stand.store.get({ subject: "u-alice", issuer: ISSUER, resource: "" });
  assert.deepEqual(record?.provider, { name: "corp-github", options: {} });
  sim.advanceTime(28_800 + 1);
  await expire(stand, "u-alice");
  const call = await stand.invoke("u-alice");
  assert.equal(await stand.result(call), "GitHub user alice (1001)");
  assert.equal(sim.stats().refreshGrants, 1, "refreshed through the configured preset");
  assert.equal(stand.authorizations(), 1);
});

test("[RAP-prov-github-ghes] GitHub Enterprise Server (host): the consent page names it and its host, the record its issuer and host", async () => {
  const sim = await startGitHubSimulator({ callbackUrl: "http://127.0.0.1/oauth/callback" });
  after(() => sim.close());
  const preset = github({ clientId: sim.clientId, clientSecret: sim.clientSecret, host: sim.url });
  const stand = await startStand({
    providers: { ghes: preset },
    operations: [
      {
        name: "whoami",
        description: "Who the user is on GitHub Enterprise (REST under /api/v3).",
        inputSchema: { type: "object" },
        requiresAuth: "ghes",
        handler: async ({ accessToken }) => {
          const response = await fetch(`${sim.url}/api/v3/user`, {
            headers: { authorization: `Bearer ${accessToken?.reveal()}` },
          });
          return `GHES user ${((await response.json()) as { login: string }).login}`;
        },
      },
    ],
  });
  const call = await stand.invoke("u-alice");
  const visit = await signIn(await stand.authUrl(call.id));
  const host = new URL(sim.url).host;
  assert.match(
    visit.consentPage,
    new RegExp(`Connect GitHub Enterprise \\(${host}\\) to test-tools\\?`),
  );
  assert.match(visit.consentPage, new RegExp(`sign-in at ${host}`));
  assert.equal(await stand.result(call), "GHES user alice");
  const record = await stand.store.get({
    subject: "u-alice",
    issuer: `${sim.url}/login/oauth`,
    resource: "",
  });
  assert.equal(record?.provider?.options?.host, sim.url);
  assert.equal(record?.account.login, "alice");
});
