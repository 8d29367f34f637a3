import assert from "node:assert/strict";
import { test } from "node:test";
import { callbackSink } from "../support/callback-sink.ts";
import { ECHO, invocation, post, startTool } from "./tool-fixture.ts";

const sink = await callbackSink();
const aborted = new Set<string>();
let releaseLate: () => void = () => {};

const { url } = await startTool({
  operationTimeoutMs: 300,
  operations: [
    ECHO,
    {
      name: "stuck",
      description: "Never returns, ignores its signal.",
      inputSchema: { type: "object" },
      handler: () => new Promise(() => {}),
    },
    {
      name: "polite",
      description: "Stops when its signal aborts, and notes it.",
      inputSchema: { type: "object" },
      handler: ({ id, signal }) =>
        new Promise((_, reject) => {
          signal.addEventListener("abort", () => {
            aborted.add(id);
            reject(signal.reason);
          });
        }),
    },
    {
      name: "late",
      description: "Answers only when the test says so, long after its deadline.",
      inputSchema: { type: "object" },
      handler: () =>
        new Promise((resolve) => {
          releaseLate = () => resolve("too late");
        }),
    },
  ],
});

test("[RAP-tool-operation-deadline] 16 handlers that never return each end with an error tool_result, free their slots, and a 17th call completes", async () => {
  const ids: string[] = [];
  for (let i = 0; i < 16; i++) {
    const body = invocation(sink.url, { operation: i % 2 ? "stuck" : "polite", arguments: {} });
    ids.push(body.id as string);
    assert.equal((await post(`${url}/invoke`, body)).status, 200);
  }
  const last = invocation(sink.url, { arguments: { text: "seventeenth" } });
  assert.equal((await post(`${url}/invoke`, last)).status, 200);
  const done = await sink.waitFor((m) => m.id === last.id, 20_000);
  assert.equal(done.text, "echo: seventeenth");
  for (const id of ids) {
    const result = await sink.waitFor((m) => m.id === id, 20_000);
    assert.equal(result.type, "tool_result");
    assert.match(String(result.text), /^Error: .*did not finish within 1 second/);
  }
  for (const [i, id] of ids.entries()) {
    if (i % 2 === 0) assert.ok(aborted.has(id), "a well-behaved handler is told to stop");
  }
});

test("[RAP-tool-operation-late-result] a result that arrives after the deadline is dropped: the runtime gets exactly one tool_result", async () => {
  const body = invocation(sink.url, { operation: "late", arguments: {} });
  assert.equal((await post(`${url}/invoke`, body)).status, 200);
  const result = await sink.waitFor((m) => m.id === body.id, 20_000);
  assert.match(String(result.text), /did not finish within/);
  releaseLate();
  // A later call on the same tool is answered after the late one resolved: by then a late send would be visible.
  const probe = invocation(sink.url, { arguments: { text: "probe" } });
  await post(`${url}/invoke`, probe);
  await sink.waitFor((m) => m.id === probe.id);
  assert.equal(sink.forCall(body.id as string).length, 1);
});
