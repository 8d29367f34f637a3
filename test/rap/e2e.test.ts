import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { test } from "node:test";
import { openVault } from "../../src/vault/index.ts";
import { runCli, startCli } from "../support/cli.ts";
import { useIdp } from "../support/idp.ts";
import { tempDir } from "../support/tmp.ts";
import { authorize } from "./tool-oauth-fixture.ts";

const idp = await useIdp();

async function poll<T>(
  read: () => Promise<T | undefined>,
  what: string,
  timeoutMs = 20_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await read();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

test("[RAP-e2e-oauth] runtime and example tool as real processes: invoke → oauth → auth_url → redirect → encrypted token → retried → tool_result matched; same user needs no new authorization; another user does", async () => {
  const toolHome = tempDir();
  const runtimeHome = tempDir();
  const tool = startCli(["rap", "tool", "serve", "--example", "--issuer", idp.issuer], {
    AGENTAUTH_HOME: toolHome,
  });
  const toolReady = JSON.parse((await tool.waitFor("stdout", /^\{.*"event":"ready".*\}$/m))[0]);
  const inspect = await runCli(["rap", "inspect", toolReady.url], {});
  assert.equal(inspect.code, 0, inspect.stderr);
  assert.match(inspect.stdout, /whoami\s+requires auth: demo/);
  assert.match(inspect.stdout, /echo\s+no auth/);

  assert.equal(toolReady.invocationAuth, "hmac-sha256", "rap tool serve signs by default");
  const runtime = startCli(
    [
      "rap",
      "runtime",
      "serve",
      "--toolset",
      toolReady.url,
      "--tool-secret-file",
      toolReady.invocationSecretFile,
    ],
    {
      AGENTAUTH_HOME: runtimeHome,
    },
  );
  const ready = JSON.parse((await runtime.waitFor("stdout", /^\{.*"event":"ready".*\}$/m))[0]);
  assert.deepEqual(ready.tools, ["echo", "whoami"]);
  const token = readFileSync(ready.controlTokenFile, "utf8");
  const api = (path: string, init: RequestInit = {}) =>
    fetch(`${ready.url}${path}`, {
      ...init,
      headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
    });
  assert.equal((await fetch(`${ready.url}/tools`)).status, 401, "the control API needs its token");

  const call = async (group: string, user: string) => {
    const response = await api("/calls", {
      method: "POST",
      body: JSON.stringify({ operation: "whoami", arguments: {}, group_id: group, user_id: user }),
    });
    assert.equal(response.status, 202);
    const outcome = (await response.json()) as { id: string; requiresAuth?: string };
    assert.equal(outcome.requiresAuth, "demo", "flagged before invocation");
    return outcome.id;
  };
  const settled = (group: string, id: string) =>
    poll(async () => {
      const thread = (await (await api(`/threads/${group}`)).json()) as {
        calls: { id: string; status: string; result?: { text?: string } }[];
        entries: { text?: string }[];
      };
      const found = thread.calls.find((c) => c.id === id);
      return found && found.status !== "pending" && found.status !== "authorizing"
        ? { found, thread }
        : undefined;
    }, `call ${id}`);

  // Alice: first call needs authorization.
  const first = await call("thread-a", "alice");
  const [, authUrl] = await runtime.waitFor("stderr", new RegExp(`call ${first}\\): open (\\S+)`));
  assert.ok(
    authUrl?.startsWith(`${toolReady.url}/oauth/start?`),
    "auth_url leads to the tool's consent page",
  );
  // The person follows auth_url, presses Continue, and the auto-approving server redirects back to the tool.
  const signedIn = await authorize(authUrl as string);
  assert.match(signedIn.page, /signed in to the demo API as alice/);
  const one = await settled("thread-a", first);
  assert.equal(one.found.result?.text, "You are alice at the demo API (scopes: read).");
  assert.ok(
    one.thread.entries.some((e) => /Authorization in progress/i.test(e.text ?? "")),
    "status entry added to the thread",
  );

  // Alice again: no authorization.
  const second = await call("thread-a", "alice");
  assert.equal(
    (await settled("thread-a", second)).found.result?.text,
    "You are alice at the demo API (scopes: read).",
  );
  assert.ok(
    !runtime.output().stderr.includes(`call ${second})`),
    "no authorization asked the second time",
  );

  // Bob: needs his own authorization.
  const third = await call("thread-b", "bob");
  await runtime.waitFor("stderr", new RegExp(`call ${third}\\): open `));

  // Tokens: encrypted in the tool's vault, never in any output.
  const store = openVault({ env: { AGENTAUTH_HOME: toolHome } });
  const [summary] = await store.list({ subject: "alice" });
  const record = summary ? await store.get(summary) : undefined;
  await store.close();
  assert.ok(record?.tokens.accessToken && record.tokens.refreshToken);
  const dbBytes = readFileSync(`${toolHome}/vault.db`).toString("latin1");
  const outputs = [
    tool.output().stdout,
    tool.output().stderr,
    runtime.output().stdout,
    runtime.output().stderr,
    inspect.stdout,
  ];
  for (const secret of [record.tokens.accessToken.reveal(), record.tokens.refreshToken.reveal()]) {
    assert.ok(!dbBytes.includes(secret), "no plaintext token in the vault file");
    for (const out of outputs) assert.ok(!out.includes(secret), "no token in any process output");
  }
  tool.kill("SIGTERM");
  runtime.kill("SIGTERM");
  assert.equal((await tool.exited).code, 0);
  assert.equal((await runtime.exited).code, 0);
});
