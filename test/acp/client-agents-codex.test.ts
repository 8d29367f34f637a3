/**
 * Issue 20 §2.4, §2.6: `agentauth acp login` against codex-acp 0.16.0 as it really behaves
 * (fixtures/scripted-agent-codex.ts): a method whose variable is set wins the default choice over the silent
 * `chatgpt` login; `chatgpt`, which shows nothing anywhere, is followed after a short while by what the person can do
 * instead; `--api-key-env` reaches the variable an `env_var` method names.
 */

import assert from "node:assert/strict";
import { test } from "node:test";
import { runCli } from "../support/cli.ts";
import { scripted } from "./fixtures/acp-cli-process.ts";
import { calls, stateFolder } from "./fixtures/scripted-agent-harness.ts";

const GUARD = { timeout: 60_000 };
const NO_CODEX_ENV = { CODEX_API_KEY: undefined, OPENAI_API_KEY: undefined, NO_BROWSER: undefined };

function acp(args: string[], env: NodeJS.ProcessEnv) {
  return runCli(["acp", ...args], { ...NO_CODEX_ENV, ...env });
}

function codex(dir: string): string[] {
  return scripted("codex", dir);
}

test(
  "[ACP-login-prefer-set-variable] CODEX_API_KEY set: the default login is codex-api-key, not the silent chatgpt, and says where codex keeps the key",
  GUARD,
  async () => {
    const dir = stateFolder();
    const key = "sk-codex-env-3b7d";
    // --timeout bounds the run before the fix, when chatgpt was chosen and waited for a browser.
    const result = await acp(["login", "--timeout", "20", ...codex(dir)], {
      CODEX_API_KEY: key,
      SCRIPTED_EXPECTED_KEY: key,
    });
    assert.equal(result.code, 0, result.stderr);
    const log = calls(dir);
    assert.ok(log.includes("authenticate codex-api-key"), log.join("\n"));
    assert.ok(!log.includes("authenticate chatgpt"), log.join("\n"));
    assert.ok(log.includes("stored-key CODEX_API_KEY match"));
    assert.ok(log.includes("session/new ok"), "a session confirmed the key");
    assert.ok(log.includes("session/close codex-session-1"), "and was closed again");
    assert.match(result.stdout, /Codex accepted .*a session opened/);
    assert.match(result.stdout, /auth\.json/);
    assert.ok(!(result.stdout + result.stderr).includes(key));
  },
);

test(
  "[ACP-login-silent-method] chatgpt shows nothing anywhere: after a short while the person is told what to do instead, then the timeout ends it",
  GUARD,
  async () => {
    const dir = stateFolder();
    const result = await acp(["login", "--timeout", "4", ...codex(dir)], {});
    assert.equal(result.code, 1, result.stderr);
    assert.ok(calls(dir).includes("authenticate chatgpt"));
    const hint =
      /Codex has shown no sign-in link.*127\.0\.0\.1:1455.*codex-api-key.*CODEX_API_KEY/s;
    assert.match(result.stderr, hint);
    assert.match(result.stderr, /codex login --device-auth/);
    assert.match(result.stderr, /\[acp_timeout\]/);
    assert.ok(
      (result.stderr.match(hint)?.index ?? 0) < result.stderr.indexOf("[acp_timeout]"),
      "the hint comes while it waits",
    );
  },
);

test(
  "[ACP-login-api-key-env-var-method] --api-key-env with codex's env_var methods: the key reaches the agent as CODEX_API_KEY, never printed",
  GUARD,
  async () => {
    const dir = stateFolder();
    const key = "sk-codex-flag-91ae";
    const result = await acp(
      ["login", "--method", "codex-api-key", "--api-key-env", "MY_KEY", ...codex(dir)],
      { MY_KEY: key, SCRIPTED_EXPECTED_KEY: key },
    );
    assert.equal(result.code, 0, result.stderr);
    assert.ok(calls(dir).includes("stored-key CODEX_API_KEY match"), calls(dir).join("\n"));
    assert.ok(!(result.stdout + result.stderr).includes(key));
  },
);

test(
  "[ACP-login-api-key-env-var-method] a key for a method that takes none is refused, not silently dropped",
  GUARD,
  async () => {
    const dir = stateFolder();
    const result = await acp(
      ["login", "--method", "chatgpt", "--api-key-env", "MY_KEY", "--timeout", "10", ...codex(dir)],
      { MY_KEY: "sk-unused" },
    );
    assert.equal(result.code, 1, result.stderr);
    assert.match(result.stderr, /takes no API key.*codex-api-key/s);
    assert.ok(!calls(dir).some((line) => line.startsWith("authenticate")));
  },
);
