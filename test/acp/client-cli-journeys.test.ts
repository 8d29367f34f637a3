/**
 * §3.9, §4.1, §4.6, §4.7: `acp status` waits for claude-agent-acp's first status push; prompts name the agent;
 * `acp login --method api-key` takes the key from an environment variable or stdin, never argv; a login when
 * already signed in says who and stops.
 */

import assert from "node:assert/strict";
import { join } from "node:path";
import { test } from "node:test";
import { REPO_ROOT } from "../support/cli.ts";
import { useIdp } from "../support/idp.ts";
import { tempDir } from "../support/tmp.ts";
import { scripted, startAcpCli } from "./fixtures/acp-cli-process.ts";
import {
  agentCommand,
  methods,
  runAcpCli,
  stateFolder,
} from "./fixtures/scripted-agent-harness.ts";

const GUARD = { timeout: 60_000 };
const idp = await useIdp();
const EXAMPLE = join(REPO_ROOT, "test", "acp", "fixtures", "example-agent.ts");

test(
  "[ACP-status-push-wait] an agent advertising _meta.authStatus: status waits for its first _auth/status_update",
  GUARD,
  async () => {
    const dir = stateFolder();
    // The push comes 350 ms (the real agent: 0.35–0.9 s after initialize) after the agent refused the client's
    // getAuthState probe, the client's last question: so status can only report it by waiting for it, and the
    // 2 s wait has 1.65 s to spare for a loaded machine, however long initialize and the probes took.
    const result = await runAcpCli([
      "status",
      "--json",
      ...scripted("push", dir, "--delay", "350", "--after", "getAuthState"),
    ]);
    assert.equal(result.code, 0, result.stderr);
    const parsed = JSON.parse(result.stdout);
    assert.deepEqual([parsed.state, parsed.source], ["unauthenticated", "_auth/status_update"]);
    const seen = methods(dir);
    assert.ok(seen.indexOf("push") > seen.indexOf("getAuthState"), seen.join());
  },
);

test(
  "[ACP-status-push-wait] no push within the wait: unknown, with the reason",
  GUARD,
  async () => {
    const result = await runAcpCli([
      "status",
      "--json",
      ...scripted("push", stateFolder(), "--delay", "30000"),
    ]);
    assert.equal(result.code, 0, result.stderr);
    const parsed = JSON.parse(result.stdout);
    assert.equal(parsed.state, "unknown");
    assert.match(parsed.reason, /did not report its state/);
  },
);

test(
  "[ACP-login-agent-name] the sign-in prompt names the agent, not the method",
  GUARD,
  async () => {
    const [command, args] = agentCommand("url", stateFolder());
    const result = await runAcpCli(["login", "--method", "browser", "--", command, ...args]);
    assert.equal(result.code, 0, result.stderr);
    assert.match(
      result.stderr,
      /To sign in to scripted-agent \(Sign in with your browser\):\n\n {2}Open: https:/,
    );
  },
);

test(
  "[ACP-login-already-signed-in] login when already signed in says who and stops (exit 0); --force signs in again",
  GUARD,
  async () => {
    const dir = stateFolder();
    const [command, args] = agentCommand("url", dir, "--state-value", "authenticated");
    const result = await runAcpCli(["login", "--", command, ...args]);
    assert.equal(result.code, 0, result.stderr);
    assert.match(
      result.stdout,
      /Already signed in to scripted-agent as Scripted Max; nothing was changed\. To sign in again, pass --force; to switch methods, --force --method ID/,
    );
    assert.ok(!methods(dir).includes("authenticate"));
    const json = await runAcpCli(["login", "--json", "--", command, ...args]);
    assert.equal(JSON.parse(json.stdout).outcome, "already_signed_in");

    const forced = await runAcpCli(["login", "--force", "--", command, ...args]);
    assert.equal(forced.code, 0, forced.stderr);
    assert.ok(methods(dir).includes("authenticate"));
  },
);

function example(home: string): { env: NodeJS.ProcessEnv; agent: string[] } {
  return {
    env: { AGENTAUTH_HOME: home, ISSUER: idp.issuer },
    agent: ["--", process.execPath, "--no-warnings", EXAMPLE],
  };
}

test(
  "[ACP-login-api-key-env] --api-key-env VAR: the key is read from the variable and signs in; it is printed nowhere",
  GUARD,
  async () => {
    const { env, agent } = example(tempDir());
    const key = "echo-env-key-7f3a9c";
    const result = await runAcpCli(
      ["login", "--method", "api-key", "--api-key-env", "MY_ECHO_KEY", ...agent],
      { ...env, MY_ECHO_KEY: key },
    );
    assert.equal(result.code, 0, result.stderr);
    assert.match(result.stdout, /Logged in to .* with "API key"/);
    assert.ok(!(result.stdout + result.stderr).includes(key));

    const unset = await runAcpCli(
      ["login", "--method", "api-key", "--api-key-env", "NOT_SET_ANYWHERE", ...agent],
      env,
    );
    assert.equal(unset.code, 2);
    assert.match(unset.stderr, /NOT_SET_ANYWHERE is not set/);
  },
);

test(
  "[ACP-login-api-key-stdin] --api-key-stdin: the key is read from stdin and signs in; it is printed nowhere",
  GUARD,
  async () => {
    const { env, agent } = example(tempDir());
    const key = "echo-stdin-key-51be02";
    const cli = startAcpCli(["login", "--method", "api-key", "--api-key-stdin", ...agent], {
      env,
      input: `${key}\n`,
    });
    const result = await cli.exited;
    assert.equal(result.code, 0, result.stderr);
    assert.match(result.stdout, /Logged in to .* with "API key"/);
    assert.ok(!(result.stdout + result.stderr).includes(key));
  },
);

test(
  "[ACP-login-api-key-argv] a key on the command line is refused as a usage error (argv is visible to every user)",
  GUARD,
  async () => {
    const { env, agent } = example(tempDir());
    for (const flag of ["--api-key=echo-argv-key", "--api-key"]) {
      const result = await runAcpCli(["login", "--method", "api-key", flag, ...agent], env);
      assert.equal(result.code, 2, result.stderr);
      assert.match(result.stderr, /--api-key-env|--api-key-stdin/);
      assert.ok(!result.stderr.includes("echo-argv-key"));
    }
  },
);
