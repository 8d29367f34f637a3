/** `agentauth console` as a real process: the ready line, the login link, Ctrl-C, and its usage errors. */

import assert from "node:assert/strict";
import { test } from "node:test";
import { runCli, startCli } from "../support/cli.ts";
import { tempDir } from "../support/tmp.ts";

test("[CONSOLE-cli-json] --json prints one ready line; the login link works once; the token is never logged; Ctrl-C exits 130", async () => {
  const home = tempDir();
  const cli = startCli(["console", "--json"], { AGENTAUTH_HOME: home });
  const [line] = await cli.waitFor("stdout", /^\{.*\}\n/);
  const ready = JSON.parse(line) as { event: string; url: string; loginUrl: string };
  assert.equal(ready.event, "ready");
  assert.match(ready.url, /^http:\/\/127\.0\.0\.1:\d+\/$/);
  const token = new URL(ready.loginUrl).searchParams.get("token");
  assert.match(token ?? "", /^[A-Za-z0-9_-]{43}$/);
  const login = await fetch(ready.loginUrl, { redirect: "manual" });
  assert.equal(login.status, 303);
  const cookie = (login.headers.get("set-cookie") ?? "").split(";")[0] as string;
  const twice = await fetch(ready.loginUrl, { redirect: "manual" });
  assert.equal(twice.status, 401);
  const state = await fetch(new URL("/api/state", ready.url), { headers: { cookie } });
  assert.equal(state.status, 200);
  assert.deepEqual(((await state.json()) as { accounts: unknown[] }).accounts, []);
  cli.kill("SIGINT");
  const result = await cli.exited;
  assert.equal(result.code, 130);
  assert.ok(!result.stderr.includes(token as string), "the login token is never in the logs");
  await assert.rejects(fetch(ready.url), "the server is closed");
});

test("[CONSOLE-cli-text] without --json it prints the link for the person on stdout", async () => {
  const cli = startCli(["console", "--port", "0"], { AGENTAUTH_HOME: tempDir() });
  const [, link] = await cli.waitFor("stdout", /works once\):\n {2}(\S+)\n/);
  assert.match(link ?? "", /\?token=/);
  cli.kill("SIGTERM");
  assert.equal((await cli.exited).code, 0);
});

test("[CONSOLE-cli-usage] bad flags are usage errors (exit 2); --help names every flag", async () => {
  const home = tempDir();
  for (const args of [
    ["console", "--connect-issuer", "http://127.0.0.1:9"],
    ["console", "--connect-client-id", "x"],
    ["console", "--connect-issuer", "javascript:alert(1)", "--connect-client-id", "x"],
    ["console", "--port", "99999"],
    ["console", "--bogus"],
    ["console", "extra"],
  ]) {
    const result = await runCli(args, { AGENTAUTH_HOME: home });
    assert.equal(result.code, 2, `${args.join(" ")}: ${result.stderr}`);
  }
  const help = await runCli(["console", "--help"], { AGENTAUTH_HOME: home });
  assert.equal(help.code, 0);
  for (const flag of [
    "--port",
    "--json",
    "--connect-issuer",
    "--connect-client-id",
    "--connect-scope",
  ]) {
    assert.ok(help.stdout.includes(flag), flag);
  }
});
