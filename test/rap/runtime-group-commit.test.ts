import assert from "node:assert/strict";
import { type ChildProcessWithoutNullStreams, spawn } from "node:child_process";
import { join } from "node:path";
import { DatabaseSync } from "node:sqlite";
import { test } from "node:test";
import { GroupCommit, type TransactionalDatabase } from "../../src/rap/runtime/group-commit.ts";
import { SqliteRuntimeStore } from "../../src/rap/runtime/index.ts";
import type { NewThreadEntry, ThreadEntry } from "../../src/rap/runtime/store.ts";
import { eventually, standInTool } from "../support/rap-tool-stand-in.ts";
import { tempDir } from "../support/tmp.ts";

const FIXTURE = join(import.meta.dirname, "fixtures", "rap-runtime-process.ts");

/** A real connection whose COMMITs are counted and can be made to fail. */
function countingDatabase(path: string) {
  const db = new DatabaseSync(path);
  db.exec("CREATE TABLE t (k TEXT PRIMARY KEY, v INTEGER)");
  const state = { commits: 0, failCommit: false };
  const wrapped: TransactionalDatabase = {
    exec(sql) {
      if (sql === "COMMIT") {
        state.commits++;
        if (state.failCommit) throw new Error("disk I/O error");
      }
      db.exec(sql);
    },
    get isTransaction() {
      return db.isTransaction;
    },
  };
  return { db, wrapped, state };
}

test("[RAP-runtime-group-commit] writes queued together share one COMMIT and settle after it; a throwing write fails alone, a failed COMMIT fails them all", async () => {
  const { db, wrapped, state } = countingDatabase(join(tempDir(), "batch.db"));
  const batch = new GroupCommit(wrapped);
  const insert = db.prepare("INSERT INTO t (k, v) VALUES (?, ?) RETURNING v");
  let settled = 0;
  const writes = [1, 2, 3, 2, 4].map((n) =>
    batch.write(() => insert.get(`k${n}`, n)?.v).finally(() => settled++),
  );
  assert.equal(settled, 0);
  assert.equal(
    db.prepare("SELECT COUNT(*) AS n FROM t").get()?.n,
    0,
    "nothing runs before the batch",
  );
  const outcomes = await Promise.allSettled(writes);
  assert.equal(state.commits, 1, "one transaction for the five writes");
  assert.deepEqual(
    outcomes.map((o) => (o.status === "fulfilled" ? o.value : "rejected")),
    [1, 2, 3, "rejected", 4],
    "the duplicate key saw the earlier write of its batch and failed alone",
  );
  assert.deepEqual(
    db
      .prepare("SELECT k FROM t ORDER BY k")
      .all()
      .map((r) => r.k),
    ["k1", "k2", "k3", "k4"],
  );

  state.failCommit = true;
  const failing = [5, 6].map((n) => batch.write(() => insert.get(`k${n}`, n)?.v));
  for (const outcome of await Promise.allSettled(failing)) {
    assert.equal(outcome.status, "rejected");
    assert.match(String((outcome as PromiseRejectedResult).reason), /disk I\/O error/);
  }
  assert.equal(db.isTransaction, false, "rolled back");
  assert.equal(db.prepare("SELECT COUNT(*) AS n FROM t WHERE k IN ('k5', 'k6')").get()?.n, 0);

  state.failCommit = false;
  assert.equal(await batch.write(() => insert.get("k7", 7)?.v), 7, "the next batch commits");
  db.close();
});

test("[RAP-runtime-group-commit] store: keyed writes in one batch see each other (a key applied once, compare-and-set once), entries keep queue order", async () => {
  const store = new SqliteRuntimeStore(join(tempDir(), "rap-runtime.db"));
  await store.createCall({
    groupId: "g",
    id: "c1",
    callId: null,
    operation: "op",
    arguments: {},
    userId: null,
    toolset: "t",
    baseUrl: "http://127.0.0.1:1",
    requiresAuth: null,
    createdAt: 1,
    deadline: 10_000,
  });
  const event = (text: string): NewThreadEntry => ({
    kind: "subscription_event",
    at: 2,
    toolCallId: "c1",
    text,
    associative: false,
    final: false,
  });
  // Queued in one tick: one batch.
  const [a, aAgain, b, done, doneAgain, c] = await Promise.all([
    store.appendEntry("g", event("a"), "c1:k1"),
    store.appendEntry("g", event("a again"), "c1:k1"),
    store.appendEntry("g", event("b"), "c1:k2"),
    store.transition("g", "c1", {
      from: ["pending"],
      to: "completed",
      at: 3,
      deliveryKey: "c1:k3",
    }),
    store.transition("g", "c1", { from: ["pending"], to: "completed", at: 4 }),
    store.appendEntry("g", event("c")),
  ]);
  const text = (e?: ThreadEntry) => (e?.kind === "subscription_event" ? e.text : undefined);
  assert.equal(text(a), "a");
  assert.equal(aAgain, undefined, "the same key later in the batch is a duplicate");
  assert.equal(text(b), "b");
  assert.equal(done?.status, "completed");
  assert.equal(doneAgain, undefined, "the second compare-and-set saw the first");
  assert.equal(text(c), "c");
  assert.deepEqual((await store.listEntries("g")).map(text), ["a", "b", "c"]);
  assert.equal(await store.hasDelivery("g", "c1:k3"), true, "the key committed with its change");
  await store.close();
});

interface Child {
  process: ChildProcessWithoutNullStreams;
  send(command: unknown): void;
  find(predicate: (line: Record<string, unknown>) => boolean, what: string): Promise<unknown>;
}

function startRuntime(env: Record<string, string>): Child {
  const child = spawn(process.execPath, ["--no-warnings", FIXTURE], {
    env: { ...process.env, ...env },
    stdio: ["pipe", "pipe", "pipe"],
  });
  const lines: Record<string, unknown>[] = [];
  let buffer = "";
  child.stdout.on("data", (data) => {
    buffer += data;
    for (let nl = buffer.indexOf("\n"); nl >= 0; nl = buffer.indexOf("\n")) {
      lines.push(JSON.parse(buffer.slice(0, nl)));
      buffer = buffer.slice(nl + 1);
    }
  });
  let stderr = "";
  child.stderr.on("data", (d) => {
    stderr += d;
  });
  return {
    process: child,
    send: (command) => child.stdin.write(`${JSON.stringify(command)}\n`),
    find: (predicate, what) =>
      eventually(
        () => {
          if (child.exitCode !== null)
            throw new Error(`runtime exited ${child.exitCode}: ${stderr}`);
          return lines.find(predicate);
        },
        what,
        15_000,
      ),
  };
}

const THREADS = 4;
const CALLS_PER_THREAD = 2;
const EVENTS = 12;

/** Every stored subscription event, per call, in the order the file holds them (seq). */
function storedEvents(path: string): Map<string, string[]> {
  const db = new DatabaseSync(path);
  try {
    const events = new Map<string, string[]>();
    for (const row of db.prepare("SELECT body FROM entries ORDER BY seq").all()) {
      const entry = JSON.parse(String(row.body));
      if (entry.kind !== "subscription_event") continue;
      events.set(entry.toolCallId, [...(events.get(entry.toolCallId) ?? []), entry.text]);
    }
    return events;
  } finally {
    db.close();
  }
}

test("[RAP-runtime-group-commit] concurrent callbacks on several threads, some sent twice: every answered one is in the file after kill -9, each stored once, in order", async () => {
  const tool = await standInTool({
    tools: [{ name: "watch", description: "", inputSchema: { type: "object" } }],
  });
  const dir = tempDir();
  const dbPath = join(dir, "rap-runtime.db");
  const env = { DB_PATH: dbPath, TOOLSET_URL: tool.origin };
  const first = startRuntime(env);
  const ready = (await first.find((l) => l.ready === true, "ready line")) as { port: number };
  const calls = Array.from({ length: THREADS * CALLS_PER_THREAD }, (_, i) => ({
    groupId: `g${i % THREADS}`,
    id: `c${i}`,
  }));
  for (const call of calls)
    first.send({ cmd: "invoke", request: { ...call, operation: "watch", arguments: {} } });
  for (const call of calls) {
    await first.find((l) => l.event === "invoked" && l.id === call.id, `invoked ${call.id}`);
    const started = await tool.deliver(tool.invocation(call.id), {
      type: "tool_result",
      group_id: call.groupId,
      id: call.id,
      text: "watching",
      subscription: true,
    });
    assert.equal(started.status, 200);
  }

  // Each call's events go one after another (the order the file must keep); the calls run concurrently, and every
  // third event is sent twice at once with the same Idempotency-Key (a retry racing the original).
  const deliverEvent = (call: (typeof calls)[number], n: number) =>
    tool.deliver(
      tool.invocation(call.id),
      { type: "subscription_event", group_id: call.groupId, tool_call_id: call.id, text: `e${n}` },
      { headers: { "idempotency-key": `event-${n}` } },
    );
  const answered: { id: string; text: string }[] = [];
  let killed = false;
  const stream = async (call: (typeof calls)[number], record: boolean) => {
    for (let n = 0; n < EVENTS; n++) {
      const copies = n % 3 === 0 ? 2 : 1;
      const answers = await Promise.all(
        Array.from({ length: copies }, () => deliverEvent(call, n).catch(() => undefined)),
      );
      if (answers.some((a) => a === undefined) && !record) throw new Error("delivery failed");
      for (const answer of answers) {
        if (!answer) return; // the runtime is gone
        assert.equal(answer.status, 200, JSON.stringify(answer.body));
        if (record) answered.push({ id: call.id, text: `e${n}` });
      }
      if (record && !killed && answered.length >= (calls.length * EVENTS) / 2) {
        killed = true;
        first.process.kill("SIGKILL"); // answers of the same batch may still be on their way: fine
      }
      if (killed && record) return;
    }
  };
  await Promise.all(calls.map((call) => stream(call, true)));
  if (!killed) first.process.kill("SIGKILL");
  if (first.process.exitCode === null && first.process.signalCode === null)
    await new Promise((resolve) => first.process.once("exit", resolve));
  assert.equal(first.process.signalCode, "SIGKILL");

  // Answered means committed: every event answered 200 (applied or duplicate) is in the file the crash left.
  const afterCrash = storedEvents(dbPath);
  assert.ok(answered.length >= (calls.length * EVENTS) / 2);
  for (const { id, text } of answered) {
    assert.ok(
      afterCrash.get(id)?.includes(text),
      `${id} ${text} was answered 200 but is not stored`,
    );
  }

  // The tool retries everything; each event is stored once and in order.
  const second = startRuntime({ ...env, PORT: String(ready.port) });
  await second.find((l) => l.ready === true, "second ready line");
  await Promise.all(calls.map((call) => stream(call, false)));
  second.process.stdin.end();
  await new Promise((resolve) => second.process.once("exit", resolve));
  assert.equal(second.process.exitCode, 0);
  const final = storedEvents(dbPath);
  const expected = Array.from({ length: EVENTS }, (_, n) => `e${n}`);
  for (const call of calls) assert.deepEqual(final.get(call.id), expected, call.id);
});
