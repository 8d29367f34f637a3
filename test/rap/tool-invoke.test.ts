import assert from "node:assert/strict";
import { test } from "node:test";
import { OperationError } from "../../src/rap/tool/index.ts";
import { MAX_BODY_BYTES, ToolResultSchema } from "../../src/rap/wire.ts";
import { callbackSink } from "../support/callback-sink.ts";
import { ECHO, invocation, post, startTool } from "./tool-fixture.ts";

const sink = await callbackSink();
let release: () => void = () => {};
const gate = new Promise<void>((resolve) => {
  release = resolve;
});
/** Calls of the "hold" operation: started, released by the test, or aborted by a cancellation. */
const holds = new Map<string, () => void>();
const abortSeen = new Map<string, Promise<boolean>>();
async function started(id: string): Promise<void> {
  for (let i = 0; i < 2000 && !holds.has(id); i++) await new Promise((r) => setTimeout(r, 5));
  assert.ok(holds.has(id), `call ${id} started`);
}
function aborted(id: string): Promise<boolean> | undefined {
  return abortSeen.get(id);
}
const { tool, url, logs } = await startTool({
  operations: [
    ECHO,
    {
      name: "slow",
      description: "Waits for the test (or a cancellation), then answers.",
      inputSchema: { type: "object" },
      handler: async ({ signal }) => {
        await new Promise<void>((resolve) => {
          signal.addEventListener("abort", () => resolve(), { once: true });
          void gate.then(resolve);
        });
        return "slow done";
      },
    },
    {
      name: "hold",
      description: "Runs until the test releases it or the runtime cancels it.",
      inputSchema: { type: "object" },
      handler: async ({ id, signal }) => {
        const outcome = new Promise<boolean>((resolve) => {
          signal.addEventListener("abort", () => resolve(true), { once: true });
          holds.set(id, () => resolve(false));
        });
        abortSeen.set(id, outcome);
        await outcome;
        return "held";
      },
    },
    {
      name: "fails",
      description: "Fails the way the argument says.",
      inputSchema: { type: "object", properties: { how: { enum: ["user", "internal"] } } },
      handler: async ({ arguments: args }) => {
        if (args.how === "user")
          throw new OperationError("The repository acme/api does not exist. Check the name.");
        throw new Error("connect ECONNREFUSED 10.0.0.7:5432 password=hunter2");
      },
    },
    {
      name: "plain",
      description:
        "Answers with a plain value, not a promise (a JavaScript handler without async).",
      inputSchema: { type: "object" },
      handler: ({ arguments: args }: { arguments: Record<string, unknown> }) =>
        args.fail
          ? (() => {
              throw new OperationError("Plain failure: check the input.");
            })()
          : "plain done",
    },
    {
      name: "rich",
      description: "Answers with display hints.",
      inputSchema: { type: "object" },
      handler: async () => ({ text: "done", display_as: [{ type: "text", content: "Done!" }] }),
    },
  ],
});
const invoke = `${url}/invoke`;

test("[RAP-tool-ack-200] an invocation is acknowledged with an empty 200 and answered at callback_url", async () => {
  const body = invocation(sink.url, { call_id: "secondary_1", user_id: "u1" });
  const answer = await post(invoke, body);
  assert.equal(answer.status, 200);
  assert.equal(answer.text, "");
  const result = await sink.waitFor((m) => m.id === body.id);
  assert.deepEqual(result, {
    type: "tool_result",
    group_id: "thread_1",
    id: body.id,
    call_id: "secondary_1",
    text: "echo: hi",
  });
  assert.ok(ToolResultSchema.safeParse(result).success);
});

test("[RAP-tool-ack-200] the ack does not wait for the work", async () => {
  const body = invocation(sink.url, { operation: "slow", arguments: {} });
  const answer = await post(invoke, body);
  assert.equal(answer.status, 200, "acknowledged while the handler is still blocked");
  assert.equal(sink.forCall(String(body.id)).length, 0);
  release();
  const result = await sink.waitFor((m) => m.id === body.id);
  assert.equal(result.text, "slow done");
});

test("[RAP-tool-result-display-as] display_as from the handler is passed through", async () => {
  const body = invocation(sink.url, { operation: "rich", arguments: {} });
  await post(invoke, body);
  const result = await sink.waitFor((m) => m.id === body.id);
  assert.deepEqual(result.display_as, [{ type: "text", content: "Done!" }]);
});

test("[RAP-error-form] an OperationError reaches the user as `Error: <message>`; other errors say nothing internal", async () => {
  const user = invocation(sink.url, { operation: "fails", arguments: { how: "user" } });
  const internal = invocation(sink.url, { operation: "fails", arguments: { how: "internal" } });
  await post(invoke, user);
  await post(invoke, internal);
  const a = await sink.waitFor((m) => m.id === user.id);
  const b = await sink.waitFor((m) => m.id === internal.id);
  assert.equal(a.text, "Error: The repository acme/api does not exist. Check the name.");
  assert.match(String(b.text), /^Error: fails failed unexpectedly\. Try again later/);
  assert.doesNotMatch(String(b.text), /ECONNREFUSED|10\.0\.0\.7|hunter2/);
});

test("[RAP-bad-input] bodies with nothing to call back to are refused with HTTP 400", async () => {
  const cases: [string, string][] = [
    ["not JSON", "{not json"],
    ["an array", "[1,2,3]"],
    ["null", "null"],
    ["a string", '"hello"'],
    ["an empty object", "{}"],
    ["no callback_url", JSON.stringify({ ...invocation(sink.url), callback_url: undefined })],
    ["a relative callback_url", JSON.stringify(invocation("/callback"))],
    ["a javascript: callback_url", JSON.stringify(invocation("javascript:alert(1)"))],
    ["no group_id", JSON.stringify({ ...invocation(sink.url), group_id: undefined })],
    ["an empty id", JSON.stringify(invocation(sink.url, { id: "" }))],
    ["an object id", JSON.stringify(invocation(sink.url, { id: { $gt: "" } }))],
    ["a 10 KB id", JSON.stringify(invocation(sink.url, { id: "x".repeat(10_000) }))],
    ["an http callback off loopback", JSON.stringify(invocation("http://runtime.example.com/cb"))],
  ];
  for (const [what, body] of cases) {
    const answer = await post(invoke, body);
    assert.equal(answer.status, 400, what);
    assert.equal(JSON.parse(answer.text).error, "invalid_request", what);
  }
});

test("[RAP-bad-input] oversized bodies get 413, other content types 415, other methods 405", async () => {
  const big = JSON.stringify(
    invocation(sink.url, { arguments: { text: "x".repeat(MAX_BODY_BYTES) } }),
  );
  assert.equal((await post(invoke, big)).status, 413);
  assert.equal(
    (await post(invoke, JSON.stringify(invocation(sink.url)), { "content-type": "text/plain" }))
      .status,
    415,
  );
  const get = await fetch(invoke);
  assert.equal(get.status, 405);
  assert.equal(get.headers.get("allow"), "POST");
  await get.arrayBuffer();
  assert.equal((await fetch(`${url}/nope`)).status, 404);
});

test("[RAP-bad-input] an oversized body without Content-Length (chunked) is cut off with 413", async () => {
  const chunk = new TextEncoder().encode(" ".repeat(64 * 1024));
  let sent = 0;
  const stream = new ReadableStream<Uint8Array>({
    pull(controller) {
      if (sent > MAX_BODY_BYTES * 2) return controller.close();
      sent += chunk.length;
      controller.enqueue(chunk);
    },
  });
  const response = await fetch(invoke, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: stream,
    duplex: "half",
  } as RequestInit);
  assert.equal(response.status, 413);
  await response.arrayBuffer();
});

test("[RAP-bad-input] a malformed invocation with a usable target gets 200 and an error tool_result", async () => {
  const cases: [string, Record<string, unknown>, RegExp][] = [
    ["no operation", { operation: undefined }, /malformed \(invalid: operation\)/],
    ["arguments as an array", { arguments: [1] }, /invalid: arguments/],
    ["arguments missing", { arguments: undefined }, /invalid: arguments/],
    [
      "unknown operation",
      { operation: "rm_rf" },
      /no operation named "rm_rf"\. Available operations: echo, slow/,
    ],
    [
      "arguments failing the schema",
      { arguments: { text: 42 } },
      /Invalid arguments for echo: \/text must be string/,
    ],
    ["a missing required argument", { arguments: {} }, /must have required property 'text'/],
    [
      "an extra argument",
      { arguments: { text: "a", extra: 1 } },
      /must NOT have additional properties/,
    ],
  ];
  for (const [what, fields, pattern] of cases) {
    const body = { ...invocation(sink.url), ...fields };
    const answer = await post(invoke, body);
    assert.equal(answer.status, 200, what);
    const result = await sink.waitFor((m) => m.id === body.id);
    assert.equal(result.type, "tool_result", what);
    assert.match(String(result.text), /^Error: /, what);
    assert.match(String(result.text), pattern, what);
  }
});

test("[RAP-bad-input] hostile strings and prototype keys are handled as data; the server keeps working", async () => {
  const hostile = [
    invocation(sink.url, { arguments: JSON.parse('{"text":"a","__proto__":{"polluted":true}}') }),
    invocation(sink.url, { arguments: { text: "\u0000\u202e<script>alert(1)</script>" } }),
    invocation(sink.url, { group_id: "../../../etc/passwd", arguments: { text: "x" } }),
    invocation(sink.url, { operation: "constructor" }),
    invocation(sink.url, { operation: "__proto__" }),
    invocation(sink.url, { thread_ancestors: "not-an-array" }),
    invocation(sink.url, { user_id: 12 }),
  ];
  for (const body of hostile) assert.equal((await post(invoke, body)).status, 200);
  for (const body of hostile) {
    const result = await sink.waitFor((m) => m.id === body.id);
    assert.equal(typeof result.text, "string");
  }
  assert.equal(({} as Record<string, unknown>).polluted, undefined, "no prototype pollution");
  const ok = invocation(sink.url);
  await post(invoke, ok);
  assert.equal((await sink.waitFor((m) => m.id === ok.id)).text, "echo: hi");
});

test("[RAP-cancel-tool-call] cancelling a running call aborts its handler and sends nothing more", async () => {
  const body = invocation(sink.url, {
    operation: "hold",
    arguments: {},
    group_id: "thread_cancel",
  });
  const other = invocation(sink.url, {
    operation: "hold",
    arguments: {},
    group_id: "thread_cancel",
  });
  await post(invoke, body);
  await post(invoke, other);
  await started(String(body.id));
  await started(String(other.id));
  const answer = await post(`${url}/cancel_tool_call`, {
    thread_id: "thread_cancel",
    tool_call_id: body.id,
  });
  assert.equal(answer.status, 200);
  assert.equal(answer.text, "");
  assert.deepEqual(await aborted(String(body.id)), true, "the handler saw the abort");
  holds.get(String(other.id))?.();
  await sink.waitFor((m) => m.id === other.id);
  await tool.settled();
  assert.deepEqual(sink.forCall(String(body.id)), [], "a cancelled call gets no tool_result");
});

test("[RAP-close-thread] closing a thread cancels every call in it, and only in it", async () => {
  const a = invocation(sink.url, { operation: "hold", arguments: {}, group_id: "thread_closing" });
  const b = invocation(sink.url, { operation: "hold", arguments: {}, group_id: "thread_closing" });
  const c = invocation(sink.url, { operation: "hold", arguments: {}, group_id: "thread_other" });
  for (const body of [a, b, c]) await post(invoke, body);
  for (const body of [a, b, c]) await started(String(body.id));
  assert.equal((await post(`${url}/close_thread`, { thread_id: "thread_closing" })).status, 200);
  assert.equal(await aborted(String(a.id)), true);
  assert.equal(await aborted(String(b.id)), true);
  holds.get(String(c.id))?.();
  await sink.waitFor((m) => m.id === c.id);
  await tool.settled();
  assert.deepEqual(sink.forCall(String(a.id)), []);
  assert.deepEqual(sink.forCall(String(b.id)), []);
  // Unknown threads and calls are fine too.
  assert.equal((await post(`${url}/close_thread`, { thread_id: "never_seen" })).status, 200);
});

test("[RAP-close-thread] close_thread and cancel_tool_call always answer an empty 200, whatever the body", async () => {
  for (const path of ["/close_thread", "/cancel_tool_call"]) {
    for (const body of [
      "{bad",
      "[]",
      "{}",
      JSON.stringify({ thread_id: "../x", tool_call_id: 5 }),
      "x".repeat(2 * MAX_BODY_BYTES),
    ]) {
      const answer = await post(`${url}${path}`, body);
      assert.equal(answer.status, 200, `${path} ${body.slice(0, 20)}`);
      assert.equal(answer.text, "");
    }
    const plain = await post(`${url}${path}`, '{"thread_id":"t"}', {
      "content-type": "text/plain",
    });
    assert.equal(plain.status, 200);
  }
});

test("[RAP-duplicate-invocation] a redelivered invocation (same group_id and id) while the first runs is answered once", async () => {
  const body = invocation(sink.url, { operation: "hold", arguments: {} });
  await post(invoke, body);
  await started(String(body.id));
  await post(invoke, body);
  holds.get(String(body.id))?.();
  await sink.waitFor((m) => m.id === body.id);
  await tool.settled();
  assert.equal(sink.forCall(String(body.id)).length, 1);
  assert.ok(logs.some((line) => line.includes("rap.invoke.duplicate")));
});

test("[RAP-tool-handler-plain-value] a handler that returns a plain value (or throws synchronously) is answered like an async one", async () => {
  const done = invocation(sink.url, { operation: "plain", arguments: {} });
  const failed = invocation(sink.url, { operation: "plain", arguments: { fail: true } });
  await post(invoke, done);
  await post(invoke, failed);
  assert.equal((await sink.waitFor((m) => m.id === done.id)).text, "plain done");
  assert.equal(
    (await sink.waitFor((m) => m.id === failed.id)).text,
    "Error: Plain failure: check the input.",
  );
});
