import assert from "node:assert/strict";
import { test } from "node:test";
import { DemoPanelInputError, parseInvokeInput } from "../../src/demo/panels/rap.ts";

test("[DEMO-rap-panel-input] invoke takes a known user and operation; echo gets a text", () => {
  assert.deepEqual(parseInvokeInput({ user: "alice", operation: "whoami" }), {
    user: "alice",
    operation: "whoami",
    arguments: {},
  });
  assert.deepEqual(parseInvokeInput({ user: "bob", operation: "echo", text: "hi" }), {
    user: "bob",
    operation: "echo",
    arguments: { text: "hi" },
  });
  assert.deepEqual(parseInvokeInput({ user: "carol", operation: "echo" }).arguments, {
    text: "hello from carol",
  });
});

test("[DEMO-rap-panel-hostile] hostile input to the invoke action is a typed error naming no secret", () => {
  const cases: [unknown, string][] = [
    [null, "demo_invalid_input"],
    [[], "demo_invalid_input"],
    ["alice", "demo_invalid_input"],
    [42, "demo_invalid_input"],
    [{}, "demo_unknown_user"],
    [{ user: "mallory", operation: "whoami" }, "demo_unknown_user"],
    [{ user: "__proto__", operation: "whoami" }, "demo_unknown_user"],
    [{ user: ["alice"], operation: "whoami" }, "demo_unknown_user"],
    [{ user: "alice\u202e", operation: "whoami" }, "demo_unknown_user"],
    [{ user: "alice", operation: "rm -rf" }, "demo_unknown_operation"],
    [{ user: "alice", operation: "constructor" }, "demo_unknown_operation"],
    [{ user: "alice", operation: "echo", text: 5 }, "demo_invalid_text"],
    [{ user: "alice", operation: "echo", text: "x".repeat(501) }, "demo_invalid_text"],
  ];
  for (const [input, code] of cases) {
    assert.throws(
      () => parseInvokeInput(input),
      (error: unknown) =>
        error instanceof DemoPanelInputError &&
        error.code === code &&
        !error.message.includes("mallory") &&
        !error.message.includes("rm -rf"),
      JSON.stringify(input),
    );
  }
});
