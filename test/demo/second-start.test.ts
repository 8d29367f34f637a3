/**
 * Issue 21, trap 1: a second `npm start` on a folder a demo is already running on. It must not start a second
 * demo, rewrite ports.json or empty the folder; it says where the running one is and how to stop it. And a data
 * folder's authorization server never moves to another port silently (its credentials are keyed by the issuer).
 */

import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { createServer } from "node:net";
import { join } from "node:path";
import { test } from "node:test";
import { type CliResult, runCli, startCli } from "../support/cli.ts";
import { tempDir } from "../support/tmp.ts";

interface Ready {
  urls: Record<string, string>;
  dataDir: string;
}

/**
 * The first start of a test's demo keeps the authorization server off its preferred port 4444 (held here while it
 * starts, when free): the folder pins the port it gets, and a demo of another test file running beside this one
 * must not be able to take it between this demo's stop and its restart.
 */
async function startDemoOffPreferredPort(home: string, dataDir: string, extra: string[] = []) {
  const holder = createServer();
  const held = await new Promise<boolean>((resolve) => {
    holder.once("error", () => resolve(false));
    holder.listen(4444, "127.0.0.1", () => resolve(true));
  });
  try {
    return await startDemo(home, dataDir, extra);
  } finally {
    if (held) await new Promise<void>((resolve) => holder.close(() => resolve()));
  }
}

async function startDemo(home: string, dataDir: string, extra: string[] = []) {
  const demo = startCli(["demo", "--json", "--data-dir", dataDir, "--port", "0", ...extra], {
    AGENTAUTH_HOME: home,
  });
  const [line] = await demo.waitFor("stdout", /^\{"event":"ready".*\}$/m);
  return { demo, ready: JSON.parse(line) as Ready };
}

/** A start that must be refused: one that gets as far as its ready line (or summary) is stopped and fails the test. */
async function refusedStart(args: string[], home: string): Promise<CliResult> {
  const cli = startCli(args, { AGENTAUTH_HOME: home });
  const started = cli
    .waitFor("stdout", /"event":"ready"|Ctrl-C stops everything/)
    .then(() => true)
    .catch(() => false);
  if (await started) {
    cli.kill("SIGINT");
    await cli.exited;
    assert.fail(`agentauth ${args.join(" ")} started a second demo instead of refusing`);
  }
  return cli.exited;
}

test("[DEMO-second-start-detected] a second demo on a running demo's folder is refused: it names the running console and how to stop it, and changes nothing (ports.json, the folder, the issuer)", {
  timeout: 180_000,
}, async () => {
  const home = tempDir();
  const dataDir = join(home, "demo");
  const first = await startDemoOffPreferredPort(home, dataDir, ["--fresh"]);
  const portsBefore = readFileSync(join(dataDir, "ports.json"), "utf8");

  for (const extra of [[], ["--fresh"]]) {
    const second = await refusedStart(["demo", "--data-dir", dataDir, ...extra], home);
    assert.equal(second.code, 1, `${extra.join(" ")}: ${second.stderr}`);
    assert.match(second.stderr, /already running/i);
    assert.ok(second.stderr.includes(first.ready.urls.console ?? ""), second.stderr);
    assert.ok(second.stderr.includes(String(first.demo.pid)), "names the running demo's process");
    assert.match(second.stderr, /Ctrl-C/);
    assert.match(second.stderr, /console --link/, "how to get a fresh console link");
    assert.match(second.stderr, /--data-dir/, "how to run another demo beside it");
    assert.match(second.stderr, /\[demo_already_running\]/);
    assert.doesNotMatch(second.stderr, /^\{/m, "no JSON log line in the terminal");
    assert.equal(second.stdout, "");
    assert.equal(readFileSync(join(dataDir, "ports.json"), "utf8"), portsBefore, "ports.json kept");
  }
  const json = await refusedStart(["demo", "--json", "--data-dir", dataDir], home);
  assert.equal(json.code, 1);
  const error = JSON.parse(json.stdout) as { error: { code: string; message: string } };
  assert.equal(error.error.code, "demo_already_running");
  assert.ok(error.error.message.includes(first.ready.urls.console ?? ""));

  // The running demo is untouched: its issuer still answers, and its vault was not emptied by --fresh.
  const issuer = first.ready.urls.issuer ?? "";
  const metadata = await fetch(`${issuer}/.well-known/openid-configuration`);
  assert.equal(metadata.status, 200);
  await metadata.arrayBuffer();

  // The way back into the running demo's console that the message names: a fresh one-time link.
  const link = await runCli(["console", "--link", "--json"], { AGENTAUTH_HOME: dataDir });
  assert.equal(link.code, 0, link.stderr);
  const loginUrl = (JSON.parse(link.stdout) as { loginUrl: string }).loginUrl;
  assert.ok(loginUrl.startsWith(first.ready.urls.console ?? "-"), loginUrl);
  const signIn = await fetch(loginUrl, { redirect: "manual" });
  await signIn.arrayBuffer();
  assert.equal(signIn.status, 303);

  first.demo.kill("SIGINT");
  assert.equal((await first.demo.exited).code, 130);
  // Stopped: the next start takes the folder again, with the same authorization server address.
  const again = await startDemo(home, dataDir);
  assert.equal(again.ready.urls.issuer, issuer, "the issuer keeps its port");
  again.demo.kill("SIGINT");
  assert.equal((await again.demo.exited).code, 130);
});

test("[DEMO-issuer-port-kept] a demo folder whose authorization server port is taken by another program is not moved to a new issuer: the start is refused with the port and the ways out", {
  timeout: 180_000,
}, async () => {
  const home = tempDir();
  const dataDir = join(home, "demo");
  const first = await startDemoOffPreferredPort(home, dataDir, ["--fresh"]);
  first.demo.kill("SIGINT");
  assert.equal((await first.demo.exited).code, 130);
  const issuerPort = Number(new URL(first.ready.urls.issuer ?? "").port);
  const portsBefore = readFileSync(join(dataDir, "ports.json"), "utf8");

  // Another program takes the issuer's port.
  const squatter = createServer();
  await new Promise<void>((resolve) => squatter.listen(issuerPort, "127.0.0.1", resolve));
  try {
    const second = await refusedStart(["demo", "--data-dir", dataDir], home);
    assert.equal(second.code, 1, second.stderr);
    assert.match(second.stderr, /\[demo_issuer_port_taken\]/);
    assert.ok(second.stderr.includes(String(issuerPort)), second.stderr);
    assert.match(second.stderr, /--fresh/, "the way to start over on a new port");
    assert.equal(readFileSync(join(dataDir, "ports.json"), "utf8"), portsBefore, "ports.json kept");
  } finally {
    await new Promise<void>((resolve) => squatter.close(() => resolve()));
  }
});

test("[DEMO-stale-lock-taken-over] a lock left by a demo that died (kill -9, a crash) does not lock the folder: the next start takes it over", async () => {
  const { acquireDemoLock, DEMO_LOCK_FILE } = await import("../../src/demo/lock.ts");
  const { writeFileSync } = await import("node:fs");
  const dir = tempDir();
  // A pid that cannot exist (above pid_max), on this host: provably gone.
  const { hostname } = await import("node:os");
  const dead = {
    kind: "agentauth-demo-lock",
    owner: `${hostname()}///4194305/1/abc`,
    pid: 4194305,
    startedAt: "2026-01-01T00:00:00.000Z",
  };
  writeFileSync(join(dir, DEMO_LOCK_FILE), JSON.stringify(dead));
  const lock = acquireDemoLock(dir);
  assert.match(readFileSync(join(dir, DEMO_LOCK_FILE), "utf8"), new RegExp(`"pid":${process.pid}`));
  // Held by a live process (this one): refused.
  assert.throws(() => acquireDemoLock(dir), /already running on .*process \d+/);
  lock.release();
  acquireDemoLock(dir).release();
});
