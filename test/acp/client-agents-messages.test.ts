/**
 * Issue 20 §2.6: what the person reads. claude-agent-acp's "Not logged in" push is a state, not an account; the
 * no-terminal refusal names every flag the login then needs; a refused agent command names the agent; an
 * agent-named command that is not on PATH (opencode installed locally) says what to run instead.
 */

import assert from "node:assert/strict";
import { chmodSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";
import {
  AcpCommandNotConfirmedError,
  connectAgent,
  runInheritedTerminal,
} from "../../src/acp/client/index.ts";
import { REPO_ROOT, runCli } from "../support/cli.ts";
import { tempDir } from "../support/tmp.ts";
import { scripted } from "./fixtures/acp-cli-process.ts";
import { calls, cleanEnv, stateFolder } from "./fixtures/scripted-agent-harness.ts";

const GUARD = { timeout: 60_000 };
const FIXTURES = join(import.meta.dirname, "fixtures");

test(
  '[ACP-status-push-not-logged-in] claude-agent-acp pushes {kind: "none", label: "Not logged in"}: signed out, with no account',
  GUARD,
  async () => {
    const dir = stateFolder();
    const json = await runCli([
      "acp",
      "status",
      "--json",
      ...scripted("push", dir, "--delay", "100"),
    ]);
    assert.equal(json.code, 0, json.stderr);
    const parsed = JSON.parse(json.stdout);
    assert.equal(parsed.state, "unauthenticated");
    assert.deepEqual(parsed.accounts, []);
    const text = await runCli([
      "acp",
      "status",
      ...scripted("push", stateFolder(), "--delay", "100"),
    ]);
    assert.doesNotMatch(text.stdout, /Account:/);
    assert.match(
      text.stdout,
      /State: {4}unauthenticated \(from _auth\/status_update\)\n {10}Not logged in/,
    );
  },
);

test(
  "[ACP-terminal-refusal-flags] no terminal: the refusal names --force-terminal, and --yes too when the login will need it",
  GUARD,
  async () => {
    // claude-code-acp 0.16 / opencode: a command of the agent's choosing, which needs --yes without a terminal.
    const legacy = await runCli(["acp", "login", ...scripted("legacy", stateFolder())]);
    assert.equal(legacy.code, 1);
    assert.match(legacy.stderr, /pass --force-terminal --yes to run it anyway/);
    // A spec terminal method with no variables of the agent's choosing (our example agent's): --force-terminal only.
    const example = await runCli([
      "acp",
      "login",
      "--method",
      "terminal-login",
      "--",
      process.execPath,
      join(REPO_ROOT, "src", "cli", "main.ts"),
      "acp",
      "example-agent",
    ]);
    assert.equal(example.code, 1);
    assert.match(example.stderr, /pass --force-terminal to run it anyway/);
    assert.doesNotMatch(example.stderr, /--yes/);
  },
);

test(
  "[ACP-command-not-confirmed-name] a command the agent named and nobody confirmed: the error names the agent",
  GUARD,
  async (t) => {
    const dir = stateFolder();
    const client = await connectAgent(
      process.execPath,
      [join(FIXTURES, "scripted-agent-legacy.ts"), "--state", dir],
      { env: cleanEnv(), runTerminal: runInheritedTerminal, confirmCommand: async () => false },
    );
    t.after(() => client.close());
    await assert.rejects(
      client.login(),
      (error) =>
        error instanceof AcpCommandNotConfirmedError &&
        /^Legacy Agent asks to run /.test(error.message) &&
        !/The agent/.test(error.message),
    );
  },
);

test(
  "[ACP-terminal-command-not-found] opencode installed locally names `opencode`, which is not on PATH: the error says what to run instead",
  GUARD,
  async () => {
    const dir = stateFolder();
    // A local install: the agent's program is node_modules/.bin/opencode, not on PATH.
    const bin = join(tempDir(), "node_modules", ".bin");
    const program = join(bin, "opencode");
    mkdirSync(bin, { recursive: true });
    writeFileSync(
      program,
      `#!/bin/sh\nexec ${JSON.stringify(process.execPath)} ${JSON.stringify(join(FIXTURES, "scripted-agent-opencode.ts"))} --state ${JSON.stringify(dir)} "$@"\n`,
    );
    chmodSync(program, 0o755);
    const result = await runCli(
      ["acp", "login", "--force-terminal", "--yes", "--", program, "acp"],
      { PATH: "/usr/bin:/bin" },
    );
    assert.equal(result.code, 1, result.stderr);
    assert.match(result.stderr, /"opencode" is not on PATH/);
    assert.ok(result.stderr.includes(`${program} auth login`), result.stderr);
    assert.doesNotMatch(result.stderr, /spawn opencode ENOENT\.?$/m);
    assert.ok(!calls(dir).includes("terminal-login"));
  },
);
