import assert from "node:assert/strict";
import { statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { type TestContext, test } from "node:test";
import pg from "pg";
import {
  createRuntime,
  MemoryRuntimeStore,
  type NewCall,
  PostgresRuntimeStore,
  type RuntimeStore,
  SerialQueue,
  SqliteRuntimeStore,
  signCallToken,
  verifyCallToken,
} from "../../src/rap/runtime/index.ts";
import { skipWithoutPostgres, testPostgres } from "../support/postgres.ts";
import { tempDir } from "../support/tmp.ts";

const PG = await testPostgres();

const call = (id: string, deadline = 100): NewCall => ({
  groupId: "g",
  id,
  callId: null,
  operation: "echo",
  arguments: { text: id, nested: { n: 1 } },
  userId: "u",
  toolset: "t",
  baseUrl: "http://127.0.0.1:1",
  requiresAuth: null,
  createdAt: 10,
  deadline,
});

/** Each store, fresh; undefined when PostgreSQL is unavailable (the test is then skipped with the notice). */
const stores: [string, (t: TestContext) => Promise<RuntimeStore | undefined>][] = [
  ["memory", async () => new MemoryRuntimeStore()],
  ["sqlite", async () => new SqliteRuntimeStore(join(tempDir(), "rap-runtime.db"))],
  [
    "postgres",
    async (t) => {
      if (skipWithoutPostgres(t, PG)) return undefined;
      return PostgresRuntimeStore.open(await PG.freshDatabase());
    },
  ],
];

for (const [name, make] of stores) {
  test(`[RAP-runtime-store-contract] ${name}: create, compare-and-set transitions, deadlines, entries, views`, async (t) => {
    const store = await make(t);
    if (!store) return;
    try {
      const created = await store.createCall(call("a", 50));
      assert.equal(created.status, "pending");
      assert.equal(created.subscription, "none");
      await assert.rejects(store.createCall(call("a")), { code: "rap_call_exists" });
      await store.createCall(call("b", 30));
      assert.equal(await store.nextDeadline(), 30);
      assert.deepEqual(
        (await store.overdueCalls(40)).map((c) => c.id),
        ["b"],
      );
      const result = { text: "ok", isError: false, synthetic: false };
      const done = await store.transition("g", "b", {
        from: ["pending"],
        to: "completed",
        result,
        subscription: "active",
        at: 20,
      });
      assert.equal(done?.status, "completed");
      assert.deepEqual(done?.result, result);
      assert.equal(done?.subscription, "active");
      assert.equal(
        await store.transition("g", "b", { from: ["pending"], to: "timed_out", at: 21 }),
        undefined,
        "CAS refuses",
      );
      assert.equal(
        await store.transition("g", "zzz", { from: ["pending"], to: "completed", at: 21 }),
        undefined,
      );
      assert.equal(await store.nextDeadline(), 50);
      assert.equal(await store.setSubscription("g", "b", "active", "ended", 22), true);
      assert.equal(await store.setSubscription("g", "b", "active", "ended", 22), false);
      const got = await store.getCall("g", "a");
      assert.deepEqual(got?.arguments, { text: "a", nested: { n: 1 } });
      assert.deepEqual((await store.listCalls("g")).map((c) => c.id).sort(), ["a", "b"]);
      assert.deepEqual(await store.listCalls("other"), []);
      const e1 = await store.appendEntry("g", { kind: "status", at: 1, id: "a", text: "hello" });
      const e2 = await store.appendEntry("g", {
        kind: "subscription_event",
        at: 2,
        toolCallId: "b",
        text: "{}",
        associative: false,
        final: true,
      });
      assert.ok(e2.seq > e1.seq);
      assert.deepEqual(await store.listEntries("g"), [e1, e2]);
      await store.putView("g", "diff", { p: 1 }, 1);
      await store.putView("g", "diff", { p: 2 }, 2);
      assert.deepEqual(await store.listViews("g"), { diff: { p: 2 } });
    } finally {
      await store.close();
    }
  });

  test(`[RAP-runtime-store-delivery-keys] ${name}: a keyed entry is added once, the key recorded with it; keys are per thread`, async (t) => {
    const store = await make(t);
    if (!store) return;
    try {
      const event = {
        kind: "subscription_event" as const,
        at: 5,
        toolCallId: "b",
        text: "tick",
        associative: false,
        final: false,
      };
      assert.equal(await store.hasDelivery("g", "k1"), false);
      const first = await store.appendEntry("g", event, "k1");
      assert.ok(first && first.seq > 0);
      assert.equal(await store.hasDelivery("g", "k1"), true, "recorded with the entry");
      assert.equal(await store.appendEntry("g", event, "k1"), undefined, "a seen key adds nothing");
      assert.equal((await store.listEntries("g")).length, 1);
      // The same key in another thread is another delivery.
      assert.equal(await store.hasDelivery("other", "k1"), false);
      assert.ok(await store.appendEntry("other", event, "k1"));
      // Keys recorded on their own (results, views): once.
      assert.equal(await store.recordDelivery("g", "k2", 6), true);
      assert.equal(await store.recordDelivery("g", "k2", 7), false);
      assert.equal(await store.hasDelivery("g", "k2"), true);
      // A key recorded alone also stops a keyed entry (one key space per thread).
      assert.equal(await store.appendEntry("g", event, "k2"), undefined);
      // Racing duplicates (two instances, or a retry overlapping the original): exactly one is added.
      const raced = await Promise.all(
        Array.from({ length: 8 }, () => store.appendEntry("g", event, "k3")),
      );
      assert.equal(raced.filter(Boolean).length, 1);
      assert.equal((await store.listEntries("g")).length, 2);
      // Unkeyed entries are unaffected.
      assert.ok(await store.appendEntry("g", event));
      assert.equal((await store.listEntries("g")).length, 3);
      // A keyed transition records its key with the change, and only when the change happens.
      await store.createCall(call("keyed"));
      const blocked = { from: ["completed" as const], to: "cancelled" as const, at: 8 };
      assert.equal(
        await store.transition("g", "keyed", { ...blocked, deliveryKey: "k4" }),
        undefined,
      );
      assert.equal(await store.hasDelivery("g", "k4"), false, "no change, no key");
      const done = await store.transition("g", "keyed", {
        from: ["pending"],
        to: "completed",
        result: { text: "ok", isError: false, synthetic: false },
        at: 9,
        deliveryKey: "k4",
      });
      assert.equal(done?.status, "completed");
      assert.equal(await store.hasDelivery("g", "k4"), true, "recorded with the change");
    } finally {
      await store.close();
    }
  });
}

test("[PG-rap-runtime-lock] postgres: lockGroup excludes across connections per thread, other threads run, a failed task releases it", async (t) => {
  if (skipWithoutPostgres(t, PG)) return;
  const url = await PG.freshDatabase();
  const a = await PostgresRuntimeStore.open(url);
  const b = await PostgresRuntimeStore.open(url);
  t.after(() => Promise.all([a.close(), b.close()]));
  const order: string[] = [];
  let release!: () => void;
  const held = new Promise<void>((r) => {
    release = r;
  });
  let entered!: () => void;
  const inside = new Promise<void>((r) => {
    entered = r;
  });
  const first = a.lockGroup("g", async () => {
    order.push("a:in");
    entered();
    await held;
    order.push("a:out");
  });
  await inside;
  const second = b.lockGroup("g", async () => void order.push("b:in"));
  // Another thread is not held up by g's lock.
  await b.lockGroup("h", async () => void order.push("b:h"));
  assert.deepEqual(order, ["a:in", "b:h"]);
  release();
  await Promise.all([first, second]);
  assert.deepEqual(order, ["a:in", "b:h", "a:out", "b:in"]);
  // A failing task releases the lock too.
  await assert.rejects(
    a.lockGroup("g", async () => {
      throw new Error("boom");
    }),
    /boom/,
  );
  assert.equal(await b.lockGroup("g", async () => "free"), "free");
});

test("[PG-rap-runtime-key] postgres: instances sharing a database must share the callback key; a different key refuses to start", async (t) => {
  if (skipWithoutPostgres(t, PG)) return;
  const databaseUrl = await PG.freshDatabase();
  const first = await createRuntime({
    toolsetUrls: [],
    databaseUrl,
    secretKey: new Uint8Array(32).fill(1),
  });
  assert.equal(first.storage.kind, "postgres");
  const same = await createRuntime({
    toolsetUrls: [],
    databaseUrl,
    secretKey: new Uint8Array(32).fill(1),
  });
  await assert.rejects(
    createRuntime({ toolsetUrls: [], databaseUrl, secretKey: new Uint8Array(32).fill(2) }),
    (error: Error & { code?: string }) => {
      assert.equal(error.code, "rap_callback_key_mismatch");
      assert.match(error.message, /same key/);
      return true;
    },
  );
  await Promise.all([first.close(), same.close()]);
  // A store passed in without a key gets a key of this process only, never recorded: it locks nobody out.
  const other = await PG.freshDatabase();
  const ephemeral = await createRuntime({
    toolsetUrls: [],
    store: await PostgresRuntimeStore.open(other),
  });
  await ephemeral.close();
  const keyed = await createRuntime({
    toolsetUrls: [],
    databaseUrl: other,
    secretKey: new Uint8Array(32).fill(3),
  });
  await keyed.close();
  // Selected from AGENTAUTH_DATABASE_URL when no store or dbPath is given; a non-PostgreSQL value is a typed error.
  const home = tempDir();
  const fromEnv = await createRuntime({
    toolsetUrls: [],
    env: { AGENTAUTH_HOME: home, AGENTAUTH_DATABASE_URL: databaseUrl },
    secretKey: new Uint8Array(32).fill(1),
  });
  assert.equal(fromEnv.storage.kind, "postgres");
  await fromEnv.close();
  await assert.rejects(
    createRuntime({
      toolsetUrls: [],
      env: { AGENTAUTH_HOME: home, AGENTAUTH_DATABASE_URL: "mysql://x" },
    }),
    { code: "database_url_invalid" },
  );
  await assert.rejects(
    createRuntime({ toolsetUrls: [], databaseUrl, dbPath: join(home, "x.db") }),
    RangeError,
  );
});

test("[PG-rap-runtime-key-race] postgres: instances binding the same callback key at the same moment all succeed (a statement's snapshot missing the other's insert is no mismatch)", async (t) => {
  if (skipWithoutPostgres(t, PG)) return;
  const databaseUrl = await PG.freshDatabase();
  const stores = await Promise.all(
    Array.from({ length: 6 }, () => PostgresRuntimeStore.open(databaseUrl, { poolSize: 2 })),
  );
  const side = new pg.Client({ connectionString: databaseUrl });
  await side.connect();
  t.after(async () => {
    await side.end();
    await Promise.all(stores.map((s) => s.close()));
  });
  let refused = 0;
  for (let round = 0; round < 25; round++) {
    await side.query("DELETE FROM rap_runtime_meta WHERE name = 'callback_key'");
    const fingerprint = `fp-${round}`;
    const bound = await Promise.all(stores.map((s) => s.bindCallbackKey(fingerprint)));
    refused += bound.filter((b) => !b).length;
    // A different key is still refused once one is recorded.
    assert.equal(await stores[0]?.bindCallbackKey("another"), false);
  }
  assert.equal(refused, 0, "every concurrent bind of the same key succeeds");
});

test("[RAP-runtime-store-contract] sqlite: owner-only file, key file 0600 next to it, refuses another program's file", async () => {
  const dir = tempDir();
  const runtime = await createRuntime({ toolsetUrls: [], dbPath: join(dir, "rap-runtime.db") });
  await runtime.close();
  assert.equal(statSync(join(dir, "rap-runtime.db")).mode & 0o777, 0o600);
  assert.equal(statSync(join(dir, "rap-runtime.key")).mode & 0o777, 0o600);
  const bogus = join(dir, "bogus.db");
  writeFileSync(
    bogus,
    "this is not sqlite at all, just text that is long enough to look like a header",
  );
  assert.throws(() => new SqliteRuntimeStore(bogus), { code: "rap_store_io" });
  await assert.rejects(
    createRuntime({ toolsetUrls: [], dbPath: join(dir, "x.db"), secretKey: new Uint8Array(8) }),
    { code: "rap_callback_key_invalid" },
  );
});

test("[RAP-callback-forged-url] capability tokens: verify, reject tampering, expire", () => {
  const key = new Uint8Array(32).fill(1);
  const token = signCallToken(key, { groupId: "g", id: "c", exp: 1000 });
  assert.deepEqual(verifyCallToken(key, token, 999), {
    ok: true,
    claims: { groupId: "g", id: "c", exp: 1000 },
  });
  assert.equal(verifyCallToken(key, token, 1000).ok, false);
  assert.equal((verifyCallToken(key, token, 1000) as { reason: string }).reason, "expired");
  assert.equal(
    (verifyCallToken(new Uint8Array(32).fill(2), token, 0) as { reason: string }).reason,
    "bad_signature",
  );
  assert.equal((verifyCallToken(key, "a.b", 0) as { reason: string }).reason, "malformed");
});

test("[RAP-callback-serial-per-group] SerialQueue: FIFO per key, a failure does not block the next task", async () => {
  const queue = new SerialQueue();
  const order: number[] = [];
  const tasks = [1, 2, 3].map((n) =>
    queue.run("k", async () => {
      await new Promise((r) => setImmediate(r));
      order.push(n);
      if (n === 2) throw new Error("boom");
    }),
  );
  const settled = await Promise.allSettled(tasks);
  assert.deepEqual(order, [1, 2, 3]);
  assert.deepEqual(
    settled.map((s) => s.status),
    ["fulfilled", "rejected", "fulfilled"],
  );
  await queue.drain();
  assert.equal(queue.busyKeys, 0);
});
