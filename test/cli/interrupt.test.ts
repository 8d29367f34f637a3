import assert from "node:assert/strict";
import { test } from "node:test";
import { watchInterrupt } from "../../src/cli/lifecycle.ts";
import { startCli } from "../support/cli.ts";
import { useIdp } from "../support/idp.ts";
import { tempDir } from "../support/tmp.ts";

const idp = await useIdp();

test("[CLI-sigint-130] Ctrl-C on idp serve closes the server, then exits 130", {
  timeout: 60_000,
}, async () => {
  const serve = startCli(["idp", "serve", "--port", "0"], { AGENTAUTH_HOME: tempDir() });
  const [line] = await serve.waitFor("stdout", /\{"event":"ready".*\}\n/);
  const { issuer } = JSON.parse(line);
  assert.equal((await fetch(`${issuer}/.well-known/openid-configuration`)).status, 200);
  serve.kill("SIGINT");
  const result = await serve.exited;
  assert.equal(result.code, 130, result.stderr);
  await assert.rejects(fetch(`${issuer}/.well-known/openid-configuration`), "the server is closed");
});

test("[CLI-sigint-130] Ctrl-C during a device login cancels it and exits 130", {
  timeout: 60_000,
}, async () => {
  const login = startCli(["login", "--issuer", idp.issuer, "--device"], {
    AGENTAUTH_HOME: tempDir(),
  });
  await login.waitFor("stderr", /Waiting for you to approve/);
  login.kill("SIGINT");
  const result = await login.exited;
  assert.equal(result.code, 130, result.stderr);
  assert.match(result.stderr, /cancelled/);
});

test("[CLI-sigint-130] Ctrl-C during a device login with --json reports the cancellation as JSON, exit 130", {
  timeout: 60_000,
}, async () => {
  const login = startCli(["login", "--issuer", idp.issuer, "--device", "--json"], {
    AGENTAUTH_HOME: tempDir(),
  });
  await login.waitFor("stderr", /Waiting for you to approve/);
  login.kill("SIGINT");
  const result = await login.exited;
  assert.equal(result.code, 130, result.stderr);
  assert.equal(JSON.parse(result.stdout).error.code, "cancelled");
});

/** Runs `body` with a watch whose exits are recorded instead of ending the test process. */
function withWatch(graceMs: number, body: (exits: number[], notes: string[]) => void): void {
  const exits: number[] = [];
  const notes: string[] = [];
  const watch = watchInterrupt({
    stderr: (t) => notes.push(t),
    exit: (c) => exits.push(c),
    graceMs,
  });
  try {
    body(exits, notes);
    assert.equal(watch.interrupted, true);
  } finally {
    watch.dispose();
  }
}

test("[CLI-sigint-130] a command that does not listen for SIGINT is ended at once with 130", () => {
  withWatch(10_000, (exits, notes) => {
    process.emit("SIGINT", "SIGINT");
    assert.deepEqual(exits, [130]);
    assert.deepEqual(notes, ["agentauth: interrupted.\n"]);
  });
});

test("[CLI-sigint-130] a listening command gets time to close; a second Ctrl-C ends it at once", () => {
  const commandListener = () => {};
  try {
    withWatch(60_000, (exits) => {
      // Added after the watch, as a command's own listener is.
      process.on("SIGINT", commandListener);
      process.emit("SIGINT", "SIGINT");
      assert.deepEqual(exits, [], "the command closes itself");
      process.emit("SIGINT", "SIGINT");
      assert.deepEqual(exits, [130]);
    });
  } finally {
    process.off("SIGINT", commandListener);
  }
});

test("[CLI-sigint-130] a command that takes too long to close is ended after the grace period", async () => {
  const commandListener = () => {};
  const exits: number[] = [];
  const watch = watchInterrupt({ stderr: () => {}, exit: (c) => exits.push(c), graceMs: 1 });
  process.on("SIGINT", commandListener);
  try {
    process.emit("SIGINT", "SIGINT");
    assert.deepEqual(exits, [], "not at once: the command listens");
    await new Promise((resolve) => setTimeout(resolve, 50));
    assert.deepEqual(exits, [130]);
  } finally {
    watch.dispose();
    process.off("SIGINT", commandListener);
  }
});
