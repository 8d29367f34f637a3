/**
 * The example agent run by hand in a terminal says, on stderr, that it speaks ACP on stdio and how to use it;
 * spawned by an ACP client (pipes, not a terminal) it says nothing, so client logs stay clean. The terminal is a
 * real pseudo-terminal (util-linux `script`), the agent a real process.
 */

import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { join } from "node:path";
import { test } from "node:test";
import { REPO_ROOT } from "../support/cli.ts";
import { useIdp } from "../support/idp.ts";
import { tempDir } from "../support/tmp.ts";
import { agentEnv, initializeV1, startAgent } from "./fixtures/agent-process.ts";

const idp = await useIdp();
const TIMEOUT = { timeout: 30_000 };
const CLI = join(REPO_ROOT, "src", "cli", "main.ts");
const NOTICE =
  /speaking ACP \(JSON-RPC\) on stdin\/stdout; run it from an ACP client, e.g\. `agentauth acp status -- agentauth acp example-agent`/;

test(
  "[ACP-example-hand-run-notice] in a terminal the agent prints one stderr line saying it speaks ACP on stdio; Ctrl-D ends it with 0",
  TIMEOUT,
  async (t) => {
    const quote = (s: string) => `'${s.replaceAll("'", "'\\''")}'`;
    // `agentauth acp example-agent` as a person types it; `script` gives it a pseudo-terminal for stdin, stdout and stderr.
    const child = spawn(
      "script",
      [
        "-qec",
        `${quote(process.execPath)} ${quote(CLI)} acp example-agent --issuer ${quote(idp.issuer)}`,
        "/dev/null",
      ],
      { env: agentEnv({ issuer: idp.issuer, home: tempDir() }), stdio: ["pipe", "pipe", "pipe"] },
    );
    const exited = new Promise<number | null>((resolve) => child.once("close", resolve));
    t.after(async () => {
      if (child.exitCode === null && child.signalCode === null) child.kill("SIGTERM");
      await exited;
    });
    let screen = "";
    child.stdout.setEncoding("utf8");
    await new Promise<void>((resolve, reject) => {
      child.stdout.on("data", (chunk: string) => {
        screen += chunk;
        if (NOTICE.test(screen)) resolve();
      });
      child.once("close", () => reject(new Error(`exited before the notice: ${screen}`)));
    });
    assert.equal(screen.match(/speaking ACP/g)?.length, 1, "exactly one line");
    child.stdin.write("\u0004"); // Ctrl-D: end of input on the terminal
    assert.equal(await exited, 0, `the agent ended cleanly: ${screen}`);
  },
);

test(
  "[ACP-example-hand-run-quiet-for-clients] spawned by a client on pipes, the agent writes nothing to stderr",
  TIMEOUT,
  async (t) => {
    const agent = startAgent(t, { issuer: idp.issuer, home: tempDir() });
    await initializeV1(agent);
    await agent.call("auth/status", {});
    await agent.close();
    assert.equal(agent.stderr, "");
    assert.deepEqual(agent.garbage, []);
  },
);
