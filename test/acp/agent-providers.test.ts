/**
 * The agent kit with a provider preset: an agent process whose OAuth method is `provider: github(...)`
 * (fixtures/provider-agent.ts), pointed at the GitHub simulator (test/sims/github.ts, written from GitHub's docs),
 * driven by the real ACP SDK client over its stdio. The device login's prompt reaches the client, the test plays
 * the person at the simulator's device page (approve, deny), and the account, the token's use, its refresh and
 * the revocation are checked at the simulator.
 */

import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { join } from "node:path";
import { Readable, Writable } from "node:stream";
import { test } from "node:test";
import * as acp from "@agentclientprotocol/sdk/unstable";
import { LOGIN_PROMPT, type LoginPrompt, LoginPromptSchema } from "../../src/acp/wire.ts";
import { openVault } from "../../src/vault/index.ts";
import { type GitHubSimulator, startGitHubSimulator } from "../sims/github.ts";
import { tempDir } from "../support/tmp.ts";
import { agentEnv } from "./fixtures/agent-process.ts";

const PROVIDER_AGENT = join(import.meta.dirname, "fixtures", "provider-agent.ts");
const REPO_ROOT = join(import.meta.dirname, "..", "..");

type Sdk = Parameters<Parameters<ReturnType<typeof acp.client>["connectWith"]>[1]>[0];

interface Run {
  home: string;
  output: () => string;
  prompts: LoginPrompt[];
  statusUpdates: unknown[];
  chunks: string[];
}

/**
 * Starts the provider agent on `sim` and runs `journey` with the SDK client connected to it. `onPrompt` plays the
 * person when a login prompt arrives (approve or deny at the simulator). The client secret reaches the agent
 * through its environment, as any secret must.
 */
async function withProviderAgent<T>(
  t: test.TestContext,
  sim: GitHubSimulator,
  options: {
    onPrompt: (prompt: LoginPrompt) => void;
    app?: "oauth_app" | "github_app";
    home?: string;
  },
  journey: (agent: Sdk, run: Run) => Promise<T>,
): Promise<{ result: T; run: Run }> {
  const home = options.home ?? tempDir();
  const child = spawn(process.execPath, ["--no-warnings", PROVIDER_AGENT], {
    env: {
      ...agentEnv({ issuer: "http://127.0.0.1:1", home }),
      GITHUB_HOST: sim.url,
      GITHUB_CLIENT_ID: sim.clientId,
      GITHUB_CLIENT_SECRET: sim.clientSecret,
      GITHUB_APP: options.app ?? "oauth_app",
    },
    cwd: REPO_ROOT,
    stdio: ["pipe", "pipe", "pipe"],
  });
  const closed = new Promise<void>((resolve) => child.once("close", () => resolve()));
  t.after(async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
    await closed;
  });
  let stdout = "";
  let stderr = "";
  child.stderr.setEncoding("utf8");
  child.stderr.on("data", (chunk: string) => {
    stderr += chunk;
  });
  // A copy of stdout for the secret checks; the SDK reads its own.
  child.stdout.on("data", (chunk: Buffer) => {
    stdout += chunk.toString("utf8");
  });
  const run: Run = {
    home,
    output: () => `${stdout}\n${stderr}`,
    prompts: [],
    statusUpdates: [],
    chunks: [],
  };
  const stream = acp.ndJsonStream(
    Writable.toWeb(child.stdin),
    Readable.toWeb(child.stdout) as ReadableStream<Uint8Array>,
  );
  const result = await acp
    .client({ name: "agentauth-provider-test" })
    .onNotification(acp.methods.client.auth.statusUpdate, ({ params }) => {
      run.statusUpdates.push(params);
    })
    .onNotification(LOGIN_PROMPT, LoginPromptSchema, ({ params }) => {
      run.prompts.push(params);
      options.onPrompt(params);
    })
    .onNotification(acp.methods.client.session.update, ({ params }) => {
      const { update } = params;
      if (update.sessionUpdate === "agent_message_chunk" && update.content.type === "text")
        run.chunks.push(update.content.text);
    })
    .connectWith(stream, async (agent) => {
      await agent.request(acp.methods.agent.initialize, {
        protocolVersion: acp.PROTOCOL_VERSION,
        clientCapabilities: {},
      });
      return journey(agent, run);
    });
  child.stdin.end();
  await closed;
  return { result, run };
}

/** The agent's vault records (secrets included), read as another process would. */
async function vaultRecords(home: string) {
  const vault = openVault({ env: { AGENTAUTH_HOME: home } });
  try {
    return await Promise.all((await vault.list()).map((s) => vault.getById(s.id)));
  } finally {
    await vault.close();
  }
}

function assertNoSecret(output: string, secrets: Record<string, string | undefined>): void {
  for (const [what, value] of Object.entries(secrets)) {
    assert.ok(value, `the test knows the ${what}`);
    for (const part of new Set([value, value.slice(0, 12)]))
      assert.ok(!output.includes(part), `the ${what} appeared in the agent's output`);
  }
}

/** The error a request failed with (the SDK rejects with a RequestError). */
async function refusal(request: Promise<unknown>): Promise<acp.RequestError> {
  const error = await request.then(
    () => undefined,
    (e: unknown) => e,
  );
  assert.ok(error instanceof acp.RequestError, `expected a JSON-RPC error, got ${String(error)}`);
  return error;
}

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
