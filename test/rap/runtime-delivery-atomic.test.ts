/**
 * A tool_result's change and its delivery key commit together (review finding): when recording the key fails, the
 * result must not stay committed with the key missing, or the tool's retry (after the 500) finds the call closed,
 * is told "200 duplicate", and the result is never settled (waitForResult hangs, onToolResult is lost). The failure
 * is injected inside each real store: a trigger on the deliveries table (SQLite, PostgreSQL), a wrapper (memory).
 */

import assert from "node:assert/strict";
import { DatabaseSync } from "node:sqlite";
import { type TestContext, test } from "node:test";
import pg from "pg";
import {
  createRuntime,
  MemoryRuntimeStore,
  type RapRuntime,
  type RuntimeStore,
} from "../../src/rap/runtime/index.ts";
import { skipWithoutPostgres, testPostgres } from "../support/postgres.ts";
import { type Recorded, TEST_KEY, testRuntime } from "../support/rap-runtime.ts";
import { echoTool, standInTool } from "../support/rap-tool-stand-in.ts";

const PG = await testPostgres();

/**
 * Records of the tool's key "r-1" fail while `failing.on`; everything else passes through to the memory store. The
 * store sees the key scoped to its call (`callDeliveryKey`), so it matches on the tool's part.
 */
const isR1 = (key: string | undefined) => key?.endsWith(',"r-1"]') === true;
function flakyMemoryStore(failing: { on: boolean }): RuntimeStore {
  const inner: RuntimeStore = new MemoryRuntimeStore();
  const injected = () => new Error("injected: recording the delivery key failed");
  return new Proxy(inner, {
    get(target, name, receiver) {
      const value = Reflect.get(target, name, receiver);
      if (typeof value !== "function") return value;
      if (name === "recordDelivery") {
        return (groupId: string, key: string, at: number) => {
          if (failing.on && isR1(key)) return Promise.reject(injected());
          return target.recordDelivery(groupId, key, at);
        };
      }
      if (name === "transition") {
        // The fixed store records the key inside `transition`: failing there applies nothing (atomic).
        return (groupId: string, id: string, change: { deliveryKey?: string }) => {
          if (failing.on && isR1(change.deliveryKey)) return Promise.reject(injected());
          return target.transition(groupId, id, change as never);
        };
      }
      return value.bind(target);
    },
  });
}

/** Delivers a keyed tool_result while recording its key fails, then retries it once the store works again. */
async function resultSurvivesKeyFailure(
  t: TestContext,
  runtime: RapRuntime,
  recorded: Recorded,
  tool: Awaited<ReturnType<typeof standInTool>>,
  setFailing: (on: boolean) => Promise<void>,
) {
  const { id } = await runtime.invoke({
    groupId: "g",
    operation: "echo",
    arguments: { text: "x" },
  });
  const invocation = tool.invocation(id);
  const result = { type: "tool_result", group_id: "g", id, text: "done" };
  const headers = { "idempotency-key": "r-1" };
  await setFailing(true);
  const first = await tool.deliver(invocation, result, { headers });
  t.diagnostic(`first delivery: ${first.status}`);
  assert.equal(first.status, 500, "a failure to record the key is a 500 (the tool retries)");
  await setFailing(false);
  const retry = await tool.deliver(invocation, result, { headers });
  assert.equal(retry.status, 200);
  assert.notEqual(
    retry.body.duplicate,
    true,
    "the retry applies the result: nothing was committed before",
  );
  const settled = await runtime.waitForResult("g", id, { signal: AbortSignal.timeout(5000) });
  assert.equal(settled.status, "completed");
  assert.equal(recorded.results.length, 1, "onToolResult fired once");
  const again = await tool.deliver(invocation, result, { headers });
  assert.deepEqual(again, { status: 200, body: { ok: true, duplicate: true } });
  assert.equal(recorded.results.length, 1);
}

test("[RAP-callback-key-atomic-memory] memory store: a tool_result whose key cannot be recorded is not half-applied; the retry settles it", async (t) => {
  const tool = await standInTool({ tools: [echoTool] });
  const failing = { on: false };
  const { runtime, recorded } = await testRuntime({
    toolsetUrls: [tool.origin],
    store: flakyMemoryStore(failing),
  });
  await resultSurvivesKeyFailure(t, runtime, recorded, tool, async (on) => {
    failing.on = on;
  });
});

test("[RAP-callback-key-atomic-sqlite] SQLite store: a tool_result whose key cannot be recorded is not half-applied; the retry settles it", async (t) => {
  const tool = await standInTool({ tools: [echoTool] });
  const { runtime, recorded, dbPath } = await testRuntime({
    toolsetUrls: [tool.origin],
    sqlite: true,
  });
  const side = new DatabaseSync(String(dbPath));
  t.after(() => side.close());
  await resultSurvivesKeyFailure(t, runtime, recorded, tool, async (on) => {
    side.exec(
      on
        ? `CREATE TRIGGER fail_key BEFORE INSERT ON deliveries WHEN NEW.key LIKE '%"r-1"]'
             BEGIN SELECT RAISE(ABORT, 'injected'); END`
        : "DROP TRIGGER fail_key",
    );
  });
});

test("[PG-rap-callback-key-atomic] PostgreSQL store: a tool_result whose key cannot be recorded is not half-applied; the retry settles it", async (t) => {
  if (skipWithoutPostgres(t, PG)) return;
  const databaseUrl = await PG.freshDatabase();
  const tool = await standInTool({ tools: [echoTool] });
  const recorded: Recorded = {
    results: [],
    authorizations: [],
    statuses: [],
    events: [],
    choices: [],
    views: [],
    requiresAuth: [],
  };
  const runtime = await createRuntime({
    toolsetUrls: [tool.origin],
    databaseUrl,
    secretKey: TEST_KEY,
    hooks: { onToolResult: (e) => void recorded.results.push(e) },
  });
  t.after(() => runtime.close());
  await runtime.listen();
  const side = new pg.Client({ connectionString: databaseUrl });
  await side.connect();
  t.after(() => side.end());
  await side.query(`CREATE FUNCTION fail_key() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN IF NEW.key LIKE '%"r-1"]' THEN RAISE EXCEPTION 'injected'; END IF; RETURN NEW; END $$`);
  await resultSurvivesKeyFailure(t, runtime, recorded, tool, async (on) => {
    await side.query(
      on
        ? "CREATE TRIGGER fail_key BEFORE INSERT ON rap_deliveries FOR EACH ROW EXECUTE FUNCTION fail_key()"
        : "DROP TRIGGER fail_key ON rap_deliveries",
    );
  });
});

test("[RAP-callback-key-atomic-oauth] SQLite store: an oauth message whose key cannot be recorded is not half-applied; the retry moves the call to authorizing and adds the status line once", async (t) => {
  const tool = await standInTool({ tools: [echoTool] });
  const { runtime, recorded, dbPath } = await testRuntime({
    toolsetUrls: [tool.origin],
    sqlite: true,
  });
  const side = new DatabaseSync(String(dbPath));
  t.after(() => side.close());
  const { id } = await runtime.invoke({
    groupId: "g",
    operation: "echo",
    arguments: { text: "x" },
  });
  const invocation = tool.invocation(id);
  const oauth = { type: "oauth", group_id: "g", id, auth_url: "https://idp.example/authorize?s=1" };
  const headers = { "idempotency-key": "o-1" };
  side.exec(`CREATE TRIGGER fail_key BEFORE INSERT ON deliveries WHEN NEW.key LIKE '%"o-1"]'
    BEGIN SELECT RAISE(ABORT, 'injected'); END`);
  assert.equal((await tool.deliver(invocation, oauth, { headers })).status, 500);
  assert.equal((await runtime.getCall("g", id))?.status, "pending", "nothing applied");
  side.exec("DROP TRIGGER fail_key");
  assert.deepEqual(await tool.deliver(invocation, oauth, { headers }), {
    status: 200,
    body: { ok: true },
  });
  assert.equal((await runtime.getCall("g", id))?.status, "authorizing");
  assert.equal(recorded.authorizations.length, 1);
  // The status line is added after the reply (hooks and status run after it, in the thread's queue): the retry below
  // queues behind it, so once the retry is answered the line is there, once.
  const again = await tool.deliver(invocation, oauth, { headers });
  assert.equal(recorded.statuses.length, 1, "the 'authorization in progress' line, once");
  assert.equal(again.body.duplicate, true);
  assert.equal(recorded.authorizations.length, 1);
});
