/**
 * The agent kit with a provider preset: an agent process whose OAuth method is `provider: github(...)`
 * (fixtures/provider-agent.ts), pointed at the GitHub simulator (test/sims/github.ts, written from GitHub's docs),
 * driven by the real ACP SDK client over its stdio. The device login's prompt reaches the client, the test plays
 * the person at the simulator's device page (approve, deny), and the account, the token's use and the revocation
 * are checked at the simulator.
 */

import assert from "node:assert/strict";
import { test } from "node:test";
import * as acp from "@agentclientprotocol/sdk/unstable";
import { startGitHubSimulator } from "../sims/github.ts";
import {
  assertNoSecret,
  refusal,
  vaultRecords,
  withProviderAgent,
} from "./fixtures/provider-agent-process.ts";

test("[ACP-provider-github-device-login] authenticate runs GitHub's device flow: the prompt reaches the client, the account shows as alice, the token works, logout revokes the grant at GitHub", {
  timeout: 60_000,
}, async (t) => {
  const sim = await startGitHubSimulator({ deviceIntervalSeconds: 1 });
  t.after(() => sim.close());
  const seen: { accessToken?: string; deviceCode?: string } = {};
  const { result, run } = await withProviderAgent(
    t,
    sim,
    { onPrompt: (prompt) => sim.approveDevice(prompt.userCode ?? "") },
    async (agent, run) => {
      const before = await agent.request(acp.methods.agent.auth.status, {});
      const refused = await refusal(
        agent.request(acp.methods.agent.session.new, { cwd: run.home, mcpServers: [] }),
      );
      const authenticated = await agent.request(acp.methods.agent.authenticate, {
        methodId: "github",
      });
      seen.deviceCode = sim.lastTokenRequest()?.params.device_code;
      const [record] = await vaultRecords(run.home);
      seen.accessToken = record?.tokens.accessToken?.reveal();
      const status = await agent.request(acp.methods.agent.auth.status, {});
      const session = await agent.request(acp.methods.agent.session.new, {
        cwd: run.home,
        mcpServers: [],
      });
      const turn = await agent.request(acp.methods.agent.session.prompt, {
        sessionId: session.sessionId,
        prompt: [{ type: "text", text: "who am I?" }],
      });
      const grantsBeforeLogout = sim.grantCount();
      await agent.request(acp.methods.agent.logout, {});
      const end = await agent.request(acp.methods.agent.auth.status, {});
      return { before, refused, authenticated, record, status, turn, grantsBeforeLogout, end };
    },
  );
  assert.deepEqual(result.before, { state: "unauthenticated", accounts: [] });
  assert.equal(result.refused.code, -32000, "session/new needs a login first");
  assert.deepEqual(result.authenticated, {});
  // The prompt: GitHub's device page and the code, said the way the person reads it.
  assert.equal(run.prompts.length, 1);
  const prompt = run.prompts[0];
  assert.equal(prompt?.methodId, "github");
  assert.equal(prompt?.url, `${sim.url}/login/device`);
  assert.match(prompt?.userCode ?? "", /^[A-Z0-9]{4}-[A-Z0-9]{4}$/);
  assert.equal(
    prompt?.message,
    `To sign in with GitHub Enterprise (${new URL(sim.url).host}), open ${sim.url}/login/device and enter the code ${prompt?.userCode}.`,
  );
  // The vault: the provider named, the GitHub user id as the account's key material, the secret sealed.
  assert.equal(result.record?.subject, "acp-agent:provider-agent");
  assert.equal(result.record?.issuer, `${sim.url}/login/oauth`);
  assert.deepEqual(result.record?.provider, {
    name: "github",
    options: { app: "oauth_app", host: sim.url },
  });
  assert.equal(result.record?.account.login, "alice");
  assert.equal(result.record?.tokens.clientSecret?.reveal(), sim.clientSecret);
  const alice = {
    label: "alice",
    active: true,
    name: "Alice Liddell",
    email: "alice@example.com",
    _meta: {
      agentauth: {
        provider: "github",
        login: "alice",
        avatarUrl: "https://avatars.githubusercontent.com/u/1001?v=4",
      },
    },
  };
  assert.deepEqual(result.status, { state: "authenticated", accounts: [alice] });
  assert.deepEqual(run.statusUpdates, [
    { state: "authenticated", accounts: [alice] },
    { state: "unauthenticated", accounts: [] },
  ]);
  // The token works against GitHub's REST API, then logout revokes the whole grant there.
  assert.deepEqual(result.turn, { stopReason: "end_turn" });
  assert.deepEqual(run.chunks, ["hello alice"]);
  assert.equal(result.grantsBeforeLogout, 1);
  assert.equal(sim.grantCount(), 0);
  assert.equal(sim.stats().revocations, 1);
  assert.equal(sim.isActive(seen.accessToken ?? ""), false);
  assert.deepEqual(result.end, { state: "unauthenticated", accounts: [] });
  assert.deepEqual(await vaultRecords(run.home), []);
  assertNoSecret(run.output(), {
    "access token": seen.accessToken,
    "client secret": sim.clientSecret,
    "device code": seen.deviceCode,
  });
});

test("[ACP-provider-github-slow-down] a device login that meets slow_down waits longer and still signs in", {
  timeout: 60_000,
}, async (t) => {
  const sim = await startGitHubSimulator({ deviceIntervalSeconds: 1 });
  t.after(() => sim.close());
  sim.slowDownNext(1);
  const { result } = await withProviderAgent(
    t,
    sim,
    { onPrompt: (prompt) => sim.approveDevice(prompt.userCode ?? "") },
    async (agent) => {
      await agent.request(acp.methods.agent.authenticate, { methodId: "github" });
      return agent.request(acp.methods.agent.auth.status, {});
    },
  );
  assert.equal(result.state, "authenticated");
  assert.equal(result.accounts?.[0]?.label, "alice");
  // The first poll was told to slow down; the next, at the longer interval, got the token. A client that kept
  // the old interval would be told to slow down again on every poll (the simulator enforces it) and never sign in.
  assert.equal(sim.stats().devicePolls, 2);
});

test("[ACP-provider-github-denied] a sign-in denied on GitHub's device page answers auth_required with reason access_denied and stores nothing", {
  timeout: 60_000,
}, async (t) => {
  const sim = await startGitHubSimulator({ deviceIntervalSeconds: 1 });
  t.after(() => sim.close());
  const { result, run } = await withProviderAgent(
    t,
    sim,
    { onPrompt: (prompt) => sim.denyDevice(prompt.userCode ?? "") },
    async (agent) => {
      const error = await refusal(
        agent.request(acp.methods.agent.authenticate, { methodId: "github" }),
      );
      const status = await agent.request(acp.methods.agent.auth.status, {});
      return { error, status };
    },
  );
  assert.equal(result.error.code, -32000);
  assert.deepEqual(result.error.data, { reason: "access_denied" });
  assert.match(result.error.message, /denied/);
  assert.match(result.error.message, /again/);
  assert.deepEqual(result.status, { state: "unauthenticated", accounts: [] });
  assert.deepEqual(await vaultRecords(run.home), []);
  assertNoSecret(run.output(), { "client secret": sim.clientSecret });
});

test("[ACP-provider-github-device-flow-disabled] an app without Device Flow enabled gets an error that says to enable it", {
  timeout: 60_000,
}, async (t) => {
  const sim = await startGitHubSimulator({ deviceIntervalSeconds: 1 });
  t.after(() => sim.close());
  sim.setBehaviour({ deviceFlowEnabled: false });
  const { result, run } = await withProviderAgent(
    t,
    sim,
    { onPrompt: () => assert.fail("no prompt without a device code") },
    async (agent) => refusal(agent.request(acp.methods.agent.authenticate, { methodId: "github" })),
  );
  assert.equal(result.code, -32000);
  assert.deepEqual(result.data, { reason: "device_flow_unsupported" });
  assert.match(result.message, /Enable Device Flow/);
  assert.match(result.message, /flow: "browser"/);
  assert.equal(run.prompts.length, 0);
  assert.deepEqual(await vaultRecords(run.home), []);
});

test("[ACP-provider-github-elicitation] a client with URL elicitation gets GitHub's device page and code in elicitation/create, and the login completes", {
  timeout: 60_000,
}, async (t) => {
  const sim = await startGitHubSimulator({ deviceIntervalSeconds: 1 });
  t.after(() => sim.close());
  const { result, run } = await withProviderAgent(
    t,
    sim,
    {
      onPrompt: () => assert.fail("with elicitation, no login_prompt notification"),
      // The person reads the code in the message, opens the URL and approves there.
      elicit: ({ message }) => {
        const code = /enter the code ([A-Z0-9]{4}-[A-Z0-9]{4})/.exec(message)?.[1];
        assert.ok(code, message);
        sim.approveDevice(code);
        return "accept";
      },
    },
    async (agent) => {
      await agent.request(acp.methods.agent.authenticate, { methodId: "github" });
      return agent.request(acp.methods.agent.auth.status, {});
    },
  );
  assert.equal(run.elicitations.length, 1);
  assert.equal(run.elicitations[0]?.url, `${sim.url}/login/device`);
  assert.equal(run.prompts.length, 0, "the elicitation was the prompt");
  assert.equal(result.state, "authenticated");
  assert.equal(result.accounts?.[0]?.label, "alice");
});
