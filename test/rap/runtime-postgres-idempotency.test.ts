/**
 * Delivery keys on callbacks (the tool's Idempotency-Key): hostile headers are refused with a typed 400 and apply
 * nothing; a keyed message is applied once however often it arrives; and on PostgreSQL, two runtime instances
 * receiving the same message at the same moment apply it once.
 */

import assert from "node:assert/strict";
import { connect } from "node:net";
import { test } from "node:test";
import {
  createRuntime,
  parseIdempotencyKey,
  type RapRuntime,
} from "../../src/rap/runtime/index.ts";
import { skipWithoutPostgres, testPostgres } from "../support/postgres.ts";
import { TEST_KEY, testRuntime } from "../support/rap-runtime.ts";
import { echoTool, standInTool } from "../support/rap-tool-stand-in.ts";

const PG = await testPostgres();

/** A POST with header bytes no fetch would send (controls, bytes above 0x7f), over a raw socket. */
function rawPost(
  url: string,
  headerLine: Buffer,
  body: string,
): Promise<{ status: number; body: Record<string, unknown> }> {
  const target = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(target.port), target.hostname, () => {
      socket.write(
        Buffer.concat([
          Buffer.from(
            `POST ${target.pathname} HTTP/1.1\r\nHost: ${target.host}\r\nContent-Type: application/json\r\n` +
              `Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n`,
          ),
          headerLine,
          Buffer.from(`\r\n\r\n${body}`),
        ]),
      );
    });
    let text = "";
    socket.setEncoding("utf8");
    socket.on("data", (chunk) => {
      text += chunk;
    });
    socket.on("error", reject);
    socket.on("end", () => {
      const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(text)?.[1]);
      const json = text.slice(text.indexOf("\r\n\r\n") + 4);
      let parsed: Record<string, unknown> = {};
      try {
        parsed = JSON.parse(json);
      } catch {}
      resolve({ status, body: parsed });
    });
  });
}

async function subscribedCall(runtime: RapRuntime, tool: Awaited<ReturnType<typeof standInTool>>) {
  const { id } = await runtime.invoke({
    groupId: "g",
    operation: "echo",
    arguments: { text: "hi" },
  });
  const invocation = tool.invocation(id);
  const started = await tool.deliver(invocation, {
    type: "tool_result",
    group_id: "g",
    id,
    text: "subscribed",
    subscription: true,
  });
  assert.equal(started.status, 200);
  return invocation;
}

test("[RAP-callback-idempotency-key-hostile] a malformed, oversized, non-ASCII or repeated Idempotency-Key is a typed 400 and applies nothing", async () => {
  const tool = await standInTool({ tools: [echoTool] });
  const { runtime } = await testRuntime({ toolsetUrls: [tool.origin] });
  const invocation = await subscribedCall(runtime, tool);
  const event = {
    type: "subscription_event",
    group_id: "g",
    tool_call_id: invocation.id,
    text: "x",
  };
  const bad: [string, Record<string, string>][] = [
    ["empty", { "idempotency-key": "" }],
    ["empty quoted", { "idempotency-key": '""' }],
    ["256 characters", { "idempotency-key": "k".repeat(256) }],
    ["a space inside", { "idempotency-key": "two words" }],
    ["a quote inside the quoted form", { "idempotency-key": '"a"b"' }],
    ["several values", { "idempotency-key": "a, b" }],
  ];
  for (const [what, headers] of bad) {
    const reply = await tool.deliver(invocation, event, { headers });
    assert.equal(reply.status, 400, what);
    assert.equal(reply.body.error, "invalid_idempotency_key", what);
    assert.match(String(reply.body.message), /Idempotency-Key|header/, what);
  }
  for (const [what, line] of [
    ["non-ASCII (latin-1 é)", Buffer.from("Idempotency-Key: cl\xe9", "latin1")],
    ["UTF-8 bytes", Buffer.from("Idempotency-Key: ключ", "utf8")],
    ["two headers", Buffer.from("Idempotency-Key: a\r\nIdempotency-Key: b")],
  ] as const) {
    const reply = await rawPost(invocation.callback_url, line, JSON.stringify(event));
    assert.equal(reply.status, 400, what);
    assert.equal(reply.body.error, "invalid_idempotency_key", what);
  }
  assert.deepEqual((await runtime.thread("g")).entries, [], "nothing applied");
  // 255 visible characters is the limit, not past it.
  const edge = await tool.deliver(invocation, event, {
    headers: { "idempotency-key": "~".repeat(255) },
  });
  assert.equal(edge.status, 200);
  assert.equal((await runtime.thread("g")).entries.length, 1);
});

test("[RAP-callback-idempotency-key-comma] a quoted key containing a comma is one valid key (not refused with a 400 that drops the message); it deduplicates like any key", async () => {
  const tool = await standInTool({ tools: [echoTool] });
  const { runtime } = await testRuntime({ toolsetUrls: [tool.origin] });
  const invocation = await subscribedCall(runtime, tool);
  const event = {
    type: "subscription_event",
    group_id: "g",
    tool_call_id: invocation.id,
    text: "c",
  };
  const headers = { "idempotency-key": '"a,b"' };
  assert.deepEqual(await tool.deliver(invocation, event, { headers }), {
    status: 200,
    body: { ok: true },
  });
  assert.deepEqual(await tool.deliver(invocation, event, { headers }), {
    status: 200,
    body: { ok: true, duplicate: true },
  });
  assert.equal((await runtime.thread("g")).entries.length, 1);
  // Pure parser: the quoted value is read before any comma test; a bare list and quoted lists stay refused.
  assert.deepEqual(parseIdempotencyKey('"a,b"'), { ok: true, key: "a,b" });
  assert.deepEqual(parseIdempotencyKey(' "x,y" '), { ok: true, key: "x,y" });
  const spaced = parseIdempotencyKey('"x, y"');
  assert.match(
    spaced.ok ? "" : spaced.problem,
    /visible ASCII/,
    "refused for the space, not as a list",
  );
  for (const several of ["a, b", "a,b", '"a", "b"', '"a","b"']) {
    const check = parseIdempotencyKey(several);
    assert.equal(check.ok, false, several);
    assert.match(check.ok ? "" : check.problem, /not several/, several);
  }
});

test("[RAP-callback-idempotency-key] a keyed message is applied once however often it comes (quoted and bare forms are one key); unkeyed events stay at-least-once", async () => {
  const tool = await standInTool({ tools: [echoTool] });
  const { runtime, recorded } = await testRuntime({ toolsetUrls: [tool.origin] });
  const invocation = await subscribedCall(runtime, tool);
  const event = {
    type: "subscription_event",
    group_id: "g",
    tool_call_id: invocation.id,
    text: "e1",
  };
  const first = await tool.deliver(invocation, event, { headers: { "idempotency-key": "msg-1" } });
  assert.deepEqual(first, { status: 200, body: { ok: true } });
  const again = await tool.deliver(invocation, event, {
    headers: { "idempotency-key": '"msg-1"' },
  });
  assert.deepEqual(again, { status: 200, body: { ok: true, duplicate: true } });
  const view = { type: "view_update", group_id: "g", view_type: "v", content: { n: 1 } };
  assert.equal(
    (await tool.deliver(invocation, view, { headers: { "idempotency-key": "v-1" } })).status,
    200,
  );
  await tool.deliver(
    invocation,
    { ...view, content: { n: 2 } },
    { headers: { "idempotency-key": "v-2" } },
  );
  // A late retry of the first view must not roll the view back.
  const late = await tool.deliver(invocation, view, { headers: { "idempotency-key": "v-1" } });
  assert.equal(late.body.duplicate, true);
  assert.deepEqual((await runtime.thread("g")).views, { v: { n: 2 } });
  // Without a key, a resent event is a new event (documented: at-least-once).
  await tool.deliver(invocation, event);
  await tool.deliver(invocation, event);
  const texts = (await runtime.thread("g")).entries.map((e) => (e as { text: string }).text);
  assert.deepEqual(texts, ["e1", "e1", "e1"]);
  assert.equal(recorded.events.length, 3);
  assert.equal(recorded.views.length, 2);
});

test("[PG-rap-callbacks-two-instances] two runtimes on one PostgreSQL: the same keyed message delivered to both at once is applied once, hooks fire once", async (t) => {
  if (skipWithoutPostgres(t, PG)) return;
  const databaseUrl = await PG.freshDatabase();
  const tool = await standInTool({ tools: [echoTool] });
  const seen = { results: 0, events: 0 };
  const make = () =>
    createRuntime({
      toolsetUrls: [tool.origin],
      databaseUrl,
      secretKey: TEST_KEY,
      hooks: {
        onToolResult: () => void seen.results++,
        onSubscriptionEvent: () => void seen.events++,
      },
    });
  const a = await make();
  const b = await make();
  t.after(() => Promise.all([a.close(), b.close()]));
  const [la, lb] = [await a.listen(), await b.listen()];
  const { id } = await a.invoke({ groupId: "g", operation: "echo", arguments: { text: "hi" } });
  const invocation = tool.invocation(id);
  const path = new URL(invocation.callback_url).pathname;
  const result = { type: "tool_result", group_id: "g", id, text: "done", subscription: true };
  const both = (body: unknown, key: string) =>
    Promise.all(
      [la.url, lb.url].map((base) =>
        tool.deliver(`${base}${path}`, body, { headers: { "idempotency-key": key } }),
      ),
    );
  const results = await both(result, "r-1");
  assert.deepEqual(
    results.map((r) => r.status),
    [200, 200],
  );
  assert.equal(results.filter((r) => r.body.duplicate).length, 1, "one applied, one duplicate");
  for (let n = 0; n < 20; n++) {
    const replies = await both(
      {
        type: "subscription_event",
        group_id: "g",
        tool_call_id: id,
        text: `e${n}`,
        final: n === 19,
      },
      `e-${n}`,
    );
    assert.equal(replies.filter((r) => r.status === 200 && !r.body.duplicate).length, 1, `e${n}`);
  }
  const thread = await b.thread("g");
  assert.deepEqual(
    thread.entries.map((e) => (e as { text: string }).text),
    Array.from({ length: 20 }, (_, n) => `e${n}`),
  );
  assert.equal(thread.calls[0]?.status, "completed");
  assert.equal(thread.calls[0]?.subscription, "ended");
  assert.deepEqual(seen, { results: 1, events: 20 });
});

test("[PG-rap-wait-across-instances] waitForResult on one instance resolves when the result reaches another instance", async (t) => {
  if (skipWithoutPostgres(t, PG)) return;
  const databaseUrl = await PG.freshDatabase();
  const tool = await standInTool({ tools: [echoTool] });
  const make = () =>
    createRuntime({ toolsetUrls: [tool.origin], databaseUrl, secretKey: TEST_KEY });
  const a = await make();
  const b = await make();
  t.after(() => Promise.all([a.close(), b.close()]));
  await a.listen();
  const lb = await b.listen();
  const { id } = await a.invoke({ groupId: "w", operation: "echo", arguments: { text: "hi" } });
  const waiting = a.waitForResult("w", id);
  const path = new URL(tool.invocation(id).callback_url).pathname;
  const reply = await tool.deliver(`${lb.url}${path}`, {
    type: "tool_result",
    group_id: "w",
    id,
    text: "from b",
  });
  assert.equal(reply.status, 200);
  const settled = await waiting;
  assert.equal(settled.result.text, "from b");
  assert.equal(settled.status, "completed");
});

test("[PG-rap-group-serial-across-instances] messages of one group_id arriving at two instances at once are processed one at a time (RAP §2.6)", async (t) => {
  if (skipWithoutPostgres(t, PG)) return;
  const databaseUrl = await PG.freshDatabase();
  const tool = await standInTool({ tools: [echoTool] });
  const log: string[] = [];
  let active = 0;
  let overlaps = 0;
  const make = (name: string) =>
    createRuntime({
      toolsetUrls: [tool.origin],
      databaseUrl,
      secretKey: TEST_KEY,
      hooks: {
        // Processing includes the hooks: a slow one keeps the thread busy, on every instance.
        onSubscriptionEvent: async (e) => {
          if (e.groupId !== "s") return;
          active++;
          if (active > 1) overlaps++;
          log.push(`${name}:${e.text}`);
          await new Promise((r) => setTimeout(r, 20));
          active--;
        },
      },
    });
  const a = await make("a");
  const b = await make("b");
  t.after(() => Promise.all([a.close(), b.close()]));
  const bases = [(await a.listen()).url, (await b.listen()).url];
  const start = async (groupId: string) => {
    const { id } = await a.invoke({ groupId, operation: "echo", arguments: { text: "x" } });
    const path = new URL(tool.invocation(id).callback_url).pathname;
    const reply = await tool.deliver(`${bases[0]}${path}`, {
      type: "tool_result",
      group_id: groupId,
      id,
      text: "ok",
      subscription: true,
    });
    assert.equal(reply.status, 200);
    return { id, path };
  };
  const s = await start("s");
  const other = await start("o");
  const replies = await Promise.all([
    ...Array.from({ length: 12 }, (_, n) =>
      tool.deliver(`${bases[n % 2]}${s.path}`, {
        type: "subscription_event",
        group_id: "s",
        tool_call_id: s.id,
        text: `e${n}`,
      }),
    ),
    tool.deliver(`${bases[1]}${other.path}`, {
      type: "subscription_event",
      group_id: "o",
      tool_call_id: other.id,
      text: "other",
    }),
  ]);
  assert.ok(replies.every((r) => r.status === 200));
  assert.equal(overlaps, 0, `one at a time across instances: ${log.join(" ")}`);
  assert.equal(log.length, 12);
  assert.ok(log.some((l) => l.startsWith("a:")) && log.some((l) => l.startsWith("b:")));
  // The store's order is the processing order.
  const texts = (await a.thread("s")).entries.map((e) => (e as { text: string }).text);
  assert.deepEqual(
    texts,
    log.map((l) => l.slice(2)),
  );
});

const echo2Tool = { ...echoTool, name: "echo2" };

/**
 * Two tools, one thread: each settles its own call with a `tool_result`, and both happen to use the same
 * Idempotency-Key (a counter). Each must be applied; only a true retry (same call, same key) is a duplicate.
 */
async function twoToolsOneThread(
  runtime: RapRuntime,
  a: Awaited<ReturnType<typeof standInTool>>,
  b: Awaited<ReturnType<typeof standInTool>>,
): Promise<void> {
  const first = await runtime.invoke({ groupId: "t", operation: "echo", arguments: { text: "1" } });
  const second = await runtime.invoke({
    groupId: "t",
    operation: "echo2",
    arguments: { text: "2" },
  });
  const key = { headers: { "idempotency-key": "1" } };
  const result = (id: string, text: string) => ({ type: "tool_result", group_id: "t", id, text });
  const fromA = await a.deliver(a.invocation(first.id), result(first.id, "from a"), key);
  assert.deepEqual(fromA, { status: 200, body: { ok: true } });
  const fromB = await b.deliver(b.invocation(second.id), result(second.id, "from b"), key);
  assert.deepEqual(fromB, { status: 200, body: { ok: true } }, "not suppressed by tool a's key");
  const settled = await runtime.waitForResult("t", second.id);
  assert.equal(settled.result.text, "from b");
  // A real retry of b's message (same call, same key) is still a duplicate.
  const retry = await b.deliver(b.invocation(second.id), result(second.id, "from b"), key);
  assert.deepEqual(retry, { status: 200, body: { ok: true, duplicate: true } });

  // Two subscriptions in the thread, each counting its events' keys from 1: every event is applied once.
  const subscribe = async (tool: typeof a, operation: string) => {
    const { id } = await runtime.invoke({ groupId: "s", operation, arguments: { text: "x" } });
    const started = await tool.deliver(tool.invocation(id), {
      ...result(id, "subscribed"),
      group_id: "s",
      subscription: true,
    });
    assert.equal(started.status, 200);
    return id;
  };
  const subA = await subscribe(a, "echo");
  const subB = await subscribe(b, "echo2");
  for (const n of [1, 2]) {
    for (const [tool, id] of [
      [a, subA],
      [b, subB],
    ] as const) {
      const event = {
        type: "subscription_event",
        group_id: "s",
        tool_call_id: id,
        text: `${id}:${n}`,
      };
      const headers = { headers: { "idempotency-key": String(n) } };
      assert.deepEqual(await tool.deliver(tool.invocation(id), event, headers), {
        status: 200,
        body: { ok: true },
      });
      assert.equal((await tool.deliver(tool.invocation(id), event, headers)).body.duplicate, true);
    }
  }
  const texts = (await runtime.thread("s")).entries.map((e) => (e as { text: string }).text);
  assert.deepEqual(texts, [`${subA}:1`, `${subB}:1`, `${subA}:2`, `${subB}:2`]);
}

test("[RAP-callback-idempotency-key-per-call] memory and sqlite: one tool's Idempotency-Key does not suppress another call's message in the same thread; a retry of the same call's message still does", async () => {
  for (const sqlite of [false, true]) {
    const a = await standInTool({ tools: [echoTool] });
    const b = await standInTool({ tools: [echo2Tool] });
    const { runtime } = await testRuntime({ toolsetUrls: [a.origin, b.origin], sqlite });
    await twoToolsOneThread(runtime, a, b);
  }
});

test("[RAP-callback-idempotency-key-per-call] postgres: the same, with the keys in PostgreSQL", async (t) => {
  if (skipWithoutPostgres(t, PG)) return;
  const a = await standInTool({ tools: [echoTool] });
  const b = await standInTool({ tools: [echo2Tool] });
  const runtime = await createRuntime({
    toolsetUrls: [a.origin, b.origin],
    databaseUrl: await PG.freshDatabase(),
    secretKey: TEST_KEY,
  });
  t.after(() => runtime.close());
  await runtime.listen();
  await twoToolsOneThread(runtime, a, b);
});
