/** `agentauth acp status|login|logout -- <agent command…>` as a real process against the scripted agents. */

import assert from "node:assert/strict";
import { test } from "node:test";
import {
  agentCommand,
  calls,
  methods,
  runAcpCli,
  stateFolder,
  type Variant,
} from "./fixtures/scripted-agent-harness.ts";

const GUARD = { timeout: 60_000 };
const STACK_FRAME = /^\s+at /m;

function agent(variant: Variant, dir: string, ...flags: string[]): string[] {
  const [command, args] = agentCommand(variant, dir, ...flags);
  return ["--", command, ...args];
}

test(
  "[ACP-cli-status-json] status --json: one object with version, agent, methods, capabilities, state, accounts, source",
  GUARD,
  async () => {
    const dir = stateFolder();
    const result = await runAcpCli(["status", "--json", ...agent("terminal", dir)]);
    assert.equal(result.code, 0, result.stderr);
    assert.deepEqual(JSON.parse(result.stdout), {
      protocolVersion: 1,
      agent: { name: "scripted-agent", version: "1.0.0" },
      authMethods: [{ id: "tty", name: "Log in from the terminal", type: "terminal" }],
      capabilities: { logout: false, status: true, getAuthState: false },
      state: "unauthenticated",
      accounts: [],
      source: "auth/status",
    });
  },
);

test(
  "[ACP-cli-status-json] source says which mechanism answered: getAuthState, or none",
  GUARD,
  async () => {
    const viaDraft = await runAcpCli([
      "status",
      "--json",
      ...agent("get-auth-state", stateFolder()),
    ]);
    assert.equal(viaDraft.code, 0, viaDraft.stderr);
    const draft = JSON.parse(viaDraft.stdout);
    assert.deepEqual(
      [draft.state, draft.source, draft.capabilities.getAuthState],
      ["unauthenticated", "getAuthState", true],
    );

    const viaNothing = await runAcpCli(["status", "--json", ...agent("bare", stateFolder())]);
    assert.equal(viaNothing.code, 0, viaNothing.stderr);
    const bare = JSON.parse(viaNothing.stdout);
    assert.deepEqual([bare.state, bare.source], ["unknown", "none"]);
    assert.match(bare.reason, /neither auth\/status nor getAuthState/);

    const v2 = await runAcpCli([
      "status",
      "--json",
      "--protocol",
      "2",
      ...agent("v2", stateFolder()),
    ]);
    assert.equal(v2.code, 0, v2.stderr);
    assert.deepEqual(
      JSON.parse(v2.stdout).authMethods.map((m: { type: string }) => m.type),
      ["agent", "terminal", "_vendor_sso"],
    );
  },
);

test(
  "[ACP-cli-no-secrets] status prints accounts for display but never the agent's _meta",
  GUARD,
  async () => {
    const dir = stateFolder();
    for (const format of [["--json"], []]) {
      const result = await runAcpCli([
        "status",
        ...format,
        ...agent("url", dir, "--state-value", "authenticated"),
      ]);
      assert.equal(result.code, 0, result.stderr);
      assert.match(result.stdout, /Scripted Max/);
      assert.doesNotMatch(result.stdout + result.stderr, /SHOULD-NOT-PRINT|accessToken|_meta/);
    }
  },
);

test("[ACP-cli-status-text] status without --json is a short human summary", GUARD, async () => {
  const result = await runAcpCli(["status", ...agent("get-auth-state", stateFolder())]);
  assert.equal(result.code, 0, result.stderr);
  assert.equal(
    result.stdout,
    "scripted-agent 1.0.0 (ACP v1)\n" +
      "State:    unauthenticated (from getAuthState)\n" +
      "          No credentials configured\n" +
      "Method:   login (agent) Sign in\n" +
      "Logout:   supported\n",
  );
});

test(
  "[ACP-cli-login-terminal] login runs a terminal-only agent's method with inherited stdio and exits 0",
  GUARD,
  async () => {
    const dir = stateFolder();
    // The test's stdin is not a terminal: the run is forced (without the flag it is refused, see ACP-terminal-needs-tty),
    // and the method sets a variable, so it needs --yes (see ACP-terminal-env-confirm).
    const result = await runAcpCli([
      "login",
      "--force-terminal",
      "--yes",
      ...agent("terminal", dir),
    ]);
    assert.equal(result.code, 0, result.stderr);
    assert.match(
      result.stdout,
      /Logged in to scripted-agent with "Log in from the terminal" \(tty\); state: authenticated\./,
    );
    assert.ok(calls(dir).includes("terminal-login SCRIPTED_LOGIN=1"));
    const after = await runAcpCli(["status", "--json", ...agent("terminal", dir)]);
    assert.equal(JSON.parse(after.stdout).state, "authenticated");
  },
);

test(
  "[ACP-cli-login-url] login prints the URL it receives on stderr and exits 0 when the agent says authenticated",
  GUARD,
  async () => {
    const dir = stateFolder();
    const result = await runAcpCli(["login", "--method", "browser", ...agent("url", dir)]);
    assert.equal(result.code, 0, result.stderr);
    assert.match(result.stderr, /Open: https:\/\/login\.example\.com\/device\?user_code=ABCD-EFGH/);
    assert.ok(
      !result.stderr.includes("\u001b"),
      "no escape sequence from the agent reaches the terminal",
    );
    // auth/status first: a login when already signed in stops there (ACP-login-already-signed-in).
    assert.deepEqual(methods(dir).slice(0, 4), [
      "initialize",
      "auth/status",
      "authenticate",
      "elicitation",
    ]);
  },
);

test(
  "[ACP-cli-login-env-var] no TTY: env_var values come from the CLI's environment, else a clear failure",
  GUARD,
  async () => {
    const missing = await runAcpCli(["login", ...agent("env-var", stateFolder())]);
    assert.equal(missing.code, 1);
    assert.match(
      missing.stderr,
      /needs SCRIPTED_API_KEY; there is no terminal to ask on, so set it in the environment/,
    );
    assert.match(missing.stderr, /\[acp_env_vars_missing\]/);

    const dir = stateFolder();
    const env = { SCRIPTED_API_KEY: "sk-cli-456", SCRIPTED_EXPECTED_KEY: "sk-cli-456" };
    // With the key in its environment the agent already reports authenticated: --force runs the method anyway.
    const present = await runAcpCli(["login", "--force", ...agent("env-var", dir)], env);
    assert.equal(present.code, 0, present.stderr);
    assert.ok(calls(dir).includes("authenticate api-key key=match"));
    assert.doesNotMatch(present.stdout + present.stderr, /sk-cli-456/);
  },
);

test(
  "[ACP-cli-login-failure] a login the agent refuses exits 1 with the typed code",
  GUARD,
  async () => {
    const result = await runAcpCli(["login", ...agent("url", stateFolder(), "--bad-url")]);
    assert.equal(result.code, 1);
    assert.match(
      result.stderr,
      /^Waiting for scripted-agent to finish signing in with .*\nagentauth: scripted-agent refused the login with "browser": .*\[acp_login_failed\]\n$/,
    );
  },
);

test(
  "[ACP-cli-logout] logout: 1 with acp_logout_unsupported when not advertised (never sent), 0 when it is",
  GUARD,
  async () => {
    const dir = stateFolder();
    const refused = await runAcpCli(["logout", ...agent("bare", dir)]);
    assert.equal(refused.code, 1);
    assert.match(refused.stderr, /\[acp_logout_unsupported\]/);
    assert.ok(!methods(dir).includes("logout"));

    const supported = await runAcpCli(["logout", ...agent("get-auth-state", stateFolder())]);
    assert.equal(supported.code, 0, supported.stderr);
    assert.equal(supported.stdout, "Logged out of scripted-agent; state: unauthenticated.\n");
  },
);

test(
  "[ACP-cli-exit-codes] usage mistakes exit 2 with one line and the help hint",
  GUARD,
  async () => {
    for (const args of [
      ["status"],
      ["status", "--json"],
      ["login", "--"],
      ["frobnicate", "--", "x"],
      [],
      ["status", "--protocol", "3", "--", "x"],
      ["status", "--no-such-flag", "--", "x"],
    ]) {
      const result = await runAcpCli(args);
      assert.equal(result.code, 2, `${args.join(" ")}: ${result.stderr}`);
      assert.equal(result.stdout, "");
      // The hint names the command's own help (`agentauth acp status --help`); a missing subcommand shows the usage.
      assert.match(
        result.stderr,
        /^agentauth: .*\n(?:[\s\S]*\n)?Run 'agentauth [^']*--help' for .*\.\n$/,
      );
    }
  },
);

test(
  "[ACP-cli-exit-codes] a failing agent exits 1 with a typed code and no stack trace",
  GUARD,
  async () => {
    const cases: Array<[string[], RegExp]> = [
      [["status", "--", "agentauth-no-such-agent-xyz"], /\[acp_spawn_failed\]/],
      [
        ["status", ...agent("garbage", stateFolder(), "--mode", "exit")],
        /exited with code 3.*\[acp_agent_exited\]/,
      ],
      [
        ["status", "--protocol", "2", ...agent("bare", stateFolder())],
        /protocol version 1.*\[acp_initialize_failed\]/,
      ],
    ];
    for (const [args, expected] of cases) {
      const result = await runAcpCli(args);
      assert.equal(result.code, 1, result.stderr);
      assert.match(result.stderr, expected);
      assert.doesNotMatch(result.stderr, STACK_FRAME);
      assert.equal(result.stdout, "");
    }
  },
);
