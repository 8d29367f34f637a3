/**
 * Issue 8 §2.5: `ahp status` opens a fresh connection, which has authenticated nothing yet; it must still say that
 * the vault holds a valid token for a resource (the state right after `ahp login`), not "not authenticated".
 */

import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { join } from "node:path";
import { after, test } from "node:test";
import { openVault } from "../../src/vault/index.ts";
import { tempDir } from "../support/tmp.ts";
import { storeToken } from "./fixtures/client-harness.ts";
import { scriptedHost } from "./fixtures/scripted-host.ts";

const CLI = join(import.meta.dirname, "fixtures", "ahp-client-cli.ts");

function run(
  args: string[],
  env: NodeJS.ProcessEnv,
): Promise<{ code: number | null; out: string }> {
  const child = spawn(process.execPath, [CLI, ...args], { env });
  after(() => child.exitCode === null && child.kill("SIGKILL"));
  let out = "";
  child.stdout.on("data", (c) => {
    out += c;
  });
  child.stderr.on("data", (c) => {
    out += c;
  });
  return new Promise((resolve) => child.once("close", (code) => resolve({ code, out })));
}

test("[AHP-status-vault-valid] on a fresh connection, status says the vault holds a valid token (and which one needs a sign-in)", {
  timeout: 30_000,
}, async () => {
  const issuer = "http://127.0.0.1:1";
  const host = await scriptedHost({
    dialects: ["official"],
    resources: [
      {
        resource: "https://one.example/",
        name: "One",
        authorizationServers: [issuer],
        schemeId: "one",
      },
      {
        resource: "https://two.example/",
        name: "Two",
        authorizationServers: [issuer],
        schemeId: "two",
      },
    ],
  });
  const home = tempDir();
  const env = { ...process.env, AGENTAUTH_HOME: home, NODE_TEST_CONTEXT: "" };
  const store = openVault({ env });
  await storeToken(store, {
    issuer,
    resource: "https://one.example/",
    token: "stored-token",
    expiresAt: Date.now() + 3_600_000,
  });
  await store.close();

  const text = await run(["status", host.url], env);
  assert.equal(text.code, 0, text.out);
  assert.doesNotMatch(text.out, /not authenticated/);
  const [one, two] = text.out.split("https://two.example/");
  assert.match(one ?? "", /ready: the vault holds a valid token/);
  assert.match(two ?? "", /sign-in needed: run 'agentauth ahp login/);
  assert.equal(text.out.includes("stored-token"), false);

  const json = await run(["status", "--json", host.url], env);
  const report = JSON.parse(json.out) as { resources: Array<{ id: string; ready: boolean }> };
  assert.deepEqual(
    report.resources.map((r) => [r.id, r.ready]),
    [
      ["https://one.example/", true],
      ["https://two.example/", false],
    ],
  );
  // No authenticate was sent: status only reads.
  assert.equal(host.authenticateFrames().length, 0);
});
