import assert from "node:assert/strict";
import { test } from "node:test";
import { signCallToken } from "../../src/rap/runtime/index.ts";
import { MAX_BODY_BYTES } from "../../src/rap/wire.ts";
import { TEST_KEY, testRuntime } from "../support/rap-runtime.ts";
import { eventually, standInTool } from "../support/rap-tool-stand-in.ts";

const result = (groupId: string, id: string, text = "done") => ({
  type: "tool_result",
  group_id: groupId,
  id,
  text,
});

async function setup(
  options: { now?: () => number; callTimeoutMs?: number; callbackTtlMs?: number } = {},
) {
  const tool = await standInTool();
  const rt = await testRuntime({ toolsetUrls: [tool.origin], ...options });
  const call = async (groupId: string, id: string) => {
    await rt.runtime.invoke({ groupId, id, operation: "echo", arguments: { text: id } });
    return tool.invocation(id);
  };
  return { tool, ...rt, call };
}

test("[RAP-callback-forged-url] a forged, tampered or foreign capability is refused with 403 and changes nothing", async () => {
  const { tool, runtime, url, call } = await setup();
  const inv = await call("g", "c1");
  const token = inv.callback_url.slice(`${url}/callback/`.length);
  const [payload, mac] = token.split(".") as [string, string];
  const otherKey = signCallToken(new Uint8Array(32).fill(9), {
    groupId: "g",
    id: "c1",
    exp: Date.now() + 60_000,
  });
  const tampered = `${Buffer.from(JSON.stringify({ g: "g", i: "c2", x: 9e15 })).toString("base64url")}.${mac}`;
  const flipped = `${payload}.${mac.startsWith("A") ? "B" : "A"}${mac.slice(1)}`;
  for (const bad of [
    otherKey,
    tampered,
    flipped,
    "garbage",
    `${payload}.`,
    `.${mac}`,
    `${payload}.${mac}.x`,
    `${token}x`,
  ]) {
    const answer = await tool.deliver(`${url}/callback/${bad}`, result("g", "c1", "injected"));
    assert.equal(answer.status, 403, bad);
  }
  const answer = await tool.deliver(`${url}/callback/`, result("g", "c1", "injected"));
  assert.equal(answer.status, 404);
  assert.equal((await runtime.getCall("g", "c1"))?.status, "pending");
});

test("[RAP-callback-forged-url] a message whose group_id or id differs from its capability is refused with 403", async () => {
  const { tool, runtime, call } = await setup();
  const a = await call("g1", "a");
  await call("g1", "b");
  await call("g2", "a");
  // The capability of g1/a used to deliver results for other calls.
  assert.equal((await tool.deliver(a, result("g1", "b", "injected"))).status, 403);
  assert.equal((await tool.deliver(a, result("g2", "a", "injected"))).status, 403);
  assert.equal(
    (
      await tool.deliver(a, {
        type: "subscription_event",
        group_id: "g1",
        tool_call_id: "b",
        text: "{}",
      })
    ).status,
    403,
  );
  assert.equal(
    (await tool.deliver(a, { type: "view_update", group_id: "g2", view_type: "diff", content: {} }))
      .status,
    403,
  );
  for (const [g, id] of [
    ["g1", "a"],
    ["g1", "b"],
    ["g2", "a"],
  ] as const) {
    assert.equal((await runtime.getCall(g, id))?.status, "pending");
  }
  // The right one still works.
  assert.equal((await tool.deliver(a, result("g1", "a"))).status, 200);
  assert.equal((await runtime.waitForResult("g1", "a")).result.text, "done");
});

test("[RAP-callback-forged-url] an expired capability is refused with 410 (the tool stops retrying)", async () => {
  let clock = 1_000_000;
  const { tool, runtime, call } = await setup({
    now: () => clock,
    callTimeoutMs: 1000,
    callbackTtlMs: 5000,
  });
  const inv = await call("g", "c1");
  clock += 5000;
  const answer = await tool.deliver(inv, result("g", "c1"));
  assert.equal(answer.status, 410);
  assert.equal(answer.body.error, "callback_expired");
  assert.notEqual((await runtime.getCall("g", "c1"))?.status, "completed");
});

test("[RAP-callback-duplicate] a second tool_result for a completed call is acknowledged and changes nothing", async () => {
  const { tool, runtime, recorded, call } = await setup();
  const inv = await call("g", "c1");
  const first = await tool.deliver(inv, result("g", "c1", "first"));
  assert.deepEqual(first, { status: 200, body: { ok: true } });
  const again = await tool.deliver(inv, result("g", "c1", "first"));
  const different = await tool.deliver(inv, result("g", "c1", "second"));
  const oauthLate = await tool.deliver(inv, {
    type: "oauth",
    group_id: "g",
    id: "c1",
    auth_url: "https://idp.example/a",
  });
  for (const answer of [again, different, oauthLate])
    assert.deepEqual(answer, { status: 200, body: { ok: true, duplicate: true } });
  const call1 = await runtime.getCall("g", "c1");
  assert.equal(call1?.status, "completed");
  assert.equal(call1?.result?.text, "first");
  assert.equal(recorded.results.length, 1, "reported once");
  assert.equal(recorded.authorizations.length, 0);
});

test("[RAP-callback-duplicate] concurrent duplicate deliveries apply exactly once", async () => {
  const { tool, runtime, recorded, call } = await setup();
  const inv = await call("g", "c1");
  const answers = await Promise.all(
    Array.from({ length: 20 }, () => tool.deliver(inv, result("g", "c1"))),
  );
  assert.ok(answers.every((a) => a.status === 200));
  assert.equal(answers.filter((a) => a.body.duplicate !== true).length, 1);
  assert.equal(recorded.results.length, 1);
  assert.equal((await runtime.thread("g")).calls.length, 1);
});

test("[RAP-callback-unmatched] a valid capability for a call the runtime does not know: logged, discarded, 404", async () => {
  const { tool, runtime, url } = await setup();
  const token = signCallToken(TEST_KEY, { groupId: "g", id: "ghost", exp: Date.now() + 60_000 });
  const answer = await tool.deliver(`${url}/callback/${token}`, result("g", "ghost"));
  assert.equal(answer.status, 404);
  assert.equal(answer.body.error, "unknown_call");
  const event = await tool.deliver(`${url}/callback/${token}`, {
    type: "subscription_event",
    group_id: "g",
    tool_call_id: "ghost",
    text: "{}",
  });
  assert.equal(event.status, 404);
  const thread = await runtime.thread("g");
  assert.deepEqual(thread.calls, []);
  assert.deepEqual(thread.entries, [], "nothing injected into the thread");
});

test("[RAP-bad-input] malformed, oversized, mistyped and unknown callbacks get 4xx and change nothing", async () => {
  const { tool, runtime, call } = await setup();
  const inv = await call("g", "c1");
  const cases: [string, Parameters<typeof tool.deliver>[2], unknown, number][] = [
    ["not JSON", { raw: "{not json" }, undefined, 400],
    ["JSON array", { raw: "[1,2]" }, undefined, 400],
    ["unknown type", undefined, { type: "progress", group_id: "g", id: "c1", text: "50%" }, 400],
    ["missing type", undefined, { group_id: "g", id: "c1", text: "x" }, 400],
    [
      "text is a number",
      undefined,
      { type: "tool_result", group_id: "g", id: "c1", text: 42 },
      400,
    ],
    ["id is a number", undefined, { type: "tool_result", group_id: "g", id: 1, text: "x" }, 400],
    ["no text nor content", undefined, { type: "tool_result", group_id: "g", id: "c1" }, 400],
    [
      "auth_url not a URL",
      undefined,
      { type: "oauth", group_id: "g", id: "c1", auth_url: "nope" },
      400,
    ],
    [
      "auth_url plain http",
      undefined,
      { type: "oauth", group_id: "g", id: "c1", auth_url: "http://evil.example/a" },
      400,
    ],
    [
      "auth_url javascript:",
      undefined,
      { type: "oauth", group_id: "g", id: "c1", auth_url: "javascript:alert(1)" },
      400,
    ],
    ["call_id mismatch", undefined, { ...result("g", "c1"), call_id: "other" }, 400],
    ["text/plain", { headers: { "content-type": "text/plain" } }, result("g", "c1"), 415],
    ["GET", { method: "GET" }, undefined, 405],
    [
      "oversized",
      { raw: JSON.stringify({ ...result("g", "c1"), text: "x".repeat(MAX_BODY_BYTES) }) },
      undefined,
      413,
    ],
  ];
  for (const [name, init, body, status] of cases) {
    const answer = await tool.deliver(inv, body, init);
    assert.equal(answer.status, status, name);
  }
  // Oversized without a content-length (chunked): counted while reading.
  const big = new ReadableStream<Uint8Array>({
    start(controller) {
      for (let i = 0; i < 20; i++) controller.enqueue(new Uint8Array(MAX_BODY_BYTES / 10).fill(32));
      controller.close();
    },
  });
  const chunked = await fetch(inv.callback_url, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: big,
    duplex: "half",
  } as RequestInit);
  assert.equal(chunked.status, 413);
  assert.equal((await runtime.getCall("g", "c1"))?.status, "pending");
  assert.deepEqual((await runtime.thread("g")).entries, []);
  // Still healthy afterwards.
  assert.equal((await tool.deliver(inv, result("g", "c1"))).status, 200);
});

test("[RAP-callback-serial-per-group] one group's messages are processed one at a time, in order; other groups proceed", async () => {
  let release!: () => void;
  const gate = new Promise<void>((r) => {
    release = r;
  });
  const order: string[] = [];
  const tool = await standInTool();
  const { runtime } = await testRuntime({
    toolsetUrls: [tool.origin],
    hooks: {
      onToolResult: async (e) => {
        order.push(`start ${e.groupId}/${e.id}`);
        if (e.id === "a1") await gate;
        order.push(`end ${e.groupId}/${e.id}`);
      },
    },
  });
  for (const [g, id] of [
    ["A", "a1"],
    ["A", "a2"],
    ["B", "b1"],
  ] as const) {
    await runtime.invoke({ groupId: g, id, operation: "echo", arguments: { text: id } });
  }
  // a1 is committed and answered, its hook blocks the A queue.
  assert.equal((await tool.deliver(tool.invocation("a1"), result("A", "a1"))).status, 200);
  const a2 = tool.deliver(tool.invocation("a2"), result("A", "a2"));
  await eventually(() => order.includes("start A/a1"), "a1's hook");
  // B is not held up by A.
  assert.equal((await tool.deliver(tool.invocation("b1"), result("B", "b1"))).status, 200);
  await eventually(() => order.includes("end B/b1"), "b1's hook");
  assert.equal((await runtime.getCall("A", "a2"))?.status, "pending", "a2 waits behind a1");
  release();
  assert.equal((await a2).status, 200);
  await eventually(() => order.includes("end A/a2"), "a2's hook");
  assert.deepEqual(order, [
    "start A/a1",
    "start B/b1",
    "end B/b1",
    "end A/a1",
    "start A/a2",
    "end A/a2",
  ]);
});
