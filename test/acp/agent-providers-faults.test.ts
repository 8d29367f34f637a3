/**
 * The agent kit with the GitHub preset when GitHub answers badly (test/sims/github.ts faults, from GitHub's docs on
 * rate limits and its HTML error pages): each login fails with a typed ACP error whose `data.reason` is the
 * engine's stable code, nothing is stored, no secret is printed, and the next login works.
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

test("[ACP-provider-github-bad-answers] a rate limit and an HTML page from GitHub's token endpoint fail the login with rate_limited and invalid_response; the next login signs in", {
  timeout: 60_000,
}, async (t) => {
  const sim = await startGitHubSimulator({ deviceIntervalSeconds: 1 });
  t.after(() => sim.close());
  const { result, run } = await withProviderAgent(
    t,
    sim,
    { onPrompt: (prompt) => sim.approveDevice(prompt.userCode ?? "") },
    async (agent, run) => {
      sim.failNext("rate_limit");
      const limited = await refusal(
        agent.request(acp.methods.agent.authenticate, { methodId: "github" }),
      );
      const storedAfterLimit = (await vaultRecords(run.home)).length;
      sim.failNext("html200");
      const html = await refusal(
        agent.request(acp.methods.agent.authenticate, { methodId: "github" }),
      );
      const storedAfterHtml = (await vaultRecords(run.home)).length;
      await agent.request(acp.methods.agent.authenticate, { methodId: "github" });
      const status = await agent.request(acp.methods.agent.auth.status, {});
      return { limited, storedAfterLimit, html, storedAfterHtml, status };
    },
  );
  assert.equal(result.limited.code, -32000);
  assert.deepEqual(result.limited.data, { reason: "rate_limited" });
  assert.match(result.limited.message, /rate limiting/);
  assert.equal(result.storedAfterLimit, 0);
  assert.equal(result.html.code, -32000);
  assert.deepEqual(result.html.data, { reason: "invalid_response" });
  assert.doesNotMatch(result.html.message, /<html|DOCTYPE/i, "the page itself is not quoted");
  assert.equal(result.storedAfterHtml, 0);
  assert.equal(result.status.state, "authenticated");
  assert.equal(result.status.accounts?.[0]?.label, "alice");
  assert.equal(run.prompts.length, 3);
  const [record] = await vaultRecords(run.home);
  assertNoSecret(run.output(), {
    "access token": record?.tokens.accessToken?.reveal(),
    "client secret": sim.clientSecret,
  });
});
