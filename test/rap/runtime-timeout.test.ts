import assert from "node:assert/strict";
import { join } from "node:path";
import { test } from "node:test";
import { createRuntime, MemoryRuntimeStore } from "../../src/rap/runtime/index.ts";
import { TEST_KEY, testRuntime } from "../support/rap-runtime.ts";
import { eventually, standInTool } from "../support/rap-tool-stand-in.ts";
import { tempDir } from "../support/tmp.ts";

test("[RAP-runtime-timeout] an open call past its deadline gets a synthetic error result; a late result changes nothing", async () => {
  let clock = 1_000_000;
  const tool = await standInTool();
  const { runtime, recorded } = await testRuntime({
    toolsetUrls: [tool.origin],
    now: () => clock,
    callTimeoutMs: 60_000,
  });
  await runtime.invoke({ groupId: "g", id: "slow", operation: "echo", arguments: { text: "x" } });
  await runtime.invoke({ groupId: "g", id: "auth", operation: "echo", arguments: { text: "x" } });
  await tool.deliver(tool.invocation("auth"), {
    type: "oauth",
    group_id: "g",
    id: "auth",
    auth_url: "https://idp.example/a",
  });
  clock += 59_999;
  assert.equal(await runtime.sweepTimeouts(), 0);
  clock += 1;
  assert.equal(await runtime.sweepTimeouts(), 2, "pending and authorizing calls both time out");
  for (const id of ["slow", "auth"]) {
    const settled = await runtime.waitForResult("g", id);
    assert.equal(settled.status, "timed_out");
    assert.equal(
      settled.result.text,
      "Error: the tool did not answer within 1 minute. The runtime stopped waiting; no result will be accepted for this call.",
    );
    assert.equal(settled.result.synthetic, true);
  }
  const late = await tool.deliver(tool.invocation("slow"), {
    type: "tool_result",
    group_id: "g",
    id: "slow",
    text: "late",
  });
  assert.equal(late.status, 200);
  assert.equal(late.body.duplicate, true);
  assert.equal((await runtime.getCall("g", "slow"))?.status, "timed_out");
  assert.equal(recorded.results.length, 2);
});

test("[RAP-runtime-timeout] the timer fires by itself (short real timeout, bounded polling)", async () => {
  const tool = await standInTool();
  const { runtime } = await testRuntime({ toolsetUrls: [tool.origin], callTimeoutMs: 50 });
  await runtime.invoke({ groupId: "g", id: "c", operation: "echo", arguments: { text: "x" } });
  const settled = await runtime.waitForResult("g", "c");
  assert.equal(settled.status, "timed_out");
  assert.match(settled.result.text, /within 50 ms/);
});

test("[RAP-runtime-timeout] deadlines survive a restart: a call that fell due while the runtime was down is swept on start", async () => {
  const dir = tempDir();
  const dbPath = join(dir, "rap-runtime.db");
  let clock = 5_000_000;
  const tool = await standInTool();
  const first = await createRuntime({
    toolsetUrls: [tool.origin],
    dbPath,
    now: () => clock,
    callTimeoutMs: 10_000,
  });
  await first.listen();
  await first.invoke({ groupId: "g", id: "c1", operation: "echo", arguments: { text: "x" } });
  await first.invoke({ groupId: "g", id: "c2", operation: "echo", arguments: { text: "x" } });
  await first.close();
  clock += 10_000;
  const results: string[] = [];
  const second = await createRuntime({
    toolsetUrls: [tool.origin],
    dbPath,
    now: () => clock,
    callTimeoutMs: 10_000,
    hooks: { onToolResult: (e) => void results.push(`${e.id}:${e.call.status}`) },
  });
  try {
    assert.deepEqual(results.sort(), ["c1:timed_out", "c2:timed_out"]);
    assert.equal((await second.getCall("g", "c1"))?.result?.synthetic, true);
  } finally {
    await second.close();
  }
});

test("[RAP-runtime-timeout] waitForResult: unknown calls and aborted waits are typed errors", async () => {
  const tool = await standInTool();
  const { runtime } = await testRuntime({ toolsetUrls: [tool.origin] });
  await assert.rejects(runtime.waitForResult("g", "nope"), { code: "rap_unknown_call" });
  await runtime.invoke({ groupId: "g", id: "c", operation: "echo", arguments: { text: "x" } });
  const controller = new AbortController();
  const waiting = runtime.waitForResult("g", "c", { signal: controller.signal });
  controller.abort();
  await assert.rejects(waiting, { code: "rap_wait_aborted" });
  // A memory store with a past deadline: sweeping at start, no listen needed.
  const store = new MemoryRuntimeStore();
  await store.createCall({
    groupId: "g",
    id: "old",
    callId: null,
    operation: "echo",
    arguments: {},
    userId: null,
    toolset: "t",
    baseUrl: tool.origin,
    requiresAuth: null,
    createdAt: 0,
    deadline: 1,
  });
  const other = await createRuntime({ toolsetUrls: [tool.origin], store, secretKey: TEST_KEY });
  try {
    await eventually(
      async () => (await other.getCall("g", "old"))?.status === "timed_out",
      "sweep on start",
    );
  } finally {
    await other.close();
  }
});
