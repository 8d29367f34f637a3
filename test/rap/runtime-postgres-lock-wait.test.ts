/**
 * The thread lock's wait is bounded (review finding): a thread whose lock another session holds (a slow hook on
 * another instance) must not stop this instance's receiver for ever with a session held. Past the store's
 * `lockWaitMs` the callback is answered 503 with `Retry-After: 1` and a typed body, nothing applied; the tool's
 * retry applies it once the lock is free.
 */

import assert from "node:assert/strict";
import { test } from "node:test";
import pg from "pg";
import { advisoryKey } from "../../src/db/index.ts";
import { PostgresRuntimeStore, ThreadBusyError } from "../../src/rap/runtime/index.ts";
import { skipWithoutPostgres, testPostgres } from "../support/postgres.ts";
import { testRuntime } from "../support/rap-runtime.ts";
import { echoTool, standInTool } from "../support/rap-tool-stand-in.ts";

const PG = await testPostgres();

/** The fixed runtime answers well within this; the unfixed one waits for ever (the lock has no timeout). */
const GIVE_UP_MS = 15_000;

async function post(url: string, body: unknown, key: string) {
  const response = await fetch(url, {
    method: "POST",
    headers: { "content-type": "application/json", "idempotency-key": key },
    body: JSON.stringify(body),
    signal: AbortSignal.timeout(GIVE_UP_MS),
  });
  return {
    status: response.status,
    retryAfter: response.headers.get("retry-after"),
    body: (await response.json()) as Record<string, unknown>,
  };
}

test("[PG-rap-runtime-lock-wait] a thread locked elsewhere past lockWaitMs: the callback gets 503 + Retry-After: 1 (typed), nothing applied; the retry applies it once the lock is free", async (t) => {
  if (skipWithoutPostgres(t, PG)) return;
  const databaseUrl = await PG.freshDatabase();
  const tool = await standInTool({ tools: [echoTool] });
  const store = await PostgresRuntimeStore.open(databaseUrl, { lockWaitMs: 300 });
  const { runtime, recorded } = await testRuntime({ toolsetUrls: [tool.origin], store });
  const { id } = await runtime.invoke({
    groupId: "g",
    operation: "echo",
    arguments: { text: "x" },
  });
  const invocation = tool.invocation(id);
  // Another instance's session holds the thread (as a slow hook would).
  const holder = new pg.Client({ connectionString: databaseUrl });
  await holder.connect();
  t.after(() => holder.end());
  const key = advisoryKey("rap-group", "g");
  await holder.query("SELECT pg_advisory_lock($1)", [key]);
  const result = { type: "tool_result", group_id: "g", id, text: "done" };
  const started = Date.now();
  const busy = await post(invocation.callback_url, result, "r-1");
  t.diagnostic(`busy answer after ${Date.now() - started} ms`);
  assert.equal(busy.status, 503);
  assert.equal(busy.retryAfter, "1");
  assert.equal(busy.body.error, "thread_busy");
  assert.match(String(busy.body.message), /retry/i);
  assert.equal((await runtime.getCall("g", id))?.status, "pending", "nothing applied");
  assert.equal(recorded.results.length, 0);
  // The store's own error is typed too (what invoke or cancel would see).
  await assert.rejects(
    store.lockGroup("g", async () => "ran"),
    (error: unknown) => {
      assert.ok(error instanceof ThreadBusyError);
      assert.equal(error.code, "rap_thread_busy");
      return true;
    },
  );
  await holder.query("SELECT pg_advisory_unlock($1)", [key]);
  const applied = await post(invocation.callback_url, result, "r-1");
  assert.deepEqual([applied.status, applied.body], [200, { ok: true }]);
  const settled = await runtime.waitForResult("g", id, { signal: AbortSignal.timeout(GIVE_UP_MS) });
  assert.equal(settled.status, "completed");
  assert.equal(recorded.results.length, 1);
  // Other threads were never blocked, and a free lock is taken at once.
  assert.equal(await store.lockGroup("other", async () => "ran"), "ran");
});

test("[PG-rap-runtime-lock-wait-hostile] lockWaitMs that is not a whole number of milliseconds, at least 1, is refused before use", async (t) => {
  if (skipWithoutPostgres(t, PG)) return;
  const databaseUrl = await PG.freshDatabase();
  for (const lockWaitMs of [0, -5, 1.5, Number.NaN, Number.POSITIVE_INFINITY]) {
    await assert.rejects(
      PostgresRuntimeStore.open(databaseUrl, { lockWaitMs }),
      RangeError,
      String(lockWaitMs),
    );
  }
});

test("[PG-rap-runtime-lock-wait-sweep] the timeout sweep skips a thread locked elsewhere and still times out the other threads' calls; the skipped one is swept once free", async (t) => {
  if (skipWithoutPostgres(t, PG)) return;
  const databaseUrl = await PG.freshDatabase();
  const tool = await standInTool({ tools: [echoTool] });
  let clock = 1_000_000;
  const store = await PostgresRuntimeStore.open(databaseUrl, { lockWaitMs: 200 });
  const { runtime } = await testRuntime({
    toolsetUrls: [tool.origin],
    store,
    callTimeoutMs: 60_000,
    now: () => clock,
  });
  await runtime.invoke({ groupId: "a", id: "c", operation: "echo", arguments: { text: "x" } });
  await runtime.invoke({ groupId: "b", id: "c", operation: "echo", arguments: { text: "x" } });
  const holder = new pg.Client({ connectionString: databaseUrl });
  await holder.connect();
  t.after(() => holder.end());
  const key = advisoryKey("rap-group", "a");
  await holder.query("SELECT pg_advisory_lock($1)", [key]);
  clock += 61_000;
  assert.equal(await runtime.sweepTimeouts(), 1, "thread b swept although a is busy");
  assert.equal((await runtime.getCall("b", "c"))?.status, "timed_out");
  assert.equal((await runtime.getCall("a", "c"))?.status, "pending");
  await holder.query("SELECT pg_advisory_unlock($1)", [key]);
  assert.equal(await runtime.sweepTimeouts(), 1);
  assert.equal((await runtime.getCall("a", "c"))?.status, "timed_out");
});
