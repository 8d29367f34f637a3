/**
 * Judging after the acknowledgement (src/rap/tool/intake.ts) runs on a later turn, outside any request's error
 * handling: whatever hostile arguments do to it there must end in an error tool_result for that call, never in an
 * uncaught exception that takes every other call down with the process.
 */

import assert from "node:assert/strict";
import { test } from "node:test";
import { MAX_JSON_DEPTH } from "../../src/rap/wire.ts";
import { callbackSink } from "../support/callback-sink.ts";
import { ECHO, invocation, post, startTool } from "./tool-fixture.ts";

const sink = await callbackSink();
const { url } = await startTool({
  operations: [
    ECHO,
    {
      // Legal JSON Schema that recurses into every nested value: ajv's validator follows the input's depth.
      name: "tree",
      description: "Accepts any tree of objects.",
      inputSchema: { type: "object", additionalProperties: { $ref: "#" } },
      handler: async () => "tree ok",
    },
    {
      // A schema that refers to itself without descending: ajv's validator recurses until the stack overflows.
      name: "loop",
      description: "Its inputSchema makes validation throw.",
      inputSchema: { type: "object", allOf: [{ $ref: "#" }] },
      handler: async () => "never",
    },
  ],
});
const invoke = `${url}/invoke`;

/** `{"a":{"a":…{}}}` nested `levels` deep, as raw JSON text (building the object would itself recurse). */
function nested(levels: number): string {
  return `${'{"a":'.repeat(levels)}{}${"}".repeat(levels)}`;
}

test("[RAP-tool-intake-hostile] arguments nested 50,000 deep get an error tool_result; the server keeps answering", async () => {
  const body = invocation(sink.url, { operation: "tree", arguments: {} });
  const raw = JSON.stringify(body).replace('"arguments":{}', `"arguments":${nested(50_000)}`);
  const answer = await post(invoke, raw);
  assert.equal(answer.status, 200);
  const result = await sink.waitFor((m) => m.id === body.id);
  assert.equal(result.type, "tool_result");
  assert.match(String(result.text), /^Error: /);
  assert.match(String(result.text), new RegExp(`nested more than ${MAX_JSON_DEPTH} levels`));
  const ok = invocation(sink.url);
  await post(invoke, ok);
  assert.equal((await sink.waitFor((m) => m.id === ok.id)).text, "echo: hi");
});

test("[RAP-tool-intake-hostile] arguments at the depth limit are still judged by the inputSchema", async () => {
  const body = invocation(sink.url, { operation: "tree", arguments: {} });
  const raw = JSON.stringify(body).replace(
    '"arguments":{}',
    `"arguments":${nested(MAX_JSON_DEPTH - 1)}`,
  );
  await post(invoke, raw);
  assert.equal((await sink.waitFor((m) => m.id === body.id)).text, "tree ok");
});

test("[RAP-tool-intake-hostile] an exception while judging ends that call with an error tool_result, not the process", async () => {
  const body = invocation(sink.url, { operation: "loop", arguments: { x: 1 } });
  assert.equal((await post(invoke, body)).status, 200);
  const result = await sink.waitFor((m) => m.id === body.id);
  assert.equal(result.type, "tool_result");
  assert.match(String(result.text), /^Error: /);
  assert.match(String(result.text), /could not check the arguments for loop/);
  assert.doesNotMatch(String(result.text), /RangeError|stack/i, "nothing internal leaks");
  const ok = invocation(sink.url);
  await post(invoke, ok);
  assert.equal((await sink.waitFor((m) => m.id === ok.id)).text, "echo: hi");
});
