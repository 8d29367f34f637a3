import assert from "node:assert/strict";
import { readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";
import { runDemoScript, transcriptText } from "../../src/demo/script.ts";
import { openVault } from "../../src/vault/index.ts";
import { tempDir } from "../support/tmp.ts";

/** Processes whose command line names this folder (the example agent runs with AGENTAUTH_HOME there): Linux /proc. */
function processesUsing(dir: string): number[] {
  const found: number[] = [];
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry) || Number(entry) === process.pid) continue;
    try {
      const environ = readFileSync(`/proc/${entry}/environ`, "utf8");
      if (environ.includes(`AGENTAUTH_HOME=${dir}\0`)) found.push(Number(entry));
    } catch {}
  }
  return found;
}

/** Every secret the vault holds for the demo (access and refresh tokens), to check none reached the transcript. */
async function vaultSecrets(dataDir: string): Promise<string[]> {
  const store = openVault({ home: dataDir, env: {} });
  try {
    const secrets: string[] = [];
    for (const summary of await store.list()) {
      const record = await store.get(summary);
      if (record?.tokens.accessToken) secrets.push(record.tokens.accessToken.reveal());
      if (record?.tokens.refreshToken) secrets.push(record.tokens.refreshToken.reveal());
    }
    return secrets;
  } finally {
    await store.close();
  }
}

test("[DEMO-script] runDemoScript runs every journey against a fresh demo and passes; one line per step; no token, code, state or link query in the transcript", {
  timeout: 180_000,
}, async () => {
  const dataDir = tempDir("agentauth-demo-script-");
  let text = "";
  const secrets: string[] = [];
  const result = await runDemoScript({
    dataDir,
    write: (line) => {
      text += line;
    },
    // Tokens come and go (logout, disconnect, renewal): gather them after every step, before they are gone.
    afterStep: async () => {
      secrets.push(...(await vaultSecrets(dataDir)));
    },
  });
  assert.equal(result.ok, true, text);
  for (const step of [
    "DEMO start",
    "ACP  status",
    "ACP  login",
    "ACP  session",
    "ACP  logout",
    "AHP  connect",
    "AHP  authenticate",
    "AHP  renewal",
    "RAP  invoke",
    "RAP  authorize",
    "RAP  result",
    "RAP  disconnect",
    "RAP  invoke again",
    "DEMO close",
  ]) {
    assert.match(
      text,
      new RegExp(`^✓ ${step.replace(/\s+/g, "\\s+")}\\s+\\(\\d+ ms\\)`, "m"),
      step,
    );
  }
  assert.match(text, /signed in as .*alice/i);
  assert.match(text, /^All 14 steps passed/m);
  assert.ok(secrets.length >= 3, `tokens were gathered (${secrets.length})`);
  for (const secret of new Set(secrets))
    assert.equal(text.includes(secret), false, "a token in the transcript");
  assert.doesNotMatch(text, /code=|state=|consent=|user_code=|\?/);
  assert.deepEqual(processesUsing(dataDir), [], "no agent process outlives the script");
});

test("[DEMO-script-failure] the demo stopped mid-way: later steps fail with ✗, ok is false, the summary says so, nothing is left running", {
  timeout: 180_000,
}, async () => {
  const dataDir = tempDir("agentauth-demo-script-fail-");
  let text = "";
  let issuer = "";
  const result = await runDemoScript({
    dataDir,
    write: (line) => {
      text += line;
    },
    afterStep: async (step, demo) => {
      issuer = demo.urls.issuer;
      if (step === "ACP logout") await demo.close();
    },
  });
  assert.equal(result.ok, false);
  assert.match(text, /^✓ ACP\s+logout/m);
  assert.match(text, /^✗ AHP\s+connect/m);
  assert.match(text, /^✗ RAP\s+invoke/m);
  assert.match(text, /^\d+ of \d+ steps failed/m);
  await assert.rejects(fetch(`${issuer}/.well-known/openid-configuration`), "the IdP is stopped");
  assert.deepEqual(processesUsing(dataDir), []);
});

test("[DEMO-script-redaction] transcriptText keeps a URL's origin and path only, and one line", () => {
  assert.equal(
    transcriptText("open http://127.0.0.1:1/oauth/start?consent=abc&state=xyz now\nplease"),
    "open http://127.0.0.1:1/oauth/start now please",
  );
  assert.equal(transcriptText("ws://127.0.0.1:2/x#frag"), "ws://127.0.0.1:2/x");
});

test("[DEMO-script-start-refused] a folder that is not the demo's is refused: ✗ start, ok false, nothing in it deleted", {
  timeout: 60_000,
}, async () => {
  const dataDir = tempDir("agentauth-demo-script-foreign-");
  writeFileSync(join(dataDir, "notes.txt"), "mine");
  let text = "";
  const result = await runDemoScript({
    dataDir,
    write: (line) => {
      text += line;
    },
  });
  assert.equal(result.ok, false);
  assert.match(text, /^✗ DEMO\s+start/m);
  assert.match(text, /^1 of 1 steps failed/m);
  assert.equal(readFileSync(join(dataDir, "notes.txt"), "utf8"), "mine");
});

test("[DEMO-script-cancel] a cancelled script (Ctrl-C) stops after the running step, skips the rest, closes the demo and leaves no agent running", {
  timeout: 120_000,
}, async () => {
  const dataDir = tempDir("agentauth-demo-script-cancel-");
  const controller = new AbortController();
  let text = "";
  let issuer = "";
  const result = await runDemoScript({
    dataDir,
    signal: controller.signal,
    write: (line) => {
      text += line;
    },
    afterStep: (step, demo) => {
      issuer = demo.urls.issuer;
      if (step === "ACP status") controller.abort();
    },
  });
  assert.equal(result.ok, false);
  assert.match(text, /^✓ ACP\s+status/m);
  assert.doesNotMatch(text, /^✓ ACP\s+login/m);
  assert.doesNotMatch(text, /AHP|RAP/);
  assert.match(text, /^✓ DEMO\s+close/m);
  await assert.rejects(fetch(`${issuer}/.well-known/openid-configuration`));
  assert.deepEqual(processesUsing(dataDir), []);
});
