/**
 * Issue 22 §3: while PostgreSQL is down, every RAP endpoint that needs it answers 503 with Retry-After (temporary:
 * retry), never 400 (which tells a client not to retry) or 500. The database is crashed with `pg_ctl stop -m
 * immediate` and brought back; the same requests then succeed. Real processes: `rap runtime serve` and
 * `rap tool serve --example`.
 */

import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { test } from "node:test";
import { generateVaultKey } from "../../src/vault/index.ts";
import { startCli } from "../support/cli.ts";
import { useIdp } from "../support/idp.ts";
import { restartablePostgres, skipWithoutPostgres } from "../support/postgres.ts";
import { echoTool, standInTool } from "../support/rap-tool-stand-in.ts";
import { tempDir } from "../support/tmp.ts";
import { keyedSink } from "./fixtures/keyed-sink.ts";
import { invocation, post } from "./tool-fixture.ts";
import { person, providerUrl } from "./tool-oauth-fixture.ts";

const PG = await restartablePostgres();
const idp = await useIdp();

/** Until the database answers again: the first requests after a start may still meet a dropped connection. */
async function eventually<T>(attempt: () => Promise<T>, ok: (value: T) => boolean): Promise<T> {
  let last: T | undefined;
  for (let tries = 0; tries < 200; tries++) {
    last = await attempt();
    if (ok(last)) return last;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return last as T;
}

test("[RAP-runtime-db-down-503] rap runtime serve with PostgreSQL down: POST /calls, GET /threads and a callback answer 503 + Retry-After; all work again once it is back", async (t) => {
  if (skipWithoutPostgres(t, PG)) return;
  const url = await PG.freshDatabase();
  const tool = await standInTool({ tools: [echoTool] });
  t.after(() => tool.close());
  const cli = startCli(
    ["rap", "runtime", "serve", "--toolset", tool.origin, "--tool-auth", "none", "--port", "0"],
    { AGENTAUTH_HOME: tempDir(), AGENTAUTH_DATABASE_URL: url },
  );
  const ready = JSON.parse((await cli.waitFor("stdout", /^\{"event":"ready".*\}$/m))[0]) as {
    url: string;
    controlTokenFile: string;
  };
  const token = readFileSync(ready.controlTokenFile, "utf8").trim();
  const api = (path: string, body?: unknown) =>
    fetch(`${ready.url}${path}`, {
      method: body === undefined ? "GET" : "POST",
      headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
  const request = { operation: "echo", arguments: { text: "x" }, group_id: "g-outage" };
  const first = await api("/calls", request);
  assert.equal(first.status, 202);
  const { id } = (await first.json()) as { id: string };
  const sent = tool.invocation(id);

  t.after(() => PG.start());
  await PG.crash();
  const refused = await api("/calls", request);
  assert.equal(refused.status, 503, await refused.clone().text());
  assert.equal(refused.headers.get("retry-after"), "1");
  assert.equal(((await refused.json()) as { error: string }).error, "database_unavailable");
  const thread = await api("/threads/g-outage");
  assert.equal(thread.status, 503);
  assert.equal(thread.headers.get("retry-after"), "1");
  await thread.arrayBuffer();
  const result = { type: "tool_result", group_id: "g-outage", id, text: "done" };
  const callback = await fetch(sent.callback_url, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(result),
  });
  assert.equal(callback.status, 503, "a tool retries a 503; it would too on 500, but 503 says why");
  assert.equal(callback.headers.get("retry-after"), "1");
  await callback.arrayBuffer();

  await PG.start();
  const applied = await eventually(
    () => tool.deliver(sent, result),
    (r) => r.status === 200,
  );
  assert.equal(applied.status, 200, JSON.stringify(applied));
  const again = await eventually(
    () => api("/calls", request),
    (r) => r.status === 202,
  );
  assert.equal(again.status, 202);
  await again.arrayBuffer();
  cli.kill("SIGTERM");
  assert.equal((await cli.exited).code, 0);
});

test("[RAP-tool-db-down-503] rap tool serve with PostgreSQL down: the consent page, its form and the OAuth redirect answer 503 + Retry-After; the link works once it is back", async (t) => {
  if (skipWithoutPostgres(t, PG)) return;
  const url = await PG.freshDatabase();
  const sink = await keyedSink();
  const cli = startCli(
    ["rap", "tool", "serve", "--example", "--issuer", idp.issuer, "--invocation-auth", "none"],
    {
      AGENTAUTH_HOME: tempDir(),
      AGENTAUTH_DATABASE_URL: url,
      AGENTAUTH_VAULT_KEY: generateVaultKey(),
    },
  );
  const ready = JSON.parse((await cli.waitFor("stdout", /^\{.*"event":"ready".*\}$/m))[0]) as {
    url: string;
  };
  const body = invocation(sink.url, { operation: "whoami", arguments: {}, user_id: "u-outage" });
  assert.equal((await post(`${ready.url}/invoke`, body)).status, 200);
  const oauth = await sink.waitFor((d) => d.message.id === body.id);
  const authUrl = String(oauth.message.auth_url);

  t.after(() => PG.start());
  await PG.crash();
  const shown = await person.fetch(authUrl);
  assert.equal(shown.status, 503, await shown.clone().text());
  assert.equal(shown.headers.get("retry-after"), "1");
  assert.match(shown.headers.get("content-type") ?? "", /text\/html/, "a page, for a person");
  await shown.arrayBuffer();
  const form = await person.fetch(`${ready.url}/oauth/start`, {
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded", origin: ready.url },
    body: "consent=x&csrf=y&action=continue",
  });
  assert.equal(form.status, 503);
  assert.equal(form.headers.get("retry-after"), "1");
  await form.arrayBuffer();
  const redirect = await person.fetch(`${ready.url}/oauth/callback?state=${"s".repeat(43)}&code=c`);
  assert.equal(redirect.status, 503);
  assert.equal(redirect.headers.get("retry-after"), "1");
  await redirect.arrayBuffer();

  await PG.start();
  const back = await eventually(
    async () => {
      const response = await person.fetch(authUrl);
      await response.arrayBuffer();
      return response.status;
    },
    (status) => status === 200,
  );
  assert.equal(back, 200, "the link was not spent by the outage");
  const toProvider = await providerUrl(authUrl);
  assert.equal(toProvider.searchParams.has("state"), true);
  cli.kill("SIGTERM");
  assert.equal((await cli.exited).code, 0);
});
