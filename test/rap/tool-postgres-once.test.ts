/**
 * Issue 22 §1, §6, §8: the RAP tool on PostgreSQL, as several real processes. A call runs at most once whatever the
 * sign-in links, instances and restarts; the calls of an instance killed with SIGKILL are ended by another with an
 * error result, as soon as the database says the instance is gone; a thread's results leave in the order the calls
 * finished; and a delivery claimed by an instance that died (or lost track of it when the database crashed) is
 * released when the database says so, not when a timer runs out.
 */

import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { test } from "node:test";
import { generateVaultKey } from "../../src/vault/index.ts";
import { useIdp } from "../support/idp.ts";
import { restartablePostgres, skipWithoutPostgres } from "../support/postgres.ts";
import { type KeyedSink, keyedSink } from "./fixtures/keyed-sink.ts";
import { startInstance, type ToolInstance } from "./fixtures/tool-instances.ts";
import { invocation, post } from "./tool-fixture.ts";
import { authorize, person, providerUrl, RAP_TOOL_CLIENT } from "./tool-oauth-fixture.ts";

const PG = await restartablePostgres();
const idp = await useIdp({ clients: [RAP_TOOL_CLIENT] });

function env(url: string, key: string, extra: Record<string, string> = {}) {
  return { DATABASE_URL: url, ISSUER: idp.issuer, AGENTAUTH_VAULT_KEY: key, ...extra };
}

/** The tool_result messages of call `id` that reached the sink, one per distinct Idempotency-Key. */
function results(sink: KeyedSink, id: unknown) {
  return sink.applied(String(id)).filter((d) => d.message.type === "tool_result");
}

/** Lines of the instances' logs that say call `id` ran to completion (the handler returned). */
function completions(instances: ToolInstance[], id: unknown): number {
  return instances
    .flatMap((i) => i.log().split("\n"))
    .filter((line) => line.includes('"rap.call.completed"') && line.includes(String(id))).length;
}

test("[RAP-tool-run-once-stale-link] two calls wait for one user's sign-in; one sign-in resumes both; the other call's link, finished later at another instance, is refused and nothing runs twice", async (t) => {
  if (skipWithoutPostgres(t, PG)) return;
  const url = await PG.freshDatabase();
  const key = generateVaultKey();
  const sink = await keyedSink();
  const [a, b] = await Promise.all([startInstance(env(url, key)), startInstance(env(url, key))]);
  const first = invocation(sink.url, { operation: "whoami", arguments: {}, user_id: "u-carol" });
  const second = invocation(sink.url, { operation: "whoami", arguments: {}, user_id: "u-carol" });
  for (const body of [first, second])
    assert.equal((await post(`${a.url}/invoke`, body)).status, 200);
  const [oauth1, oauth2] = await Promise.all([
    sink.waitFor((d) => d.message.id === first.id && d.message.type === "oauth"),
    sink.waitFor((d) => d.message.id === second.id && d.message.type === "oauth"),
  ]);
  // The person pressed Continue on the second link too (the provider URL is in their browser), then signed in
  // through the first: that one sign-in resumes both calls.
  const stale = await providerUrl(String(oauth2.message.auth_url));
  const signedIn = await authorize(String(oauth1.message.auth_url));
  assert.equal(signedIn.status, 200, signedIn.page);
  await sink.waitFor((d) => d.message.id === first.id && d.message.type === "tool_result");
  await sink.waitFor((d) => d.message.id === second.id && d.message.type === "tool_result");

  // Now the second link is finished, and its redirect lands on the other instance.
  const atProvider = await person.fetch(stale, { redirect: "manual" });
  await atProvider.arrayBuffer();
  const location = new URL(String(atProvider.headers.get("location")));
  const landed = await person.fetch(new URL(`${location.pathname}${location.search}`, b.url));
  const page = await landed.text();
  assert.equal(landed.status, 400, `the stale link is refused:\n${page}\n${b.log()}`);
  assert.match(page, /not valid any more/);
  await new Promise((resolve) => setTimeout(resolve, 500));
  assert.equal(results(sink, second.id).length, 1, "one tool_result for the second call");
  assert.equal(completions([a, b], second.id), 1, "its operation ran once");
});

test("[RAP-tool-run-once-redelivered] an invocation delivered again after its call completed (a runtime that lost the 200 and retried, at another instance) does not run again", async (t) => {
  if (skipWithoutPostgres(t, PG)) return;
  const url = await PG.freshDatabase();
  const key = generateVaultKey();
  const sink = await keyedSink();
  const [a, b] = await Promise.all([startInstance(env(url, key)), startInstance(env(url, key))]);
  const body = invocation(sink.url, { operation: "public_echo", arguments: {} });
  assert.equal((await post(`${a.url}/invoke`, body)).status, 200);
  await sink.waitFor((d) => d.message.id === body.id && d.message.type === "tool_result");
  assert.equal((await post(`${b.url}/invoke`, body)).status, 200, "acknowledged, as RAP asks");
  await new Promise((resolve) => setTimeout(resolve, 500));
  assert.equal(completions([a, b], body.id), 1, "ran once");
  assert.equal(results(sink, body.id).length, 1, "answered once");
});

test("[RAP-tool-kill-ends-calls] kill -9 of the instance running a call: another instance ends it with an error result as soon as the database says the first is gone", async (t) => {
  if (skipWithoutPostgres(t, PG)) return;
  const url = await PG.freshDatabase();
  const key = generateVaultKey();
  const sink = await keyedSink();
  const [a, b] = await Promise.all([startInstance(env(url, key)), startInstance(env(url, key))]);
  const body = invocation(sink.url, { operation: "slow", arguments: {} });
  assert.equal((await post(`${a.url}/invoke`, body)).status, 200);
  for (let tries = 0; !a.log().includes('"rap.invoke.accepted"'); tries++) {
    assert.ok(tries < 400, "a accepted the call");
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  await a.kill();
  // Without the takeover, nothing would come before the runtime's own call timeout (15 minutes by default).
  const ended = await sink.waitFor((d) => d.message.id === body.id, 30_000);
  assert.equal(ended.message.type, "tool_result");
  assert.match(String(ended.message.text), /^Error: .*stopped.*slow/, b.log());
  await new Promise((resolve) => setTimeout(resolve, 300));
  assert.equal(results(sink, body.id).length, 1, "one final message");
});

test("[RAP-tool-result-order] results of one thread leave in the order the calls finished, when many finish at once", async (t) => {
  if (skipWithoutPostgres(t, PG)) return;
  const url = await PG.freshDatabase();
  const sink = await keyedSink();
  const a = await startInstance(env(url, generateVaultKey()));
  const group = `thread-${randomUUID()}`;
  const n = 16;
  const bodies = Array.from({ length: n }, () =>
    invocation(sink.url, { operation: "gate", arguments: { n }, group_id: group }),
  );
  await Promise.all(bodies.map((body) => post(`${a.url}/invoke`, body)));
  for (const body of bodies) await sink.waitFor((d) => d.message.id === body.id, 30_000);
  // The order the handlers returned in, as the tool logged it, against the order the runtime received.
  const finished = a
    .log()
    .split("\n")
    .filter((line) => line.includes('"rap.call.completed"'))
    .map((line) => String(JSON.parse(line).id));
  const received = sink.deliveries
    .filter((d) => d.status < 300 && d.message.type === "tool_result")
    .map((d) => String(d.message.id));
  assert.equal(finished.length, n);
  assert.deepEqual(received, finished);
});

test("[RAP-tool-claim-released-dead] a delivery claimed by an instance killed mid-attempt is taken by another when the database says the first is gone, not when the claim's timer runs out", async (t) => {
  if (skipWithoutPostgres(t, PG)) return;
  const url = await PG.freshDatabase();
  const key = generateVaultKey();
  const sink = await keyedSink();
  // A claim's backstop of ten minutes: only the database's word can release it within this test.
  const long = { CLAIM_MS: "600000" };
  const a = await startInstance(env(url, key, long));
  const held = sink.hold();
  const body = invocation(sink.url, { operation: "public_echo", arguments: {} });
  assert.equal((await post(`${a.url}/invoke`, body)).status, 200);
  await held.arrived;
  // A claimed the message and its attempt is held open; B starts, then A is killed mid-attempt.
  const b = await startInstance(env(url, key, long));
  await a.kill();
  held.release(503);
  const delivered = await sink.waitFor((d) => d.message.id === body.id, 30_000);
  assert.equal(delivered.message.text, "public", b.log());
});

test("[RAP-tool-claim-released-crash] a delivery whose outcome could not be written because PostgreSQL crashed (pg_ctl stop -m immediate) is retried once the database is back, not after the claim's timer", async (t) => {
  if (skipWithoutPostgres(t, PG)) return;
  const url = await PG.freshDatabase();
  const sink = await keyedSink();
  const a = await startInstance(env(url, generateVaultKey(), { CLAIM_MS: "600000" }));
  const held = sink.hold();
  const body = invocation(sink.url, { operation: "public_echo", arguments: {} });
  assert.equal((await post(`${a.url}/invoke`, body)).status, 200);
  await held.arrived;
  t.after(() => PG.start());
  await PG.crash();
  // The attempt fails while the database is down: the instance cannot write when to retry.
  held.release(503);
  await PG.start();
  const delivered = await sink.waitFor((d) => d.message.id === body.id, 30_000);
  assert.equal(delivered.message.text, "public", a.log());
});
