/**
 * Issue 11 review of the RAP tool's PostgreSQL outbox: an unreadable row does not hold back the rest of its batch; a
 * cancellation racing a write leaves nothing behind; the memory fallback sends under the message's own key; a clean
 * stop releases its claims; a claim no longer than one attempt is refused.
 */

import assert from "node:assert/strict";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { test } from "node:test";
import pg from "pg";
import { createLogger } from "../../src/core/log.ts";
import {
  type CallLedger,
  type LedgerCall,
  openPostgresToolState,
  type ToolStateStore,
} from "../../src/rap/tool/index.ts";
import { OutboxPump } from "../../src/rap/tool/outbox-pump.ts";
import { generateVaultKey, Keyring, parseVaultKey } from "../../src/vault/index.ts";
import { skipWithoutPostgres, testPostgres } from "../support/postgres.ts";
import { keyedSink } from "./fixtures/keyed-sink.ts";
import { invocation, post, startTool } from "./tool-fixture.ts";

const PG = await testPostgres();

const keyring = () => new Keyring(parseVaultKey(generateVaultKey()));

async function sql(url: string, text: string, params: unknown[] = []) {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query(text, params)).rows;
  } finally {
    await client.end();
  }
}

function capturingLogger() {
  const lines: string[] = [];
  return { lines, logger: createLogger({ write: (line) => lines.push(line), level: "debug" }) };
}

test("[PG-rap-tool-outbox-unreadable] a batch with one row sealed under another key and two good rows: the good rows are delivered in that pass; the bad one is logged by id and set aside", async (t) => {
  if (skipWithoutPostgres(t, PG)) return;
  const url = await PG.freshDatabase();
  const ours = await openPostgresToolState({ url, keyring: keyring() });
  const foreign = await openPostgresToolState({ url, keyring: keyring() });
  t.after(() => Promise.all([ours.close(), foreign.close()]));
  const sink = await keyedSink();
  const secretUrl = `${sink.url}?capability=foreign-secret`;
  const bad = String(
    await foreign.outbox.add({
      groupId: "g0",
      callId: "c0",
      callbackUrl: secretUrl,
      body: { id: "c0" },
    }),
  );
  const good = [];
  for (const n of [1, 2]) {
    good.push(
      await ours.outbox.add({
        groupId: `g${n}`,
        callId: `c${n}`,
        callbackUrl: sink.url,
        body: { id: `c${n}` },
      }),
    );
  }
  const { lines, logger } = capturingLogger();
  const pump = new OutboxPump({ outbox: ours.outbox, delivery: { timeoutMs: 2_000 }, logger });
  t.after(() => pump.stop());
  pump.kick();
  await pump.idle();
  assert.deepEqual(
    sink.accepted("c1").length + sink.accepted("c2").length,
    2,
    `both good rows delivered in the pass; log: ${lines.join("")}`,
  );
  assert.equal(sink.accepted("c0").length, 0);
  const left = await sql(
    url,
    "SELECT id::text AS id, claimed_until, next_at > now() AS later FROM rap_tool_outbox",
  );
  assert.deepEqual(
    left.map((r) => r.id),
    [bad],
    "the good rows are gone (delivered); the unreadable one waits for an instance with its key",
  );
  assert.equal(left[0]?.later, true, "set aside, not due again at once");
  const log = lines.join("");
  assert.match(log, /rap\.outbox\.unreadable/);
  assert.ok(log.includes(bad), "logged by id");
  assert.ok(!log.includes("foreign-secret"), "never its content");
  assert.ok(good.every(Boolean));
  // An instance with the key still delivers it.
  await sql(url, "UPDATE rap_tool_outbox SET next_at = now()");
  const theirs = await foreign.outbox.claim(10, 60_000);
  assert.deepEqual(
    theirs.map((m) => m.id),
    [bad],
  );
});

test("[PG-rap-tool-outbox-unreadable] a row nobody can read is deleted after a bounded number of claims, logged by id, and its group moves on", async (t) => {
  if (skipWithoutPostgres(t, PG)) return;
  const url = await PG.freshDatabase();
  const ours = await openPostgresToolState({ url, keyring: keyring() });
  t.after(() => ours.close());
  const bad = String(
    await ours.outbox.add({
      groupId: "g",
      callId: "c0",
      callbackUrl: "http://127.0.0.1:9/cb",
      body: {},
    }),
  );
  const next = String(
    await ours.outbox.add({
      groupId: "g",
      callId: "c1",
      callbackUrl: "http://127.0.0.1:9/cb",
      body: {},
    }),
  );
  // Damaged at rest: the sealed value no longer opens under any key.
  await sql(
    url,
    "UPDATE rap_tool_outbox SET sealed = jsonb_set(sealed, '{ciphertext}', '\"AAAA\"') WHERE id = $1",
    [bad],
  );
  const events: { id: string; dropped: boolean }[] = [];
  let claimed: string[] = [];
  for (let pass = 0; pass < 20 && claimed.length === 0; pass++) {
    await sql(url, "UPDATE rap_tool_outbox SET next_at = now()");
    claimed = (await ours.outbox.claim(10, 60_000, (e) => events.push(e))).map((m) => m.id);
  }
  assert.deepEqual(claimed, [next], "the group's next message once the unreadable one is gone");
  assert.ok(events.length >= 2 && events.length <= 10, `bounded: ${events.length} claims`);
  assert.ok(events.every((e) => e.id === bad));
  assert.deepEqual(
    events.map((e) => e.dropped),
    [...Array(events.length - 1).fill(false), true],
    "dropped once, at the last claim",
  );
});

test("[PG-rap-tool-cancel-outbox-race] 200 cancellations racing a write of the same call: no row is ever left for a cancelled call", async (t) => {
  if (skipWithoutPostgres(t, PG)) return;
  const url = await PG.freshDatabase();
  const ring = keyring();
  const [one, two] = await Promise.all([
    openPostgresToolState({ url, keyring: ring }),
    openPostgresToolState({ url, keyring: ring }),
  ]);
  t.after(() => Promise.all([one.close(), two.close()]));
  let written = 0;
  for (let i = 0; i < 200; i++) {
    const [id] = await Promise.all([
      one.outbox.add({
        groupId: `g${i}`,
        callId: "c",
        callbackUrl: "http://127.0.0.1:9/cb",
        body: {},
      }),
      two.cancellations.cancel(`g${i}`, i % 2 ? "c" : undefined, 60_000),
    ]);
    if (id) written++;
  }
  t.diagnostic(`${written} of 200 writes won the race (and were then removed by the cancellation)`);
  const [row] = await sql(url, "SELECT count(*)::int AS n FROM rap_tool_outbox");
  assert.equal(row?.n, 0, "no message left for a cancelled call");
});

test("[PG-rap-tool-outbox-fallback-key] the outbox write commits but its answer is lost: the memory fallback sends under the same Idempotency-Key as the outbox, so the runtime applies it once", async (t) => {
  if (skipWithoutPostgres(t, PG)) return;
  const url = await PG.freshDatabase();
  const real = await openPostgresToolState({ url, keyring: keyring() });
  const ids: (string | undefined)[] = [];
  const lostAfterCommit = async <T>(id: string, write: () => Promise<T>) => {
    ids.push(id);
    await write();
    throw new Error("connection lost after COMMIT");
  };
  const ledger = real.calls as CallLedger;
  const state: ToolStateStore = {
    ...real,
    consents: real.consents,
    close: () => real.close(),
    // A call's final message is written by the call ledger, with its outbox row, in one transaction.
    calls: new Proxy(ledger, {
      get: (target, name) => {
        if (name === "finish") {
          return (call: LedgerCall, message: { id: string; body: unknown }) =>
            lostAfterCommit(message.id, () => target.finish(call, message));
        }
        const value = Reflect.get(target, name, target);
        return typeof value === "function" ? value.bind(target) : value;
      },
    }),
    outbox: {
      claim: (...args) => real.outbox.claim(...args),
      remove: (id) => real.outbox.remove(id),
      retryLater: (id, ms) => real.outbox.retryLater(id, ms),
      add: (message) => lostAfterCommit(message.id ?? "", () => real.outbox.add(message)),
    },
  };
  const sink = await keyedSink();
  const { tool, url: toolUrl } = await startTool({
    operations: [
      { name: "echo", description: "echo", inputSchema: { type: "object" }, handler: () => "done" },
    ],
    state,
    outboxTuning: { pollMs: 20 },
  });
  t.after(async () => {
    tool.shutdown();
    await real.close();
  });
  const body = invocation(sink.url, { group_id: "thread_fallback" });
  assert.equal((await post(`${toolUrl}/invoke`, body)).status, 200);
  // Bounded (20 s, far beyond the two quick deliveries), so that a failure shows with a message instead of a hang.
  const deadline = Date.now() + 20_000;
  while (sink.accepted(String(body.id)).length < 2) {
    assert.ok(Date.now() < deadline, `expected two deliveries: ${JSON.stringify(sink.deliveries)}`);
    await new Promise((r) => setTimeout(r, 10));
  }
  assert.equal(typeof ids[0], "string", "the id exists before the write");
  assert.deepEqual(
    [...new Set(sink.accepted(String(body.id)).map((d) => d.key))],
    [ids[0]],
    "outbox and fallback: one key, the message's id",
  );
  assert.equal(sink.applied(String(body.id)).length, 1);
});

test("[PG-rap-tool-outbox-stop-releases] a clean stop mid-attempt releases the claim: another instance takes the message at once, not after claimMs", async (t) => {
  if (skipWithoutPostgres(t, PG)) return;
  const url = await PG.freshDatabase();
  const ring = keyring();
  const [one, two] = await Promise.all([
    openPostgresToolState({ url, keyring: ring }),
    openPostgresToolState({ url, keyring: ring }),
  ]);
  t.after(() => Promise.all([one.close(), two.close()]));
  // A runtime that never answers: the attempt is in flight when the pump stops.
  let reached: () => void = () => {};
  const arrived = new Promise<void>((resolve) => {
    reached = resolve;
  });
  const hung = createServer(() => reached());
  await new Promise<void>((resolve) => hung.listen(0, "127.0.0.1", resolve));
  t.after(() => {
    hung.closeAllConnections();
    hung.close();
  });
  const callbackUrl = `http://127.0.0.1:${(hung.address() as AddressInfo).port}/cb`;
  const id = await one.outbox.add({ groupId: "g", callId: "c", callbackUrl, body: { id: "c" } });
  const pump = new OutboxPump({
    outbox: one.outbox,
    delivery: { timeoutMs: 60_000 },
    claimMs: 600_000,
    logger: createLogger({ write: () => {} }),
  });
  pump.start();
  await arrived;
  pump.stop();
  await pump.idle();
  const taken = await two.outbox.claim(10, 60_000);
  assert.deepEqual(
    taken.map((m) => m.id),
    [id],
    "released on stop (the claim had 10 minutes left)",
  );
});

test("[PG-rap-tool-outbox-claim-bound] a claimMs not longer than one attempt's timeout is refused at construction (two instances could send one message at once)", () => {
  const logger = createLogger({ write: () => {} });
  const outbox = {
    add: async () => undefined,
    claim: async () => [],
    remove: async () => {},
    retryLater: async () => {},
  };
  for (const [claimMs, timeoutMs] of [
    [1_000, 1_000],
    [500, 1_000],
    [5_000, undefined],
    [0, 10],
    [Number.NaN, 10],
  ] as const) {
    assert.throws(
      () => new OutboxPump({ outbox, delivery: { timeoutMs }, claimMs, logger }),
      (error: Error) => error instanceof RangeError && /claimMs/.test(error.message),
      `claimMs ${claimMs}, timeout ${timeoutMs}`,
    );
  }
  new OutboxPump({ outbox, delivery: { timeoutMs: 1_000 }, claimMs: 1_001, logger });
  new OutboxPump({ outbox, delivery: {}, logger });
});
