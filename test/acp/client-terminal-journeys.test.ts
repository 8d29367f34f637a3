/**
 * §3.4, §3.7: terminal logins need a terminal (or `--force-terminal`) and end at a timeout; legacy terminal
 * descriptors (`_meta["terminal-auth"]`, qwen's `_meta.type`) run, an agent-named command only once confirmed.
 */

import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { test } from "node:test";
import { readAuthMethods } from "../../src/acp/client/auth-methods.ts";
import { connectAgent } from "../../src/acp/client/index.ts";
import { scripted } from "./fixtures/acp-cli-process.ts";
import {
  agentCommand,
  calls,
  cleanEnv,
  isRunning,
  methods,
  runAcpCli,
  stateFolder,
} from "./fixtures/scripted-agent-harness.ts";

const GUARD = { timeout: 60_000 };

test(
  "[ACP-terminal-needs-tty] stdin not a TTY: a terminal method is refused with how to force it, and nothing runs",
  GUARD,
  async () => {
    const dir = stateFolder();
    const [command, args] = agentCommand("terminal", dir);
    const result = await runAcpCli(["login", "--", command, ...args]);
    assert.equal(result.code, 1);
    assert.match(result.stderr, /not a terminal.*--force-terminal/);
    assert.match(result.stderr, /\[acp_method_unsupported\]/);
    assert.ok(!methods(dir).includes("terminal-login"));
  },
);

test(
  "[ACP-terminal-timeout] a terminal login that never ends is stopped at --timeout and reported as acp_timeout",
  GUARD,
  async () => {
    const dir = stateFolder();
    const result = await runAcpCli(
      ["login", "--force-terminal", "--yes", "--timeout", "3", ...scripted("legacy", dir)],
      { LEGACY_HANG: "1" },
    );
    assert.equal(result.code, 1, result.stderr);
    assert.match(result.stderr, /did not finish within 3 s and was stopped.*\[acp_timeout\]/);
    // On a loaded machine the login may be stopped before it wrote its pid: then no process may name its folder.
    const pid = Number(
      calls(dir)
        .find((line) => line.startsWith("terminal-login"))
        ?.split("pid=")[1],
    );
    if (pid > 0) assert.equal(isRunning(pid), false, "the login process is gone");
    const survivors = execFileSync("ps", ["-eo", "args"], { encoding: "utf8" })
      .split("\n")
      .filter((line) => line.includes(dir) && line.includes("--login"));
    assert.deepEqual(survivors, [], "no login process of this test remains");
  },
);

test(
  '[ACP-legacy-terminal-auth] _meta["terminal-auth"]: opted in at initialize, the agent-named command runs with --yes, never authenticate',
  GUARD,
  async () => {
    const dir = stateFolder();
    const result = await runAcpCli([
      "login",
      "--force-terminal",
      "--yes",
      ...scripted("legacy", dir),
    ]);
    assert.equal(result.code, 0, result.stderr);
    assert.ok(calls(dir).includes("initialize terminal-auth=true"), calls(dir).join("\n"));
    assert.ok(calls(dir).some((line) => line.startsWith("terminal-login LEGACY_LOGIN=1")));
    assert.ok(!methods(dir).includes("authenticate"));
    assert.match(
      result.stderr,
      /Legacy Agent asks to run: .*scripted-agent-legacy\.ts --state .* --login/,
    );
    assert.match(result.stdout, /Logged in to Legacy Agent/);
  },
);

test(
  "[ACP-legacy-terminal-confirm] no TTY and no --yes: the agent-named command is shown and refused, with how to allow it",
  GUARD,
  async () => {
    const dir = stateFolder();
    const result = await runAcpCli(["login", "--force-terminal", ...scripted("legacy", dir)]);
    assert.equal(result.code, 1);
    assert.match(result.stderr, /scripted-agent-legacy\.ts --state .* --login/);
    assert.match(result.stderr, /--yes/);
    assert.match(result.stderr, /\[acp_command_not_confirmed\]/);
    assert.ok(!methods(dir).includes("terminal-login"));
  },
);

test(
  '[ACP-legacy-meta-type-terminal] qwen\'s _meta {type: "terminal", args}: the configured command runs with the args appended',
  GUARD,
  async () => {
    const dir = stateFolder();
    const result = await runAcpCli([
      "login",
      "--force-terminal",
      ...scripted("legacy", dir, "--style", "qwen"),
    ]);
    assert.equal(result.code, 0, result.stderr);
    assert.ok(calls(dir).some((line) => line.startsWith("terminal-login")));
    assert.ok(!methods(dir).includes("authenticate"));
    const status = await runAcpCli([
      "status",
      "--json",
      ...scripted("legacy", dir, "--style", "qwen"),
    ]);
    const parsed = JSON.parse(status.stdout);
    assert.equal(parsed.state, "authenticated");
    assert.deepEqual(parsed.authMethods, [
      { id: "openai", name: "Use OpenAI API key", type: "agent", terminalLogin: true },
    ]);
  },
);

test(
  '[ACP-login-error-detail] qwen\'s authenticate error detail ("Missing API key … set OPENAI_API_KEY") is shown',
  GUARD,
  async (t) => {
    // A caller that runs no terminals sends the legacy method to authenticate, as the agent advertises it (type
    // agent); the agent's detail must reach the person.
    const [command = "", ...args] = scripted("legacy", stateFolder(), "--style", "qwen").slice(1);
    const client = await connectAgent(command, args, { env: cleanEnv() });
    t.after(() => client.close());
    await assert.rejects(client.login("openai"), (error: Error & { code?: string }) => {
      assert.equal(error.code, "acp_login_failed");
      assert.match(
        error.message,
        /Missing API key for OpenAI-compatible auth\. Set OPENAI_API_KEY/,
      );
      return true;
    });
  },
);

test(
  "[ACP-terminal-env-confirm] a spec terminal method that sets variables is shown with them and refused without --yes; with --yes it runs",
  GUARD,
  async () => {
    const dir = stateFolder();
    const [command, args] = agentCommand("terminal", dir);
    const refused = await runAcpCli(["login", "--force-terminal", "--", command, ...args]);
    assert.equal(refused.code, 1, refused.stderr);
    assert.match(
      refused.stderr,
      /SCRIPTED_LOGIN=1 .*scripted-agent-terminal\.ts --state .* --login/,
    );
    assert.match(refused.stderr, /--yes/);
    assert.match(refused.stderr, /\[acp_command_not_confirmed\]/);
    assert.ok(!methods(dir).includes("terminal-login"), "nothing ran");
    const allowed = await runAcpCli(["login", "--force-terminal", "--yes", "--", command, ...args]);
    assert.equal(allowed.code, 0, allowed.stderr);
    assert.match(allowed.stderr, /asks to run: SCRIPTED_LOGIN=1 .*--login/);
    assert.ok(calls(dir).includes("terminal-login SCRIPTED_LOGIN=1"));
  },
);

test(
  "[ACP-terminal-env-confirm] a terminal login without variables runs without asking, but its command line is printed",
  GUARD,
  async () => {
    const dir = stateFolder();
    const result = await runAcpCli([
      "login",
      "--force-terminal",
      ...scripted("legacy", dir, "--style", "qwen"),
    ]);
    assert.equal(result.code, 0, result.stderr);
    assert.match(result.stderr, /runs: .*scripted-agent-legacy\.ts .*--login/);
  },
);

test("[ACP-terminal-env-confirm] variable names outside [A-Za-z_][A-Za-z0-9_]* make the terminal method unusable", () => {
  const hostile = [
    "BAD\nNAME",
    "A B",
    "1ABC",
    "PATH\u001b[2J",
    "",
    "X=Y",
    "LD-PRELOAD",
    "\u202eEVIL",
  ];
  for (const name of hostile) {
    const [spec] = readAuthMethods([{ id: "tty", type: "terminal", env: { [name]: "x" } }], 1);
    assert.equal(spec, undefined, JSON.stringify(name));
    const [v2] = readAuthMethods(
      [{ methodId: "tty", type: "terminal", env: [{ name, value: "x" }] }],
      2,
    );
    assert.equal(v2, undefined, JSON.stringify(name));
    const [qwen] = readAuthMethods(
      [{ id: "q", _meta: { type: "terminal", args: [], env: { [name]: "x" } } }],
      1,
    );
    assert.equal(qwen?.terminal, undefined, JSON.stringify(name));
    const [named] = readAuthMethods(
      [
        {
          id: "n",
          _meta: { "terminal-auth": { command: "login", args: [], env: { [name]: "x" } } },
        },
      ],
      1,
    );
    assert.equal(named?.terminal, undefined, JSON.stringify(name));
  }
  const [fine] = readAuthMethods(
    [{ id: "tty", type: "terminal", env: { _OK_1: "x", path: "y" } }],
    1,
  );
  assert.deepEqual(fine?.env, { _OK_1: "x", path: "y" });
});
