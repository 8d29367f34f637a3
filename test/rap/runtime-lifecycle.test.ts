import assert from "node:assert/strict";
import { test } from "node:test";
import { createLogger } from "../../src/core/index.ts";
import { testRuntime } from "../support/rap-runtime.ts";
import { eventually, scriptedChoiceServer, standInTool } from "../support/rap-tool-stand-in.ts";

test("[RAP-runtime-subscription] events match by tool_call_id once a result said subscription: true; final ends it", async () => {
  const tool = await standInTool();
  const { runtime, recorded } = await testRuntime({ toolsetUrls: [tool.origin] });
  await runtime.invoke({ groupId: "g", id: "sub", operation: "echo", arguments: { text: "x" } });
  await runtime.invoke({ groupId: "g", id: "plain", operation: "echo", arguments: { text: "x" } });
  const sub = tool.invocation("sub");
  const plain = tool.invocation("plain");
  const event = (id: string, text: string, extra = {}) => ({
    type: "subscription_event",
    group_id: "g",
    tool_call_id: id,
    text,
    ...extra,
  });
  // Before the subscribing result: no subscription yet.
  assert.equal((await tool.deliver(sub, event("sub", "early"))).status, 404);
  await tool.deliver(sub, {
    type: "tool_result",
    group_id: "g",
    id: "sub",
    text: "subscribed",
    subscription: true,
  });
  await tool.deliver(plain, { type: "tool_result", group_id: "g", id: "plain", text: "done" });
  assert.equal((await runtime.getCall("g", "sub"))?.subscription, "active");
  assert.equal((await tool.deliver(sub, event("sub", '{"n":1}'))).status, 200);
  assert.equal(
    (await tool.deliver(sub, event("sub", '{"n":2}', { associative: true, final: true }))).status,
    200,
  );
  assert.equal((await tool.deliver(sub, event("sub", '{"n":3}'))).status, 410, "after final");
  assert.equal(
    (await tool.deliver(plain, event("plain", "x"))).status,
    404,
    "never a subscription",
  );
  const thread = await runtime.thread("g");
  assert.deepEqual(
    thread.entries.map((e) =>
      e.kind === "subscription_event" ? [e.toolCallId, e.text, e.associative, e.final] : e.kind,
    ),
    [
      ["sub", '{"n":1}', false, false],
      ["sub", '{"n":2}', true, true],
    ],
  );
  assert.equal(recorded.events.length, 2);
  assert.equal((await runtime.getCall("g", "sub"))?.subscription, "ended");
  assert.equal(
    (await runtime.getCall("g", "sub"))?.result?.text,
    "subscribed",
    "no second result on the call",
  );
});

test("[RAP-runtime-cancel] cancelCall ends the call with an error result and posts cancel_tool_call once", async () => {
  const tool = await standInTool();
  const { runtime } = await testRuntime({ toolsetUrls: [`${tool.origin}/`] });
  await runtime.invoke({ groupId: "g", id: "c", operation: "echo", arguments: { text: "x" } });
  const cancelled = await runtime.cancelCall("g", "c");
  assert.equal(cancelled?.status, "cancelled");
  assert.match(cancelled?.result?.text ?? "", /^Error: the tool call was cancelled/);
  assert.deepEqual(tool.notices, [
    { path: "/cancel_tool_call", body: { thread_id: "g", tool_call_id: "c" } },
  ]);
  const late = await tool.deliver(tool.invocation("c"), {
    type: "tool_result",
    group_id: "g",
    id: "c",
    text: "late",
  });
  assert.equal(late.body.duplicate, true);
  assert.equal(await runtime.cancelCall("g", "unknown"), undefined);
});

test("[RAP-runtime-close-thread] closeThread cancels open calls, drops subscriptions, notifies every tool server once", async () => {
  const a = await standInTool({ name: "a" });
  const b = await standInTool({
    name: "b",
    tools: [{ name: "other", description: "", inputSchema: { type: "object" } }],
  });
  const down = "http://127.0.0.1:1";
  const { runtime } = await testRuntime({ toolsetUrls: [a.origin, b.origin, down] });
  await runtime.invoke({ groupId: "g", id: "open", operation: "echo", arguments: { text: "x" } });
  await runtime.invoke({ groupId: "g", id: "sub", operation: "other", arguments: {} });
  await b.deliver(b.invocation("sub"), {
    type: "tool_result",
    group_id: "g",
    id: "sub",
    text: "s",
    subscription: true,
  });
  await runtime.closeThread("g");
  assert.equal((await runtime.getCall("g", "open"))?.status, "cancelled");
  assert.equal((await runtime.getCall("g", "sub"))?.subscription, "ended");
  assert.equal((await runtime.getCall("g", "sub"))?.result?.text, "s");
  assert.deepEqual(a.notices, [{ path: "/close_thread", body: { thread_id: "g" } }]);
  assert.deepEqual(b.notices, [{ path: "/close_thread", body: { thread_id: "g" } }]);
  const event = await b.deliver(b.invocation("sub"), {
    type: "subscription_event",
    group_id: "g",
    tool_call_id: "sub",
    text: "{}",
  });
  assert.equal(event.status, 410);
});

test("[RAP-runtime-user-choice] user_choice goes to the hook (asked once), the answer is posted to response_url; view_update is kept", async () => {
  const tool = await standInTool();
  const answers = await scriptedChoiceServer();
  const { runtime, recorded } = await testRuntime({ toolsetUrls: [tool.origin] });
  await runtime.invoke({ groupId: "g", id: "c", operation: "echo", arguments: { text: "x" } });
  const inv = tool.invocation("c");
  const choice = {
    type: "user_choice",
    group_id: "g",
    id: "c",
    prompt: "Allow writing?",
    choices: ["Yes", "No"],
    default: 1,
    response_url: `${answers.origin}/user_choice_response`,
  };
  assert.equal((await tool.deliver(inv, choice)).status, 200);
  assert.equal((await tool.deliver(inv, choice)).body.duplicate, true);
  assert.equal(recorded.choices.length, 1);
  const hookEvent = recorded.choices[0] as { respond(n: number): Promise<boolean>; prompt: string };
  assert.equal(hookEvent.prompt, "Allow writing?");
  assert.equal(await hookEvent.respond(5), false, "out of range");
  assert.equal(await hookEvent.respond(0), true);
  assert.equal(await hookEvent.respond(1), false, "answered once");
  assert.deepEqual(answers.received, [{ id: "c", selected: 0 }]);
  assert.equal(
    (await runtime.getCall("g", "c"))?.status,
    "pending",
    "still waiting for the result",
  );
  const bad = await tool.deliver(inv, { ...choice, prompt: "other", default: 7 });
  assert.equal(bad.status, 400);
  assert.equal(
    (
      await tool.deliver(inv, {
        type: "view_update",
        group_id: "g",
        view_type: "diff",
        content: { patch: "1" },
      })
    ).status,
    200,
  );
  assert.equal(
    (
      await tool.deliver(inv, {
        type: "view_update",
        group_id: "g",
        view_type: "diff",
        content: { patch: "2" },
      })
    ).status,
    200,
  );
  assert.deepEqual((await runtime.thread("g")).views, { diff: { patch: "2" } });
  assert.equal(recorded.views.length, 2);
});

test("[RAP-callback-url-not-logged] logs name calls, never callback URLs, tokens or auth URLs", async () => {
  const lines: string[] = [];
  const tool = await standInTool();
  const { runtime, url } = await testRuntime({
    toolsetUrls: [tool.origin],
    logger: createLogger({ write: (l) => void lines.push(l), level: "debug" }),
  });
  await runtime.invoke({ groupId: "g", id: "c", operation: "echo", arguments: { text: "x" } });
  const inv = tool.invocation("c");
  const token = inv.callback_url.slice(`${url}/callback/`.length);
  await tool.deliver(inv, {
    type: "oauth",
    group_id: "g",
    id: "c",
    auth_url: "https://idp.example/authorize?state=s3cr3t",
  });
  await tool.deliver(`${url}/callback/${token.slice(0, -2)}xx`, {
    type: "tool_result",
    group_id: "g",
    id: "c",
    text: "x",
  });
  await tool.deliver(inv, { type: "tool_result", group_id: "g", id: "c", text: "x" });
  await eventually(() => lines.some((l) => l.includes("rap.callback.tool_result")), "log line");
  const all = lines.join("");
  assert.ok(all.includes('"id":"c"'));
  for (const needle of [
    token,
    token.split(".")[0] as string,
    "/callback/",
    "s3cr3t",
    "idp.example",
  ]) {
    assert.equal(all.includes(needle), false, needle);
  }
});
