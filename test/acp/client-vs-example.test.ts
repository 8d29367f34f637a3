import assert from "node:assert/strict";
import { join } from "node:path";
import { test } from "node:test";
import { connectAgent, type UrlPrompt } from "../../src/acp/client/index.ts";
import { REPO_ROOT } from "../support/cli.ts";
import { useIdp } from "../support/idp.ts";
import { tempDir } from "../support/tmp.ts";

const idp = await useIdp();
const FIXTURE = join(REPO_ROOT, "test", "acp", "fixtures", "example-agent.ts");

for (const protocolVersion of [1, 2] as const) {
  test(`[ACP-journey-retry-once-v${protocolVersion}] against our agent: auth_required on session/new triggers one login through URL elicitation, then the retry succeeds`, {
    timeout: 60_000,
  }, async () => {
    const home = tempDir();
    const prompts: UrlPrompt[] = [];
    const client = await connectAgent(process.execPath, ["--no-warnings", FIXTURE], {
      protocolVersion,
      env: { ...process.env, AGENTAUTH_HOME: home, ISSUER: idp.issuer },
      onUrl: async (prompt) => {
        prompts.push(prompt);
        await (await fetch(prompt.url)).arrayBuffer();
      },
    });
    try {
      assert.equal((await client.status()).state, "unauthenticated");
      const { sessionId } = await client.newSession(home);
      assert.ok(sessionId);
      assert.equal(prompts.length, 1, "exactly one login journey");
      assert.ok(prompts[0]?.url.startsWith(idp.issuer));
      assert.equal((await client.status()).state, "authenticated");
      await client.logout();
      assert.equal((await client.status()).state, "unauthenticated");
    } finally {
      await client.close();
    }
  });
}

test("[ACP-journey-terminal-method] against our agent: the terminal method re-runs the same command with --login, the person signs in there, and the reconnected agent is authenticated", {
  timeout: 60_000,
}, async () => {
  const home = tempDir();
  const { spawn } = await import("node:child_process");
  const runs: string[][] = [];
  const client = await connectAgent(process.execPath, ["--no-warnings", FIXTURE], {
    env: { ...process.env, AGENTAUTH_HOME: home, ISSUER: idp.issuer },
    // A "terminal" for tests: the same process the CLI would show interactively, with the person played by fetch.
    runTerminal: (invocation) =>
      new Promise((resolve) => {
        runs.push(invocation.args);
        const child = spawn(invocation.command, invocation.args, {
          env: invocation.env,
          stdio: ["ignore", "ignore", "pipe"],
        });
        let stderr = "";
        child.stderr.setEncoding("utf8").on("data", (chunk: string) => {
          stderr += chunk;
          const url = /(http\S+user_code=\S+)/.exec(stderr)?.[1];
          if (url && !stderr.includes("[visited]")) {
            stderr += "[visited]";
            void fetch(url).then((r) => r.arrayBuffer());
          }
        });
        child.on("exit", (code, signal) => resolve({ exitCode: code, signal } as never));
      }),
  });
  try {
    const outcome = await client.login("terminal-login");
    assert.equal(outcome.authenticated, true);
    assert.deepEqual(
      runs,
      [["--no-warnings", FIXTURE, "--login"]],
      "the same command with the method's args appended",
    );
    assert.equal((await client.status()).state, "authenticated");
  } finally {
    await client.close();
  }
});
