/**
 * Issue 22 §4: two `rap tool serve` instances behind one public URL, a round-robin proxy that keeps the Host header
 * (what a load balancer does). The toolset document, the consent page, the OAuth redirect and the HMAC host binding
 * all name the public URL; a sign-in whose steps land on either instance completes; while one instance is down,
 * the runtime's calls go through the other. Real processes, a real PostgreSQL, the embedded authorization server.
 */

import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";
import { EXAMPLE_TOOL_CLIENT_ID } from "../../src/idp/index.ts";
import { generateVaultKey } from "../../src/vault/index.ts";
import { type CliProcess, startCli } from "../support/cli.ts";
import { CookieBrowser } from "../support/cookie-browser.ts";
import { useIdp } from "../support/idp.ts";
import { skipWithoutPostgres, testPostgres } from "../support/postgres.ts";
import { tempDir } from "../support/tmp.ts";
import { roundRobinProxy } from "./fixtures/round-robin-proxy.ts";
import { authorize } from "./tool-oauth-fixture.ts";

const PG = await testPostgres();
const idp = await useIdp();

interface ToolReady {
  url: string;
  listen: string;
}

async function startTool(env: Record<string, string>, args: string[]) {
  const cli = startCli(["rap", "tool", "serve", "--example", "--issuer", idp.issuer, ...args], env);
  const ready = JSON.parse(
    (await cli.waitFor("stdout", /^\{.*"event":"ready".*\}$/m))[0],
  ) as ToolReady;
  return { cli, ready, port: Number(new URL(ready.listen).port) };
}

async function control(runtime: { url: string; token: string }, path: string, body?: unknown) {
  const response = await fetch(`${runtime.url}${path}`, {
    method: body === undefined ? "GET" : "POST",
    headers: { authorization: `Bearer ${runtime.token}`, "content-type": "application/json" },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

/** The thread's call, once it has a result (bounded by a number of polls, not a duration). */
async function settled(runtime: { url: string; token: string }, groupId: string, id: string) {
  for (let tries = 0; tries < 600; tries++) {
    const thread = await control(runtime, `/threads/${encodeURIComponent(groupId)}`);
    const calls = thread.body.calls as { id: string; status: string; result: { text: string } }[];
    const call = calls.find((c) => c.id === id);
    if (call?.result) return call;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`call ${id} never settled`);
}

test("[RAP-tool-public-url] two tool instances share one public URL behind a Host-keeping proxy: toolset, consent page, redirect and HMAC all name it; a sign-in spread over both completes; with one down the calls go through the other", async (t) => {
  if (skipWithoutPostgres(t, PG)) return;
  const database = await PG.freshDatabase();
  const proxy = await roundRobinProxy({ keepHost: true });
  t.after(() => proxy.close());
  const shared = tempDir();
  const secretFile = join(shared, "rap-invocation.secret");
  const vaultKey = generateVaultKey();
  const env = () => ({
    AGENTAUTH_HOME: tempDir(),
    AGENTAUTH_DATABASE_URL: database,
    AGENTAUTH_VAULT_KEY: vaultKey,
  });
  const args = [
    "--public-url",
    proxy.url,
    "--client-id",
    EXAMPLE_TOOL_CLIENT_ID,
    "--invocation-secret-file",
    secretFile,
  ];
  const first = await startTool(env(), args);
  const second = await startTool(env(), args);
  const tools: CliProcess[] = [first.cli, second.cli];
  proxy.setUpstreams([first.port, second.port]);
  assert.equal(first.ready.url, proxy.url, "the ready line names the public URL");

  for (let i = 0; i < 2; i++) {
    const toolset = (await (await fetch(`${proxy.url}/.well-known/rap-toolset`)).json()) as {
      endpoint: string;
    };
    assert.equal(
      toolset.endpoint,
      `${proxy.url}/invoke`,
      "each instance advertises the public URL",
    );
  }

  const runtimeCli = startCli(
    [
      "rap",
      "runtime",
      "serve",
      "--toolset",
      proxy.url,
      "--tool-secret-file",
      secretFile,
      "--port",
      "0",
    ],
    { AGENTAUTH_HOME: tempDir() },
  );
  const runtimeReady = JSON.parse(
    (await runtimeCli.waitFor("stdout", /^\{"event":"ready".*\}$/m))[0],
  ) as { url: string; controlTokenFile: string };
  const runtime = {
    url: runtimeReady.url,
    token: readFileSync(runtimeReady.controlTokenFile, "utf8").trim(),
  };

  // A sign-in: the runtime's invocation (HMAC, signed for the public host), the consent page, its form and the
  // redirect each reach whichever instance the proxy picks.
  const call = await control(runtime, "/calls", {
    operation: "whoami",
    arguments: {},
    group_id: "g-public",
    user_id: "u-pat",
  });
  assert.equal(call.status, 202, JSON.stringify(call.body));
  assert.equal(call.body.accepted, true, "the invocation's HMAC verified for the public host");
  const link = await runtimeCli.waitFor("stderr", /open (http:\/\/\S+)/);
  const authUrl = String(link[1]);
  assert.ok(authUrl.startsWith(`${proxy.url}/oauth/start?`), authUrl);
  const signedIn = await authorize(authUrl, new CookieBrowser());
  assert.equal(signedIn.status, 200, signedIn.page);
  assert.ok(signedIn.redirect.href.startsWith(`${proxy.url}/oauth/callback?`));
  const whoami = await settled(runtime, "g-public", String(call.body.id));
  assert.match(whoami.result.text, /^You are alice at the demo API/);
  assert.ok((proxy.counts.get(first.port) ?? 0) > 0 && (proxy.counts.get(second.port) ?? 0) > 0);

  // One instance down: every call still goes through (the balancer skips the refused instance).
  first.cli.kill("SIGKILL");
  await first.cli.exited;
  const ids: string[] = [];
  for (let i = 0; i < 6; i++) {
    const echo = await control(runtime, "/calls", {
      operation: "echo",
      arguments: { text: `n${i}` },
      group_id: "g-public",
    });
    assert.equal(echo.status, 202);
    assert.equal(echo.body.accepted, true);
    ids.push(String(echo.body.id));
  }
  for (const [i, id] of ids.entries()) {
    const done = await settled(runtime, "g-public", id);
    assert.equal(done.result.text, `echo: n${i}`);
  }
  for (const cli of [...tools, runtimeCli]) cli.kill("SIGTERM");
  for (const cli of [second.cli, runtimeCli]) assert.equal((await cli.exited).code, 0);
});
