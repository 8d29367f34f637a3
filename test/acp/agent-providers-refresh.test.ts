/**
 * The agent kit with the GitHub preset, past the first login: a GitHub App token that has expired is refreshed
 * through the provider (single-use refresh token rotated, once) when the agent uses it, and the terminal login of a
 * provider method (the agent binary run with the terminal method's args) signs in with the device flow.
 */

import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { test } from "node:test";
import * as acp from "@agentclientprotocol/sdk/unstable";
import { openVault } from "../../src/vault/index.ts";
import { startGitHubSimulator } from "../sims/github.ts";
import { tempDir } from "../support/tmp.ts";
import {
  assertNoSecret,
  PROVIDER_AGENT,
  providerAgentEnv,
  REPO_ROOT,
  vaultRecords,
  withProviderAgent,
} from "./fixtures/provider-agent-process.ts";

test("[ACP-provider-github-app-refresh] an expired GitHub App token is refreshed once through the provider when the agent uses it, and the rotated refresh token is stored", {
  timeout: 60_000,
}, async (t) => {
  const sim = await startGitHubSimulator({ appKind: "github_app", deviceIntervalSeconds: 1 });
  t.after(() => sim.close());
  const { result, run } = await withProviderAgent(
    t,
    sim,
    { app: "github_app", onPrompt: (prompt) => sim.approveDevice(prompt.userCode ?? "") },
    async (agent, run) => {
      await agent.request(acp.methods.agent.authenticate, { methodId: "github" });
      const [first] = await vaultRecords(run.home);
      assert.ok(first?.tokens.refreshToken, "a GitHub App login stores a refresh token");
      // Another process (or the clock) says the token is due: the next use must refresh it.
      const vault = openVault({ env: { AGENTAUTH_HOME: run.home } });
      await vault.put({ ...first, expiresAt: Date.now() - 1000 });
      await vault.close();
      const session = await agent.request(acp.methods.agent.session.new, {
        cwd: run.home,
        mcpServers: [],
      });
      for (const text of ["first", "second"]) {
        await agent.request(acp.methods.agent.session.prompt, {
          sessionId: session.sessionId,
          prompt: [{ type: "text", text }],
        });
      }
      const [after] = await vaultRecords(run.home);
      return { first, after };
    },
  );
  assert.equal(sim.stats().refreshGrants, 1);
  assert.deepEqual(run.chunks, ["hello alice", "hello alice"]);
  const { first, after } = result;
  assert.notEqual(after?.tokens.refreshToken?.reveal(), first.tokens.refreshToken?.reveal());
  assert.notEqual(after?.tokens.accessToken?.reveal(), first.tokens.accessToken?.reveal());
  assert.ok((after?.expiresAt ?? 0) > Date.now(), "the new token's expiry is stored");
  assert.equal(sim.isActive(after?.tokens.accessToken?.reveal() ?? ""), true);
  assertNoSecret(run.output(), {
    "old access token": first.tokens.accessToken?.reveal(),
    "old refresh token": first.tokens.refreshToken?.reveal(),
    "new access token": after?.tokens.accessToken?.reveal(),
    "new refresh token": after?.tokens.refreshToken?.reveal(),
    "client secret": sim.clientSecret,
  });
});

test("[ACP-provider-terminal-login] the terminal login of a provider method runs GitHub's device flow on stderr, exits 0, and the agent then reports alice", {
  timeout: 60_000,
}, async (t) => {
  const sim = await startGitHubSimulator({ deviceIntervalSeconds: 1 });
  t.after(() => sim.close());
  const home = tempDir();
  const child = spawn(process.execPath, ["--no-warnings", PROVIDER_AGENT, "--login"], {
    env: providerAgentEnv(sim, home),
    cwd: REPO_ROOT,
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stdout = "";
  let stderr = "";
  child.stdout.setEncoding("utf8").on("data", (chunk: string) => {
    stdout += chunk;
  });
  let approved = false;
  child.stderr.setEncoding("utf8").on("data", (chunk: string) => {
    stderr += chunk;
    const code = /enter the code\s+([A-Z0-9]{4}-[A-Z0-9]{4})/.exec(stderr)?.[1];
    if (code && !approved) {
      approved = true;
      sim.approveDevice(code);
    }
  });
  const exitCode = await new Promise<number | null>((resolve) => child.once("close", resolve));
  assert.equal(exitCode, 0, stderr);
  assert.match(stderr, /To sign in with GitHub Enterprise \(127\.0\.0\.1:\d+\), open/);
  assert.match(stderr, /Signed in as alice\./);
  assert.equal(stdout, "", "a terminal login prints nothing on stdout");
  const [record] = await vaultRecords(home);
  assert.equal(record?.account.login, "alice");
  assert.equal(record?.provider?.name, "github");
  assertNoSecret(`${stdout}\n${stderr}`, {
    "access token": record?.tokens.accessToken?.reveal(),
    "client secret": sim.clientSecret,
  });

  // The agent started afterwards (as the client does after a terminal login) finds the credential.
  const { result } = await withProviderAgent(
    t,
    sim,
    { home, onPrompt: () => assert.fail("no login needed") },
    (agent) => agent.request(acp.methods.agent.auth.status, {}),
  );
  assert.equal(result.state, "authenticated");
  assert.equal(result.accounts?.[0]?.label, "alice");
});
