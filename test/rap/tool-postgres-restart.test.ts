/**
 * Issue 11, the RAP tool on PostgreSQL with real processes: a sign-in started by an instance that was killed with
 * SIGKILL is finished by another; two instances receiving the same redirect let exactly one proceed; a result whose
 * runtime was down when its tool was killed is delivered after a restart, once, under its original Idempotency-Key.
 */

import assert from "node:assert/strict";
import { test } from "node:test";
import pg from "pg";
import { generateVaultKey } from "../../src/vault/index.ts";
import { useIdp } from "../support/idp.ts";
import { skipWithoutPostgres, testPostgres } from "../support/postgres.ts";
import { keyedSink } from "./fixtures/keyed-sink.ts";
import { startInstance } from "./fixtures/tool-instances.ts";
import { invocation, post } from "./tool-fixture.ts";
import { person, providerUrl, RAP_TOOL_CLIENT } from "./tool-oauth-fixture.ts";

const PG = await testPostgres();
const idp = await useIdp({ clients: [RAP_TOOL_CLIENT] });

function env(url: string, key: string): Record<string, string> {
  return { DATABASE_URL: url, ISSUER: idp.issuer, AGENTAUTH_VAULT_KEY: key };
}

/** The redirect the provider sends the browser to, as a load balancer would hand it to `instanceUrl`. */
async function providerRedirect(providerAuthUrl: URL): Promise<URL> {
  const answer = await fetch(providerAuthUrl, { redirect: "manual" });
  await answer.arrayBuffer();
  const location = answer.headers.get("location");
  if (!location) throw new Error(`the authorization server answered HTTP ${answer.status}`);
  return new URL(location, providerAuthUrl);
}

function at(instanceUrl: string, redirect: URL): URL {
  return new URL(`${redirect.pathname}${redirect.search}`, instanceUrl);
}

/** Every row of every table in the database, as text: what someone with a backup would read. */
async function everything(url: string): Promise<string> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const tables = await client.query(
      "SELECT table_name FROM information_schema.tables WHERE table_schema = 'public'",
    );
    let text = "";
    for (const { table_name } of tables.rows) {
      const rows = await client.query(`SELECT t::text AS row FROM "${table_name}" t`);
      text += rows.rows.map((r) => r.row).join("\n");
    }
    return text;
  } finally {
    await client.end();
  }
}

test("[PG-rap-tool-pending-survives-restart] instance A sends the oauth message and is killed; B finishes the sign-in, runs the call and delivers the result", async (t) => {
  if (skipWithoutPostgres(t, PG)) return;
  const url = await PG.freshDatabase();
  const key = generateVaultKey();
  const sink = await keyedSink();
  const a = await startInstance(env(url, key));
  const body = invocation(sink.url, { operation: "whoami", arguments: {}, user_id: "u-alice" });
  assert.equal((await post(`${a.url}/invoke`, body)).status, 200);
  const oauth = await sink.waitFor((d) => d.message.id === body.id);
  assert.equal(oauth.message.type, "oauth", a.log());
  // The person opens the link (A's consent page) and goes on to the provider; then A dies.
  const toProvider = await providerUrl(String(oauth.message.auth_url));
  const state = toProvider.searchParams.get("state") ?? "";
  await a.kill();

  const b = await startInstance(env(url, key));
  const redirect = await providerRedirect(toProvider);
  const code = redirect.searchParams.get("code") ?? "";
  assert.ok(code.length > 0);
  const landed = await person.fetch(at(b.url, redirect));
  const page = await landed.text();
  assert.equal(landed.status, 200, `${page}\n${b.log()}`);
  const result = await sink.waitFor(
    (d) => d.message.id === body.id && d.message.type === "tool_result",
  );
  assert.match(String(result.message.text), /^signed in as alice/);
  assert.equal(sink.applied(String(body.id)).length, 2, "the oauth message, then the result");

  await b.kill();
  const rest = await everything(url);
  for (const [what, secret] of [
    ["state", state],
    ["code", code],
    ["callback URL", sink.url],
    ["user id", "u-alice"],
  ] as const) {
    assert.ok(!rest.includes(secret), `no ${what} at rest`);
  }
});

test("[PG-rap-tool-state-single-use] the same redirect at two instances at once: exactly one proceeds, the other (and a replay, and a forged state) gets the invalid-link page", async (t) => {
  if (skipWithoutPostgres(t, PG)) return;
  const url = await PG.freshDatabase();
  const key = generateVaultKey();
  const sink = await keyedSink();
  const [a, b] = await Promise.all([startInstance(env(url, key)), startInstance(env(url, key))]);
  const body = invocation(sink.url, { operation: "whoami", arguments: {}, user_id: "u-bob" });
  assert.equal((await post(`${a.url}/invoke`, body)).status, 200);
  const oauth = await sink.waitFor((d) => d.message.id === body.id);
  const redirect = await providerRedirect(await providerUrl(String(oauth.message.auth_url)));

  const answers = await Promise.all(
    [a, b].map(async (instance) => {
      const response = await person.fetch(at(instance.url, redirect));
      return { status: response.status, page: await response.text() };
    }),
  );
  const statuses = answers.map((x) => x.status).sort();
  assert.deepEqual(statuses, [200, 400], JSON.stringify(answers));
  const refused = answers.find((x) => x.status === 400);
  assert.match(refused?.page ?? "", /not valid any more/);
  await sink.waitFor((d) => d.message.id === body.id && d.message.type === "tool_result");

  const replay = await person.fetch(at(b.url, redirect));
  assert.equal(replay.status, 400, "a replayed state is refused");
  assert.match(await replay.text(), /not valid any more/);
  const forged = new URL(redirect);
  forged.searchParams.set("state", "x".repeat(43));
  const forgedAnswer = await person.fetch(at(a.url, forged));
  assert.equal(forgedAnswer.status, 400, "a forged state is refused");
  await forgedAnswer.arrayBuffer();
  await new Promise((resolve) => setTimeout(resolve, 300));
  assert.equal(
    sink.accepted(String(body.id)).filter((d) => d.message.type === "tool_result").length,
    1,
    "the call ran once",
  );
});

test("[PG-rap-tool-outbox-survives-restart] runtime down when the result is ready, tool killed, new instance: delivered once, under the original Idempotency-Key", async (t) => {
  if (skipWithoutPostgres(t, PG)) return;
  const url = await PG.freshDatabase();
  const key = generateVaultKey();
  const sink = await keyedSink();
  sink.down = true;
  const a = await startInstance(env(url, key));
  const body = invocation(sink.url, { operation: "public_echo", arguments: {} });
  assert.equal((await post(`${a.url}/invoke`, body)).status, 200);
  const deadline = Date.now() + 20_000;
  while (sink.deliveries.filter((d) => d.message.id === body.id).length < 2) {
    assert.ok(Date.now() < deadline, `A never retried: ${a.log()}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  await a.kill();
  const refusedKeys = new Set(sink.deliveries.map((d) => d.key));
  assert.equal(refusedKeys.size, 1, "every attempt carried the same key");
  const [original] = refusedKeys;
  assert.match(String(original), /^[0-9a-f-]{36}$/);

  sink.down = false;
  const b = await startInstance(env(url, key));
  const delivered = await sink.waitFor((d) => d.message.id === body.id);
  assert.equal(delivered.key, original, "the original key after the restart");
  assert.equal(delivered.message.text, "public");
  await new Promise((resolve) => setTimeout(resolve, 500));
  assert.equal(sink.accepted(String(body.id)).length, 1, "delivered exactly once");
  const rest = await everything(url);
  assert.ok(!rest.includes(sink.url), "no callback URL at rest");
  t.diagnostic(`attempts before the kill: ${sink.deliveries.length - 1}; b: ${b.url}`);
  // The sink answers before the tool's DELETE commits: wait (bounded) for the row to go.
  for (let tries = 0; (await countOutbox(url)) > 0; tries++) {
    assert.ok(tries < 500, "the outbox is empty once delivered");
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
});

async function countOutbox(url: string): Promise<number> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return Number((await client.query("SELECT count(*) AS n FROM rap_tool_outbox")).rows[0].n);
  } finally {
    await client.end();
  }
}

test("[PG-rap-tool-pending-survives-restart] A is killed before the person opens the link: B shows the consent page, takes the Continue, the redirect, and delivers the result", async (t) => {
  if (skipWithoutPostgres(t, PG)) return;
  const url = await PG.freshDatabase();
  const key = generateVaultKey();
  const sink = await keyedSink();
  const a = await startInstance(env(url, key));
  const body = invocation(sink.url, { operation: "whoami", arguments: {}, user_id: "u-fred" });
  assert.equal((await post(`${a.url}/invoke`, body)).status, 200);
  const oauth = await sink.waitFor((d) => d.message.id === body.id);
  assert.equal(oauth.message.type, "oauth", a.log());
  await a.kill();

  const b = await startInstance(env(url, key));
  // A load balancer sends the person's browser to B: the same path and query, another instance.
  const link = new URL(String(oauth.message.auth_url));
  const toProvider = await providerUrl(at(b.url, link).href);
  const landed = await person.fetch(at(b.url, await providerRedirect(toProvider)));
  assert.equal(landed.status, 200, `${await landed.text()}\n${b.log()}`);
  const result = await sink.waitFor(
    (d) => d.message.id === body.id && d.message.type === "tool_result",
  );
  assert.match(String(result.message.text), /^signed in as alice/);
  const replayed = await person.fetch(at(b.url, link));
  assert.equal(replayed.status, 400, "the consent link was used once");
  await replayed.arrayBuffer();
});
