/**
 * Issue 20 §2.5, §2.6: `agentauth acp login` against qwen-code 0.24.4 as it really behaves
 * (fixtures/scripted-agent-qwen.ts): its "terminal login" is its own ACP server again, so it is never run; its
 * `authenticate` checks the environment itself, so it is sent, and its detail is shown when it refuses.
 */

import assert from "node:assert/strict";
import { test } from "node:test";
import { runCli } from "../support/cli.ts";
import { scripted } from "./fixtures/acp-cli-process.ts";
import { calls, stateFolder } from "./fixtures/scripted-agent-harness.ts";

const GUARD = { timeout: 60_000 };
const NO_QWEN_ENV = { OPENAI_API_KEY: undefined, OPENAI_MODEL: undefined, QWEN_MODEL: undefined };

function acp(args: string[], env: NodeJS.ProcessEnv) {
  return runCli(["acp", ...args], { ...NO_QWEN_ENV, ...env });
}

const secondServer = (dir: string) =>
  calls(dir).some((line) => line.includes("--auth-type=openai"));

test(
  "[ACP-login-qwen-authenticate] variables set: authenticate is sent and signs in; the agent's ACP server is never started as a 'terminal login'",
  GUARD,
  async () => {
    for (const flags of [[], ["--force-terminal", "--yes"]]) {
      const dir = stateFolder();
      const result = await acp(["login", "--timeout", "15", ...flags, ...scripted("qwen", dir)], {
        OPENAI_API_KEY: "sk-qwen-env",
        OPENAI_MODEL: "qwen3-coder",
      });
      assert.equal(result.code, 0, `${flags}: ${result.stderr}`);
      assert.ok(calls(dir).includes("authenticate openai"), calls(dir).join("\n"));
      assert.ok(!secondServer(dir), `${flags}: ${calls(dir).join("\n")}`);
      assert.match(result.stdout, /Qwen Code accepted .*a session opened/);
      assert.match(result.stdout, /OPENAI_API_KEY/);
    }
  },
);

test(
  "[ACP-login-qwen-authenticate] variables missing: authenticate is still sent (qwen checks its own settings too) and its detail is shown",
  GUARD,
  async () => {
    const dir = stateFolder();
    const result = await acp(["login", "--timeout", "15", ...scripted("qwen", dir)], {});
    assert.equal(result.code, 1, result.stderr);
    assert.ok(calls(dir).includes("authenticate openai"));
    assert.ok(!secondServer(dir));
    assert.match(
      result.stderr,
      /Qwen Code refused the login with "openai".*Missing API key for OpenAI-compatible auth\. Set the OPENAI_API_KEY environment variable\./s,
    );
  },
);

test(
  "[ACP-login-api-key-env-var-method] --api-key-env with qwen's openai method: the key reaches the agent as OPENAI_API_KEY",
  GUARD,
  async () => {
    const dir = stateFolder();
    const key = "sk-qwen-flag-0c4e";
    const result = await acp(
      ["login", "--api-key-env", "MY_KEY", "--timeout", "15", ...scripted("qwen", dir)],
      { MY_KEY: key, SCRIPTED_EXPECTED_KEY: key, OPENAI_MODEL: "qwen3-coder" },
    );
    assert.equal(result.code, 0, result.stderr);
    assert.ok(calls(dir).includes("authenticate openai key=match"), calls(dir).join("\n"));
    assert.match(result.stdout, /set OPENAI_API_KEY where your editor starts Qwen Code/);
    assert.ok(!(result.stdout + result.stderr).includes(key));
  },
);
