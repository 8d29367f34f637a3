import assert from "node:assert/strict";
import { test } from "node:test";
import { InvocationRefusedError } from "../../src/rap/runtime/index.ts";
import { testRuntime } from "../support/rap-runtime.ts";
import { echoTool, standInTool } from "../support/rap-tool-stand-in.ts";

const ghTool = {
  name: "get_pull_request",
  description: "Reads a PR.",
  inputSchema: {
    type: "object",
    properties: { number: { type: "integer", minimum: 1 } },
    required: ["number"],
  },
  annotations: { readOnly: true, requiresAuth: "github" },
};

test("[RAP-runtime-discovery-all-or-nothing] one invalid tool rejects its whole toolset; other toolsets still load", async () => {
  const good = await standInTool({ name: "good", tools: [echoTool] });
  const badSchema = await standInTool({
    name: "bad-schema",
    tools: [
      { ...ghTool, name: "fine_tool" },
      { name: "broken", description: "x", inputSchema: { type: "not-a-type" } },
    ],
  });
  const dupNames = await standInTool({
    name: "dup",
    tools: [
      { ...ghTool, name: "twice" },
      { ...ghTool, name: "twice" },
    ],
  });
  const wrongShape = await standInTool({
    toolset: (origin) => ({
      name: "shape",
      endpoint: `${origin}/invoke`,
      tools: [{ name: "no_description", inputSchema: {} }],
    }),
  });
  const emptyTools = await standInTool({
    toolset: (origin) => ({ name: "empty", endpoint: `${origin}/invoke`, tools: [] }),
  });
  const notJson = await standInTool({ toolset: () => "not json at all" });
  const { runtime } = await testRuntime({
    toolsetUrls: [
      good.origin,
      badSchema.origin,
      dupNames.origin,
      wrongShape.origin,
      emptyTools.origin,
      notJson.origin,
      "http://127.0.0.1:1",
    ],
  });
  assert.deepEqual(
    runtime.listTools().map((t) => t.name),
    ["echo"],
  );
  assert.deepEqual(
    runtime.toolsets().map((t) => t.name),
    ["good"],
  );
  const failures = runtime.problems().failures;
  assert.equal(failures.length, 6);
  const byBase = new Map(failures.map((f) => [f.baseUrl, f.code]));
  assert.equal(byBase.get(badSchema.origin), "rap_toolset_invalid");
  assert.equal(byBase.get(dupNames.origin), "rap_toolset_invalid");
  assert.equal(byBase.get(wrongShape.origin), "rap_toolset_invalid");
  assert.equal(byBase.get(emptyTools.origin), "rap_toolset_invalid");
  assert.equal(byBase.get("http://127.0.0.1:1"), "rap_toolset_unreachable");
  assert.throws(() => runtime.prepare({ operation: "fine_tool", arguments: { number: 1 } }), {
    code: "rap_unknown_operation",
  });
});

test("[RAP-runtime-discovery-all-or-nothing] a non-https endpoint off loopback and a foreign $schema reject the toolset", async () => {
  const insecure = await standInTool({
    toolset: () => ({
      name: "insecure",
      endpoint: "http://tools.example.com/invoke",
      tools: [echoTool],
    }),
  });
  const draft7 = await standInTool({
    name: "draft7",
    tools: [
      {
        ...echoTool,
        inputSchema: { $schema: "http://json-schema.org/draft-07/schema#", type: "object" },
      },
    ],
  });
  const { runtime } = await testRuntime({ toolsetUrls: [insecure.origin, draft7.origin] });
  assert.equal(runtime.listTools().length, 0);
  assert.deepEqual(
    runtime.problems().failures.map((f) => f.code),
    ["rap_toolset_invalid", "rap_toolset_invalid"],
  );
});

test("[RAP-runtime-name-clash] a tool name two toolsets share is exposed by neither; invoking it is refused locally", async () => {
  const a = await standInTool({
    name: "alpha",
    tools: [echoTool, { ...ghTool, name: "only_alpha" }],
  });
  const b = await standInTool({ name: "beta", tools: [echoTool] });
  const { runtime } = await testRuntime({ toolsetUrls: [a.origin, b.origin] });
  assert.deepEqual(
    runtime.listTools().map((t) => t.name),
    ["only_alpha"],
  );
  assert.deepEqual(runtime.problems().clashes, [{ name: "echo", toolsets: ["alpha", "beta"] }]);
  await assert.rejects(
    runtime.invoke({ groupId: "g", operation: "echo", arguments: { text: "hi" } }),
    (e: unknown) => e instanceof InvocationRefusedError && e.code === "rap_name_clash",
  );
  await assert.rejects(
    runtime.invoke({
      groupId: "g",
      toolset: "alpha",
      operation: "echo",
      arguments: { text: "hi" },
    }),
    { code: "rap_name_clash" },
  );
  assert.equal(a.invocations.length + b.invocations.length, 0, "nothing was sent");
});

test("[RAP-runtime-requires-auth-flagged] requiresAuth shows in listTools, prepare, the invoke outcome and onRequiresAuth before dispatch", async () => {
  const tool = await standInTool({ name: "github-tools", tools: [ghTool, echoTool] });
  let invocationsWhenFlagged = -1;
  const { runtime, recorded } = await testRuntime({
    toolsetUrls: [tool.origin],
    hooks: {
      onRequiresAuth: (e) => {
        invocationsWhenFlagged = tool.invocations.length;
        recorded.requiresAuth.push(e);
      },
    },
  });
  const listed = runtime.listTools();
  assert.equal(listed.find((t) => t.name === "get_pull_request")?.requiresAuth, "github");
  assert.equal(listed.find((t) => t.name === "get_pull_request")?.toolset, "github-tools");
  assert.equal(listed.find((t) => t.name === "echo")?.requiresAuth, undefined);
  assert.equal(
    runtime.prepare({ operation: "get_pull_request", arguments: { number: 3 } }).requiresAuth,
    "github",
  );
  const outcome = await runtime.invoke({
    groupId: "g1",
    operation: "get_pull_request",
    arguments: { number: 3 },
  });
  assert.equal(outcome.requiresAuth, "github");
  assert.equal(outcome.accepted, true);
  assert.equal(invocationsWhenFlagged, 0, "flagged before the invocation was sent");
  assert.deepEqual(recorded.requiresAuth, [
    {
      groupId: "g1",
      id: outcome.id,
      operation: "get_pull_request",
      toolset: "github-tools",
      provider: "github",
    },
  ]);
  const plain = await runtime.invoke({
    groupId: "g1",
    operation: "echo",
    arguments: { text: "x" },
  });
  assert.equal(plain.requiresAuth, undefined);
  assert.equal(recorded.requiresAuth.length, 1);
});

test("[RAP-bad-input] arguments that fail inputSchema are refused locally with a typed error; nothing is sent or stored", async () => {
  const tool = await standInTool({ tools: [ghTool] });
  const { runtime } = await testRuntime({ toolsetUrls: [tool.origin] });
  for (const args of [{}, { number: "3" }, { number: 0 }, { number: 1.5 }]) {
    await assert.rejects(
      runtime.invoke({ groupId: "g", id: "c1", operation: "get_pull_request", arguments: args }),
      (e: unknown) =>
        e instanceof InvocationRefusedError &&
        e.code === "rap_invalid_arguments" &&
        e.issues.length > 0,
    );
  }
  await assert.rejects(
    runtime.invoke({
      groupId: "g",
      operation: "get_pull_request",
      arguments: [] as unknown as Record<string, unknown>,
    }),
    { code: "rap_invalid_arguments" },
  );
  await assert.rejects(runtime.invoke({ groupId: "g", operation: "nope", arguments: {} }), {
    code: "rap_unknown_operation",
  });
  await assert.rejects(
    runtime.invoke({
      groupId: "g",
      toolset: "other",
      operation: "get_pull_request",
      arguments: { number: 1 },
    }),
    { code: "rap_toolset_mismatch" },
  );
  assert.equal(tool.invocations.length, 0);
  assert.equal(tool.attempts.size, 0);
  assert.equal(await runtime.getCall("g", "c1"), undefined);
});

test("[RAP-runtime-invoke-shape] the invocation carries the RAP fields; a reused call id in a thread is refused", async () => {
  const tool = await standInTool();
  const { runtime, url } = await testRuntime({ toolsetUrls: [tool.origin] });
  const outcome = await runtime.invoke({
    groupId: "thread_1",
    id: "call_1",
    callId: "model-7",
    userId: "user_42",
    threadAncestors: ["root"],
    operation: "echo",
    arguments: { text: "hi" },
  });
  assert.deepEqual(outcome, { groupId: "thread_1", id: "call_1", accepted: true });
  const inv = tool.invocation("call_1");
  assert.equal(inv.operation, "echo");
  assert.deepEqual(inv.arguments, { text: "hi" });
  assert.equal(inv.group_id, "thread_1");
  assert.equal(inv.call_id, "model-7");
  assert.equal(inv.user_id, "user_42");
  assert.deepEqual(inv.thread_ancestors, ["root"]);
  assert.ok(inv.callback_url.startsWith(`${url}/callback/`));
  assert.ok(!inv.callback_url.includes("thread_1"), "ids are not readable in the URL path as-is");
  await assert.rejects(
    runtime.invoke({
      groupId: "thread_1",
      id: "call_1",
      operation: "echo",
      arguments: { text: "again" },
    }),
    { code: "rap_call_exists" },
  );
  assert.equal((await runtime.getCall("thread_1", "call_1"))?.status, "pending");
});

test("[RAP-runtime-discovery-errors] a toolset on a port fetch refuses outright (the WHATWG bad-port list) is reported in words, not as 'bad port'", async () => {
  const { fetchToolset, ToolsetDiscoveryError } = await import("../../src/rap/runtime/index.ts");
  await assert.rejects(fetchToolset("http://127.0.0.1:9/tools"), (error: unknown) => {
    assert.ok(error instanceof ToolsetDiscoveryError);
    assert.equal(error.code, "rap_toolset_unreachable");
    assert.match(error.message, /blocked port\); use another port/);
    return true;
  });
});
