/**
 * Issue 20 §2.1–2.3: `agentauth acp login` against gemini-cli 0.61.0 as it really behaves
 * (fixtures/scripted-agent-gemini.ts says what it does and where in its bundle): the API key reaches it in the one
 * shape it reads, a key method without a key is refused before anything is sent, and `oauth-personal`, which asks
 * for a code on the ACP channel, is stopped at once without being written to.
 */

import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";
import { runCli } from "../support/cli.ts";
import { scripted } from "./fixtures/acp-cli-process.ts";
import { calls, isRunning, stateFolder } from "./fixtures/scripted-agent-harness.ts";

const GUARD = { timeout: 60_000 };

/** What gemini reads from its environment, unset whatever the machine running the tests has. */
const NO_GEMINI_ENV = {
  GEMINI_API_KEY: undefined,
  GOOGLE_API_KEY: undefined,
  GOOGLE_CLOUD_PROJECT: undefined,
  GOOGLE_CLOUD_PROJECT_ID: undefined,
  GOOGLE_CLOUD_LOCATION: undefined,
  GOOGLE_GEMINI_BASE_URL: undefined,
};

/** The real `agentauth` (src/cli/main.ts), so `--json` errors are printed as users get them. */
function acp(args: string[], env: NodeJS.ProcessEnv) {
  return runCli(["acp", ...args], env);
}

function gemini(dir: string, ...flags: string[]): string[] {
  return scripted("gemini", dir, ...flags);
}

function agentPids(dir: string): number[] {
  return calls(dir)
    .filter((line) => line.startsWith("start "))
    .map((line) => Number(/pid=(\d+)/.exec(line)?.[1]));
}

test(
  "[ACP-login-gemini-api-key-string] --api-key-env: gemini receives the key as the plain string it reads, a session confirms it, and the person learns where the key lives",
  GUARD,
  async () => {
    const dir = stateFolder();
    const key = "AIza-test-gemini-key-8f2c";
    const env = { ...NO_GEMINI_ENV, MY_GEMINI_KEY: key, SCRIPTED_EXPECTED_KEY: key };
    const result = await acp(
      ["login", "--method", "gemini-api-key", "--api-key-env", "MY_GEMINI_KEY", ...gemini(dir)],
      env,
    );
    assert.equal(result.code, 0, result.stderr);
    const log = calls(dir);
    assert.ok(log.includes("authenticate gemini-api-key api-key=string(match)"), log.join("\n"));
    assert.ok(log.includes("session/new ok gemini-api-key"), log.join("\n"));
    assert.match(result.stdout, /Gemini CLI accepted .*a session opened/);
    // What happened to the key (gone with the agent agentauth started), and what the next start needs.
    assert.match(
      result.stdout,
      /did not store the key: only the agent process this login started holds it, and the key is gone once that process stops/,
    );
    assert.match(
      result.stdout,
      /now starts with gemini-api-key selected: set GEMINI_API_KEY where your editor/,
    );
    assert.doesNotMatch(result.stdout + result.stderr, /Logged in/);
    assert.ok(!(result.stdout + result.stderr).includes(key));

    const json = await acp(
      [
        "login",
        "--json",
        "--method",
        "gemini-api-key",
        "--api-key-env",
        "MY_GEMINI_KEY",
        ...gemini(stateFolder()),
      ],
      env,
    );
    assert.equal(json.code, 0, json.stderr);
    const parsed = JSON.parse(json.stdout);
    assert.equal(parsed.outcome, "session_opened");
    assert.match(parsed.note, /GEMINI_API_KEY/);
  },
);

test(
  "[ACP-login-key-method-needs-key] a key method with no key is refused before anything is sent: no empty authenticate, the cached Google sign-in stays",
  GUARD,
  async () => {
    const expected: Record<string, RegExp> = {
      "gemini-api-key": /GEMINI_API_KEY.*--api-key-env VAR or --api-key-stdin/s,
      "vertex-ai": /GOOGLE_API_KEY.*GOOGLE_CLOUD_PROJECT and GOOGLE_CLOUD_LOCATION/s,
      gateway: /GOOGLE_GEMINI_BASE_URL/,
    };
    for (const [method, names] of Object.entries(expected)) {
      const dir = stateFolder();
      const result = await acp(
        ["login", "--method", method, ...gemini(dir, "--signed-in-google")],
        NO_GEMINI_ENV,
      );
      assert.equal(result.code, 1, `${method}: ${result.stderr}`);
      assert.match(result.stderr, /\[acp_env_vars_missing\]/);
      assert.match(result.stderr, names);
      assert.match(result.stderr, /Gemini CLI/);
      assert.ok(!calls(dir).some((line) => line.startsWith("authenticate")), calls(dir).join("\n"));
      assert.ok(existsSync(join(dir, "google-credentials")), `${method}: the Google sign-in stays`);
    }
  },
);

test(
  "[ACP-login-key-method-needs-key] with GEMINI_API_KEY in the agent's environment the method runs: authenticate without _meta, and a session confirms",
  GUARD,
  async () => {
    const dir = stateFolder();
    const result = await acp(["login", "--method", "gemini-api-key", ...gemini(dir)], {
      ...NO_GEMINI_ENV,
      GEMINI_API_KEY: "AIza-from-env",
    });
    assert.equal(result.code, 0, result.stderr);
    assert.ok(calls(dir).includes("authenticate gemini-api-key api-key=absent"));
    assert.ok(calls(dir).includes("session/new ok gemini-api-key"));
    assert.match(result.stdout, /reads GEMINI_API_KEY from its environment/);
  },
);

test(
  "[ACP-login-key-note-variable] vertex-ai signed in by GOOGLE_CLOUD_PROJECT and GOOGLE_CLOUD_LOCATION: the note names those, not GOOGLE_API_KEY",
  GUARD,
  async () => {
    const dir = stateFolder();
    const result = await acp(["login", "--method", "vertex-ai", ...gemini(dir)], {
      ...NO_GEMINI_ENV,
      GOOGLE_CLOUD_PROJECT: "my-project",
      GOOGLE_CLOUD_LOCATION: "us-central1",
    });
    assert.equal(result.code, 0, result.stderr);
    assert.ok(calls(dir).includes("authenticate vertex-ai api-key=absent"), calls(dir).join("\n"));
    assert.match(
      result.stdout,
      /reads GOOGLE_CLOUD_PROJECT and GOOGLE_CLOUD_LOCATION from its environment/,
    );
    assert.doesNotMatch(result.stdout, /GOOGLE_API_KEY/);
  },
);

test(
  "[ACP-login-keeps-sign-in] plain login (no --method) with GEMINI_API_KEY set and a working Google sign-in: a session shows it is signed in, so nothing is sent and the sign-in stays",
  GUARD,
  async () => {
    const dir = stateFolder();
    const env = { ...NO_GEMINI_ENV, GEMINI_API_KEY: "AIza-unrelated" };
    const result = await acp(["login", ...gemini(dir, "--signed-in-google")], env);
    assert.equal(result.code, 0, result.stderr);
    assert.match(
      result.stdout,
      /Already signed in to Gemini CLI \(it reports no state, but it opened a session\); nothing was changed/,
    );
    assert.match(
      result.stdout,
      /--force --method ID \(Gemini CLI advertises: oauth-personal, gemini-api-key/,
    );
    const log = calls(dir);
    assert.ok(!log.some((line) => line.startsWith("authenticate")), log.join("\n"));
    assert.ok(existsSync(join(dir, "google-credentials")), "the Google sign-in stays");

    const json = await acp(
      ["login", "--json", ...gemini(stateFolder(), "--signed-in-google")],
      env,
    );
    assert.equal(json.code, 0, json.stderr);
    assert.equal(JSON.parse(json.stdout).outcome, "already_signed_in");
  },
);

test(
  "[ACP-login-keeps-sign-in] plain login when neither the state nor a session can tell: refused, naming --method and --force; nothing sent",
  GUARD,
  async () => {
    const dir = stateFolder();
    const result = await acp(["login", ...gemini(dir, "--session-fails")], {
      ...NO_GEMINI_ENV,
      GEMINI_API_KEY: "AIza-unrelated",
    });
    assert.equal(result.code, 1, result.stderr);
    assert.match(result.stderr, /\[acp_sign_in_unknown\]/);
    assert.match(result.stderr, /cannot tell whether Gemini CLI is signed in/);
    assert.match(result.stderr, /--method .*gemini-api-key/);
    assert.ok(!calls(dir).some((line) => line.startsWith("authenticate")), calls(dir).join("\n"));
  },
);

test(
  "[ACP-login-stdin-prompt] oauth-personal asks for a code on the ACP channel: stopped at once, nothing written to it, and the person is told what works",
  GUARD,
  async () => {
    const dir = stateFolder();
    // No --method: the default choice for a client that shows URLs is gemini's first agent method.
    const result = await acp(["login", "--json", ...gemini(dir)], NO_GEMINI_ENV);
    assert.equal(result.code, 1, result.stderr);
    const error = JSON.parse(result.stdout).error;
    assert.equal(error.code, "acp_agent_prompted");
    assert.match(error.message, /Gemini CLI asked .*"Enter the authorization code:"/);
    assert.match(error.message, /cannot finish over ACP/);
    assert.match(error.message, /run `gemini` once in a terminal/);
    assert.match(error.message, /gemini-api-key/);
    assert.ok(!error.message.includes("\u001b"));
    const log = calls(dir);
    assert.ok(log.includes("authenticate oauth-personal api-key=absent"), log.join("\n"));
    assert.deepEqual(
      log.filter((line) => line.startsWith("code-read") || line.startsWith("notification")),
      [],
      "nothing reached the agent's stdin after its prompt",
    );
    for (const pid of agentPids(dir)) assert.ok(!isRunning(pid), `agent ${pid} was stopped`);
  },
);
