import assert from "node:assert/strict";
import { statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";
import {
  createRuntime,
  MemoryRuntimeStore,
  type NewCall,
  type RuntimeStore,
  SerialQueue,
  SqliteRuntimeStore,
  signCallToken,
  verifyCallToken,
} from "../../src/rap/runtime/index.ts";
import { tempDir } from "../support/tmp.ts";

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

const stores: [string, () => RuntimeStore][] = [
  ["memory", () => new MemoryRuntimeStore()],
  ["sqlite", () => new SqliteRuntimeStore(join(tempDir(), "rap-runtime.db"))],
];

for (const [name, make] of stores) {
  test(`[RAP-runtime-store-contract] ${name}: create, compare-and-set transitions, deadlines, entries, views`, async () => {
    const store = make();
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
}

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
