import assert from "node:assert/strict";
import { test } from "node:test";
import { closedPort } from "../support/closed-port.ts";
import { testRuntime } from "../support/rap-runtime.ts";
import { standInTool } from "../support/rap-tool-stand-in.ts";

test("[RAP-runtime-non-200-error-result] a 4xx refusal becomes an error result at once, never retried", async () => {
  const tool = await standInTool({ ack: () => 404 });
  const { runtime, recorded } = await testRuntime({ toolsetUrls: [tool.origin] });
  const outcome = await runtime.invoke({
    groupId: "g",
    id: "c1",
    operation: "echo",
    arguments: { text: "x" },
  });
  assert.equal(outcome.accepted, false);
  assert.equal(tool.attempts.get("c1"), 1, "no retry on 4xx");
  const settled = await runtime.waitForResult("g", "c1");
  assert.equal(settled.status, "failed");
  assert.equal(
    settled.result.text,
    `Error: RAP tool 'echo' failed: the server at ${tool.origin}/invoke responded with HTTP 404. No result will arrive for this call.`,
  );
  assert.equal(settled.result.isError, true);
  assert.equal(settled.result.synthetic, true);
  assert.equal(recorded.results.length, 1);
});

test("[RAP-runtime-non-200-error-result] 5xx is retried with backoff and succeeds when the tool recovers", async () => {
  const tool = await standInTool({ ack: (_inv, attempt) => (attempt < 3 ? 503 : 200) });
  const { runtime } = await testRuntime({ toolsetUrls: [tool.origin] });
  const outcome = await runtime.invoke({
    groupId: "g",
    id: "c1",
    operation: "echo",
    arguments: { text: "x" },
  });
  assert.equal(outcome.accepted, true);
  assert.equal(tool.attempts.get("c1"), 3);
  assert.equal((await runtime.getCall("g", "c1"))?.status, "pending");
});

test("[RAP-runtime-invoke-retry-after] a tool answering 503 with Retry-After (its database restarting, say) is waited for beyond the attempts, up to unavailableMs: the call goes through instead of failing", async () => {
  const tool = await standInTool({
    ack: (_inv, attempt) => (attempt < 7 ? 503 : 200),
    refusalHeaders: { "retry-after": "0" },
  });
  const { runtime } = await testRuntime({
    toolsetUrls: [tool.origin],
    retry: { attempts: 3, baseDelayMs: 1 },
  });
  const outcome = await runtime.invoke({
    groupId: "g",
    id: "c1",
    operation: "echo",
    arguments: { text: "x" },
  });
  assert.equal(outcome.accepted, true);
  assert.equal(tool.attempts.get("c1"), 7);

  // Past unavailableMs the attempts' bound applies again, and the call ends with the 503.
  const down = await standInTool({ ack: () => 503, refusalHeaders: { "retry-after": "0" } });
  const bounded = await testRuntime({
    toolsetUrls: [down.origin],
    retry: { attempts: 3, baseDelayMs: 1, unavailableMs: 0 },
  });
  await bounded.runtime.invoke({
    groupId: "g",
    id: "c2",
    operation: "echo",
    arguments: { text: "x" },
  });
  assert.equal(down.attempts.get("c2"), 3);
});

test("[RAP-runtime-non-200-error-result] 5xx forever: bounded attempts, then the last status as the error result", async () => {
  const tool = await standInTool({ ack: () => 500 });
  const { runtime } = await testRuntime({
    toolsetUrls: [tool.origin],
    retry: { attempts: 3, baseDelayMs: 1 },
  });
  await runtime.invoke({ groupId: "g", id: "c1", operation: "echo", arguments: { text: "x" } });
  assert.equal(tool.attempts.get("c1"), 3);
  const settled = await runtime.waitForResult("g", "c1");
  assert.match(
    settled.result.text,
    /responded with HTTP 500\. No result will arrive for this call\.$/,
  );
});

test("[RAP-runtime-non-200-error-result] 200 is the only acknowledgement: 202, 204 and a redirect are refusals", async () => {
  for (const status of [202, 204, 307]) {
    const tool = await standInTool({ ack: () => status });
    const { runtime } = await testRuntime({ toolsetUrls: [tool.origin] });
    const outcome = await runtime.invoke({
      groupId: "g",
      id: "c",
      operation: "echo",
      arguments: { text: "x" },
    });
    assert.equal(outcome.accepted, false, `HTTP ${status}`);
    assert.equal(tool.attempts.get("c"), 1);
    assert.match(
      (await runtime.waitForResult("g", "c")).result.text,
      new RegExp(`HTTP ${status}\\.`),
    );
  }
});

test("[RAP-runtime-non-200-error-result] an unreachable endpoint is retried a bounded number of times, then an error result", async () => {
  const port = await closedPort();
  const tool = await standInTool({
    toolset: () => ({
      name: "gone",
      endpoint: `http://127.0.0.1:${port}/invoke`,
      tools: [{ name: "echo", description: "", inputSchema: { type: "object" } }],
    }),
  });
  const { runtime } = await testRuntime({
    toolsetUrls: [tool.origin],
    retry: { attempts: 3, baseDelayMs: 1 },
  });
  const outcome = await runtime.invoke({ groupId: "g", id: "c", operation: "echo", arguments: {} });
  assert.equal(outcome.accepted, false);
  const settled = await runtime.waitForResult("g", "c");
  assert.match(
    settled.result.text,
    /^Error: RAP tool 'echo' failed: .* could not be reached \(ECONNREFUSED; 3 attempts\)/,
  );
  assert.equal(settled.status, "failed");
});
