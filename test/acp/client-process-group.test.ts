/**
 * §3.1/§3.5: nothing an `agentauth acp` command starts survives it. The agent is codex-acp's shape (a Node shim
 * running the real agent, neither ending on end of stdin nor on SIGTERM); liveness is checked by pid.
 */

import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { join } from "node:path";
import { test } from "node:test";
import { REPO_ROOT } from "../support/cli.ts";
import { scripted, startAcpCli } from "./fixtures/acp-cli-process.ts";
import {
  calls,
  cleanEnv,
  isRunning,
  runAcpCli,
  stateFolder,
  until,
} from "./fixtures/scripted-agent-harness.ts";

const GUARD = { timeout: 60_000 };

function pids(dir: string): number[] {
  return calls(dir)
    .filter((line) => line.startsWith("pid "))
    .map((line) => Number(line.split(" ")[2]));
}

/** Kills whatever a failing run left behind, so one failure does not leak processes into the machine. */
function reap(dir: string): void {
  for (const pid of pids(dir)) {
    try {
      process.kill(pid, "SIGKILL");
    } catch {}
  }
}

function stubborn(dir: string): string[] {
  return scripted("stubborn", dir);
}

test(
  "[ACP-process-group-stop] status against a shim whose child ignores stdin EOF and SIGTERM: no process of the group remains",
  GUARD,
  async (t) => {
    const dir = stateFolder();
    t.after(() => reap(dir));
    const result = await runAcpCli(["status", "--json", ...stubborn(dir)]);
    assert.equal(result.code, 0, result.stderr);
    assert.equal(JSON.parse(result.stdout).state, "unauthenticated");
    const started = pids(dir);
    assert.equal(started.length, 2, "the shim and the agent both started");
    assert.deepEqual(
      started.filter((pid) => isRunning(pid)),
      [],
      "the shim and its child are gone",
    );
  },
);

for (const signal of ["SIGINT", "SIGTERM"] as const) {
  test(
    `[ACP-cli-cancel-${signal}] ${signal} to the CLI mid-login: acp_cancelled, exit 130, no process of the group remains`,
    GUARD,
    async (t) => {
      const dir = stateFolder();
      t.after(() => reap(dir));
      const cli = startAcpCli(["login", ...stubborn(dir)]);
      await until(() => calls(dir).some((line) => line.startsWith("authenticate")));
      await cli.waitFor("stderr", /Ctrl-C cancels/);
      cli.kill(signal);
      const result = await cli.exited;
      assert.equal(result.code, 130, result.stderr);
      assert.match(result.stderr, /cancelled.*\[acp_cancelled\]/);
      assert.doesNotMatch(result.stderr, /Logged in/);
      assert.deepEqual(
        pids(dir).filter((pid) => isRunning(pid)),
        [],
        "the shim and its child are gone",
      );
    },
  );
}

test(
  "[ACP-login-waiting] an agent login that waits says so, names the agent and method, and surfaces a URL the agent printed on stderr",
  GUARD,
  async (t) => {
    const dir = stateFolder();
    t.after(() => reap(dir));
    const cli = startAcpCli(["login", ...stubborn(dir)]);
    await cli.waitFor("stderr", /127\.0\.0\.1:1455/);
    cli.kill("SIGINT");
    const result = await cli.exited;
    assert.match(
      result.stderr,
      /Waiting for scripted-agent to finish signing in with ChatGPT… \(Ctrl-C cancels\)/,
    );
    assert.match(result.stderr, /http:\/\/127\.0\.0\.1:1455\/auth\/callback\?x=1/);
  },
);

test(
  "[ACP-cli-cancel-terminal-login] SIGTERM during a terminal login that ignores SIGTERM: the login process is stopped, acp_cancelled, exit 130",
  GUARD,
  async (t) => {
    const dir = stateFolder();
    t.after(() => reap(dir));
    const cli = startAcpCli(["login", "--force-terminal", "--yes", ...scripted("legacy", dir)], {
      env: { LEGACY_HANG: "1" },
    });
    await until(() => calls(dir).some((line) => line.startsWith("terminal-login")));
    cli.kill("SIGTERM");
    const result = await cli.exited;
    assert.equal(result.code, 130, result.stderr);
    assert.match(result.stderr, /\[acp_cancelled\]/);
    const pid = Number(
      calls(dir)
        .find((line) => line.startsWith("terminal-login"))
        ?.split("pid=")[1],
    );
    assert.ok(pid > 0);
    assert.equal(isRunning(pid), false, "the terminal login process is gone");
  },
);

test(
  "[ACP-cli-hostile-flags] malformed login flags are usage errors (exit 2) that say what is expected",
  GUARD,
  async () => {
    const agent = scripted("legacy", stateFolder());
    const cases: Array<[string[], RegExp]> = [
      [["--timeout", "abc"], /--timeout takes seconds/],
      [["--timeout", "0"], /--timeout takes seconds/],
      [["--timeout", "1e9"], /--timeout takes seconds/],
      [["--api-key-env", "A", "--api-key-stdin"], /one way/],
      [["--api-key-env", "NOT_SET_ANYWHERE_XYZ"], /NOT_SET_ANYWHERE_XYZ is not set/],
      [["--api-key-stdin"], /stdin held no key/],
    ];
    for (const [flags, expected] of cases) {
      const result = await runAcpCli(["login", ...flags, ...agent]);
      assert.equal(result.code, 2, `${flags.join(" ")}: ${result.stderr}`);
      assert.match(result.stderr, expected);
    }
  },
);

for (const ending of ["process.exit(3)", "an uncaught exception"] as const) {
  test(
    `[ACP-process-group-exit] agentauth leaving by ${ending} without closing the client: no process of the agent's group remains`,
    GUARD,
    async (t) => {
      const dir = stateFolder();
      t.after(() => reap(dir));
      const client = join(REPO_ROOT, "src", "acp", "client", "index.ts");
      const agent = join(import.meta.dirname, "fixtures", "scripted-agent-stubborn.ts");
      const leave =
        ending === "process.exit(3)"
          ? "process.exit(3);"
          : 'setImmediate(() => { throw new Error("boom"); });';
      const script = `
        import { connectAgent } from ${JSON.stringify(client)};
        await connectAgent(process.execPath, [${JSON.stringify(agent)}, "--state", ${JSON.stringify(dir)}], {});
        ${leave}
      `;
      const host = spawn(process.execPath, ["--input-type=module", "-e", script], {
        env: cleanEnv(),
        stdio: ["ignore", "ignore", "pipe"],
      });
      let stderr = "";
      host.stderr.on("data", (chunk: Buffer) => {
        stderr += chunk.toString();
      });
      const code = await new Promise<number | null>((resolve) => host.on("exit", resolve));
      assert.notEqual(code, 0, stderr);
      const started = pids(dir);
      assert.equal(started.length, 2, `the shim and the agent both started: ${stderr}`);
      // SIGKILL is sent before exit returns, but the kernel may take a moment to reap: poll a bounded number of times.
      for (let i = 0; i < 250 && started.some((pid) => isRunning(pid)); i++)
        await new Promise((resolve) => setTimeout(resolve, 20));
      assert.deepEqual(
        started.filter((pid) => isRunning(pid)),
        [],
        "the shim and its child are gone",
      );
    },
  );
}
