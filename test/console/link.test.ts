/**
 * Issue 21: a person whose one-time link was opened first by something else (a link preview, a screenshot tool, a
 * second browser), or who lost the tab, gets back in without restarting: `agentauth console --link` prints a fresh
 * one-time link. The guard stays: only the console's own user (who can read its 0600 file) can ask for one.
 */

import assert from "node:assert/strict";
import { readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";
import { runCli, startCli } from "../support/cli.ts";
import { tempDir } from "../support/tmp.ts";

async function sessionFrom(link: string): Promise<{ status: number; cookie: string }> {
  const answer = await fetch(link, { redirect: "manual" });
  await answer.arrayBuffer();
  return {
    status: answer.status,
    cookie: (answer.headers.get("set-cookie") ?? "").split(";")[0] as string,
  };
}

test("[CONSOLE-link-fresh] the printed link spent by a previewer locks nobody out: the sign-in-needed page names `agentauth console --link`, which prints a fresh one-time link; only the console's user can ask for one", {
  timeout: 60_000,
}, async () => {
  const home = tempDir();
  const cli = startCli(["console", "--json"], { AGENTAUTH_HOME: home });
  const [line] = await cli.waitFor("stdout", /^\{.*\}\n/);
  const ready = JSON.parse(line) as { url: string; loginUrl: string };

  // A link previewer opens the link first; the person's browser then gets the sign-in-needed page.
  assert.equal((await sessionFrom(ready.loginUrl)).status, 303);
  const locked = await fetch(ready.loginUrl, { redirect: "manual" });
  assert.equal(locked.status, 401);
  const page = await locked.text();
  // Written as this installation runs from a shell (core/self-command.ts): in a checkout, the package's script.
  assert.match(page, /npm run agentauth -- console --link/, "the page says how to get back in");
  assert.match(page, /works once/);

  // The way back in: a fresh link, without a restart; it works once too.
  const fresh = await runCli(["console", "--link"], { AGENTAUTH_HOME: home });
  assert.equal(fresh.code, 0, fresh.stderr);
  const link = /^ {2}(http:\/\/127\.0\.0\.1:\d+\/\?token=\S+)$/m.exec(fresh.stdout)?.[1];
  assert.ok(link?.startsWith(ready.url), fresh.stdout);
  if (!link) return;
  const session = await sessionFrom(link);
  assert.equal(session.status, 303);
  const state = await fetch(new URL("/api/state", ready.url), {
    headers: { cookie: session.cookie },
  });
  assert.equal(state.status, 200);
  await state.arrayBuffer();
  assert.equal((await sessionFrom(link)).status, 401, "the fresh link works once");
  const json = await runCli(["console", "--link", "--json"], { AGENTAUTH_HOME: home });
  assert.equal(json.code, 0, json.stderr);
  assert.ok(
    (JSON.parse(json.stdout) as { loginUrl: string }).loginUrl.startsWith(ready.url),
    json.stdout,
  );

  // The guard: the file is the user's own, and without its key (a page, another user) no link is given.
  const file = join(home, "console.json");
  assert.equal(statSync(file).mode & 0o777, 0o600);
  const key = (JSON.parse(readFileSync(file, "utf8")) as { linkKey: string }).linkKey;
  const attempts: Record<string, string>[] = [
    {},
    { authorization: "Bearer wrong" },
    { authorization: `Bearer ${key}`, origin: "http://127.0.0.1:1" },
    { authorization: `Bearer ${key}`, "sec-fetch-site": "same-site" },
  ];
  for (const headers of attempts) {
    const refused = await fetch(new URL("/api/link", ready.url), { method: "POST", headers });
    assert.ok([401, 403].includes(refused.status), `${JSON.stringify(headers)}: ${refused.status}`);
    assert.doesNotMatch(await refused.text(), /token=/);
  }
  const get = await fetch(new URL("/api/link", ready.url));
  assert.equal(get.status, 405);
  await get.arrayBuffer();

  cli.kill("SIGINT");
  const result = await cli.exited;
  assert.equal(result.code, 130);
  assert.doesNotMatch(result.stderr, new RegExp(key), "the link key is never logged");
  // Stopped: the file is gone and --link says no console runs, and how to start one.
  assert.throws(() => statSync(file));
  const none = await runCli(["console", "--link"], { AGENTAUTH_HOME: home });
  assert.equal(none.code, 1);
  assert.match(none.stderr, /No running console was found.*agentauth console/);
  assert.match(none.stderr, /\[console_not_running\]/);
});

test("[CONSOLE-cli-words] standalone console in a terminal: no JSON log lines among the words (they are for --json)", {
  timeout: 60_000,
}, async () => {
  const cli = startCli(["console"], { AGENTAUTH_HOME: tempDir() });
  await cli.waitFor("stdout", /Ctrl-C stops it\./);
  cli.kill("SIGINT");
  const result = await cli.exited;
  assert.equal(result.code, 130);
  assert.doesNotMatch(result.stderr, /^\{/m, result.stderr);
  assert.doesNotMatch(result.stdout, /^\{/m);
});
