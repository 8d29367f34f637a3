import assert from "node:assert/strict";
import { test } from "node:test";
import { InvocationRefusedError } from "../../src/rap/runtime/index.ts";
import { testRuntime } from "../support/rap-runtime.ts";
import { standInTool } from "../support/rap-tool-stand-in.ts";

// 100k levels: JSON.parse copes (V8's parser is iterative), JSON.stringify overflows the stack.
const LEVELS = 100_000;
const deepArray = () => `${"[".repeat(LEVELS)}${"]".repeat(LEVELS)}`;

const openTool = {
  name: "store_anything",
  description: "Takes any object.",
  inputSchema: { type: "object" },
};

async function setup() {
  const tool = await standInTool({ tools: [openTool] });
  const rt = await testRuntime({ toolsetUrls: [tool.origin], sqlite: true });
  return { tool, ...rt };
}

test("[RAP-bad-input-deep-json] call arguments nested 100k levels are refused as invalid input (not a store failure); nothing is sent or stored", async () => {
  const { tool, runtime } = await setup();
  const args = JSON.parse(`{"payload":${deepArray()}}`) as Record<string, unknown>;
  await assert.rejects(
    runtime.invoke({ groupId: "g", id: "deep", operation: "store_anything", arguments: args }),
    (error: unknown) => {
      assert.ok(error instanceof InvocationRefusedError, String(error));
      assert.equal(error.code, "rap_invalid_arguments");
      assert.match(error.message, /nested/);
      return true;
    },
  );
  assert.equal(await runtime.getCall("g", "deep"), undefined, "nothing stored");
  assert.equal(tool.invocations.length, 0, "nothing sent");
  // The runtime still works for the next, sane call.
  const ok = await runtime.invoke({
    groupId: "g",
    id: "fine",
    operation: "store_anything",
    arguments: { a: [[[1]]] },
  });
  assert.equal(ok.accepted, true);
});

test("[RAP-bad-input-deep-json] callback content nested 100k levels gets 400 (the tool stops retrying), never 500; the call stays open", async () => {
  const { tool, runtime } = await setup();
  await runtime.invoke({ groupId: "g", id: "c1", operation: "store_anything", arguments: {} });
  const inv = tool.invocation("c1");
  const bodies = [
    `{"type":"view_update","group_id":"g","view_type":"diff","content":${deepArray()}}`,
    `{"type":"tool_result","group_id":"g","id":"c1","text":"x","content":[{"type":"json","value":${deepArray()}}]}`,
    `{"type":"tool_result","group_id":"g","id":"c1","text":"x","display_as":[{"type":"x","v":${deepArray()}}]}`,
  ];
  for (const raw of bodies) {
    const answer = await tool.deliver(inv, undefined, { raw });
    assert.equal(answer.status, 400, raw.slice(0, 60));
    assert.equal(answer.body.error, "too_deep");
    assert.match(String(answer.body.message), /nested/);
  }
  assert.equal((await runtime.getCall("g", "c1"))?.status, "pending");
  assert.deepEqual((await runtime.thread("g")).views, {});
  // A sane result afterwards is applied.
  const done = await tool.deliver(inv, {
    type: "tool_result",
    group_id: "g",
    id: "c1",
    text: "ok",
  });
  assert.equal(done.status, 200);
  assert.equal((await runtime.getCall("g", "c1"))?.status, "completed");
});
