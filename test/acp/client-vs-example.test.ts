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
  test(`[ACP-journey-retry-once-v${protocolVersion}] against our agent: auth_required on session/new triggers one login through URL elicitation, then the retry succeeds`, async () => {
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
