import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { test } from "node:test";
import { promisify } from "node:util";
import { secret } from "../../src/core/secret.ts";
import { bridgedTools } from "../../src/rap/mcp-bridge/catalog.ts";
import { McpCallError } from "../../src/rap/mcp-bridge/errors.ts";
import { resultText } from "../../src/rap/mcp-bridge/result.ts";
import { carriesToken, cleanLine, cleanText } from "../../src/rap/mcp-bridge/text.ts";

function failure(fn: () => unknown): McpCallError {
  try {
    fn();
  } catch (error) {
    assert.ok(error instanceof McpCallError, String(error));
    return error;
  }
  assert.fail("no error");
}

test("[RAP-mcp-bridge-sanitise] control characters and bidi overrides are dropped, CR LF normalised, length bounded", () => {
  assert.equal(cleanText("a\u0000b\u0007c\u001b[1m\u007f\u0085\u202Ed\u2066e", 100), "abc[1mde");
  assert.equal(cleanText("line1\r\nline2\rline3\tx", 100), "line1\nline2\nline3\tx");
  assert.equal(cleanText("abcdef", 3), "abc… (cut)");
});

test("[RAP-mcp-bridge-sanitise-invisible] invisible text an LLM still reads (Unicode tag characters, zero-width spaces, word joiners, BOM) is dropped from descriptions and results", () => {
  // "ignore" spelled in tag characters (U+E0069 ...): invisible in any UI, read by the model (ASCII smuggling).
  const smuggled = [..."ignore"]
    .map((c) => String.fromCodePoint(0xe0000 + c.charCodeAt(0)))
    .join("");
  assert.equal(cleanText(`a${smuggled}b\u200Bc\u2060d\uFEFFe\u{E007F}`, 100), "abcde");
  const { tools } = bridgedTools([
    { name: "t", description: `Lists files.${smuggled}`, inputSchema: { type: "object" } },
  ]);
  assert.equal(tools[0]?.description, "Lists files.");
  assert.equal(resultText("t", { content: [{ type: "text", text: `ok${smuggled}` }] }), "ok");
});

test("[CORE-peer-text-invisible] the bridge's cleanText uses the one list in core/display: ALM, soft hyphen, line separators, selector runs; joiners kept", () => {
  assert.equal(cleanText("a\u061cb\u00adc\u180ed\u206ae\ufff9f", 100), "abcdef");
  assert.equal(cleanText("one\u2028two\u2029three\ttab", 100), "one\ntwo\nthree\ttab");
  assert.equal(cleanLine("one\u2028two", 100), "one two");
  assert.equal(cleanText("😀\ufe0f\ufe0e\u{e0150}\u{e0151}!", 100), "😀\ufe0f!");
  const family = "👩\u200d👩\u200d👧 \u0645\u06cc\u200c\u062e\u0648\u0627\u0647\u0645";
  assert.equal(cleanText(family, 100), family);
});

test("[RAP-mcp-bridge-sanitise-invisible] a token split by invisible characters is still recognised: the cleaning drops them and would join it", () => {
  const token = secret("tok_abcdef123456");
  for (const split of ["\u{e0041}", "\u200b", "\ufeff", "\u2060", "\u00ad", "\u0007", "\u202e"]) {
    const value = `leaked: tok_abc${split}def123456`;
    assert.equal(carriesToken(value, token), true, JSON.stringify(split));
  }
  assert.equal(carriesToken("tok_abc\ndef123456", token), false);
});

test("[RAP-mcp-bridge-result] MCP tool results → tool_result text: text joined, other blocks named, structured content, isError typed", () => {
  assert.equal(
    resultText("t", {
      content: [
        { type: "text", text: "one" },
        { type: "image", data: "QUJD", mimeType: "image/png" },
        { type: "resource_link", uri: "file:///x", name: "x" },
        { type: "resource", resource: { uri: "file:///y", text: "inline" } },
        { type: "text", text: "two\u0007" },
      ],
    }),
    "one\n[image image/png omitted]\n[resource file:///x]\ninline\ntwo",
  );
  assert.equal(resultText("t", { content: [], structuredContent: { n: 1 } }), '{"n":1}');
  const error = failure(() =>
    resultText("t", { isError: true, content: [{ type: "text", text: "no\u001b[31m way" }] }),
  );
  assert.equal(error.reason, "mcp_tool_error");
  assert.equal(error.code, "operation_failed", "an OperationError: its message is the result");
  assert.equal(error.message, "t reported an error: no[31m way");
  for (const bad of [null, "text", [1], { content: "x" }]) {
    assert.equal(failure(() => resultText("t", bad)).reason, "mcp_answer_malformed");
  }
  assert.equal(
    failure(() => resultText("t", { content: [{ type: "text", text: "x".repeat(11) }] }, 10))
      .reason,
    "mcp_result_too_large",
  );
});

test("[RAP-mcp-bridge-catalog] MCP tools → operations: hints become RAP annotations, $schema/$id dropped, deep or non-object schemas replaced", () => {
  let deep: Record<string, unknown> = { type: "object" };
  for (let i = 0; i < 150; i++) deep = { type: "object", properties: { a: deep } };
  const { tools, notes } = bridgedTools([
    {
      name: "read.files",
      title: "Read files",
      inputSchema: {
        $schema: "https://json-schema.org/draft/2020-12/schema",
        $id: "urn:x",
        type: "object",
      },
      annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: "yes" },
    },
    { name: "deep", inputSchema: deep },
    { name: "array", inputSchema: { type: "array" } },
    { name: "none" },
  ]);
  assert.deepEqual(tools[0], {
    name: "read.files",
    description: "Read files",
    inputSchema: { type: "object" },
    annotations: { readOnly: true, destructive: false },
  });
  assert.deepEqual(
    tools.slice(1).map((t) => [t.name, t.inputSchema, t.description]),
    [
      ["deep", { type: "object" }, "The MCP tool deep."],
      ["array", { type: "object" }, "The MCP tool array."],
      ["none", { type: "object" }, "The MCP tool none."],
    ],
  );
  assert.deepEqual(
    notes.map((n) => `${n.tool}:${n.problem}`),
    ["deep:input_schema_replaced", "array:input_schema_replaced", "none:input_schema_replaced"],
  );
  const long = bridgedTools([{ name: "long", description: "d".repeat(10_000) }]).tools[0];
  assert.ok((long?.description.length ?? 0) < 4_100);
});

test("[RAP-mcp-bridge-catalog-redos] the MCP server's regular expressions (pattern, patternProperties) are dropped from input schemas, so the tool never runs them on the model's arguments; the rest is kept and the drop reported", () => {
  const evil = "^(a+)+$";
  const { tools, notes } = bridgedTools([
    {
      name: "search",
      inputSchema: {
        type: "object",
        properties: {
          q: { type: "string", pattern: evil, description: "query" },
          // A property named "pattern" is not the keyword: it stays.
          pattern: { type: "string" },
          tags: { type: "array", items: { type: "string", pattern: evil } },
          meta: {
            type: "object",
            patternProperties: { [evil]: { type: "string" } },
            additionalProperties: false,
          },
        },
        anyOf: [
          { properties: { q: { pattern: evil } } },
          { properties: { pattern: { minLength: 1 } } },
        ],
        $defs: { d: { type: "string", pattern: evil } },
        required: ["q"],
      },
    },
  ]);
  const schema = tools[0]?.inputSchema;
  assert.ok(schema);
  assert.ok(!JSON.stringify(schema).includes(evil), JSON.stringify(schema));
  assert.deepEqual(schema.required, ["q"]);
  const properties = schema.properties as Record<string, Record<string, unknown>>;
  assert.deepEqual(properties.q, { type: "string", description: "query" });
  assert.deepEqual(properties.pattern, { type: "string" });
  assert.deepEqual(properties.meta, { type: "object" }, "additionalProperties: false went too");
  assert.deepEqual(
    notes.map((n) => n.problem),
    ["input_schema_patterns_dropped"],
  );
});

test("[RAP-mcp-bridge-sdk-missing] without @modelcontextprotocol/client installed, agentauth/rap still loads and the bridge fails with a typed mcp_sdk_missing that says what to install", async () => {
  // A real process whose module resolution cannot find the MCP SDK packages, as after a plain `npm install agentauth`.
  const hooks = `import { registerHooks } from "node:module";
registerHooks({ resolve(specifier, context, next) {
  if (specifier.startsWith("@modelcontextprotocol/")) {
    const error = new Error("Cannot find package '" + specifier + "'");
    error.code = "ERR_MODULE_NOT_FOUND";
    throw error;
  }
  return next(specifier, context);
} });`;
  const script = `const rap = await import("./src/rap/index.ts");
try {
  await rap.mcpBridgeToolset({ serverUrl: "http://127.0.0.1:9/mcp", publicBaseUrl: "http://127.0.0.1:1" });
  console.log(JSON.stringify({ built: true }));
} catch (error) {
  console.log(JSON.stringify({ loaded: typeof rap.createToolServer, code: error.code, message: error.message }));
}`;
  const { stdout } = await promisify(execFile)(
    process.execPath,
    [
      "--import",
      `data:text/javascript,${encodeURIComponent(hooks)}`,
      "--input-type=module",
      "-e",
      script,
    ],
    { cwd: new URL("../../", import.meta.url).pathname, timeout: 30_000 },
  );
  const out = JSON.parse(stdout.trim().split("\n").at(-1) ?? "{}");
  assert.equal(out.loaded, "function", "agentauth/rap loads without the SDK");
  assert.equal(out.code, "mcp_sdk_missing");
  assert.match(out.message, /npm install @modelcontextprotocol\/client/);
});

test("[RAP-mcp-bridge-sanitise] a cut never splits a surrogate pair, and a lone surrogate becomes U+FFFD: a tool result stays valid UTF-8 for the runtime", () => {
  const wellFormed = (s: string) => !/[\ud800-\udfff]/u.test(s);
  for (const max of [1, 2, 3, 4, 5]) {
    const out = cleanText("😀".repeat(10), max);
    assert.ok(wellFormed(out), `max ${max}: ${JSON.stringify(out)}`);
    assert.ok(out.endsWith("… (cut)"));
  }
  assert.equal(cleanText("😀😀😀", 3), "😀… (cut)");
  assert.equal(cleanText("a\ud800b\udc00c", 100), "a\ufffdb\ufffdc");
  assert.equal(cleanLine("😀 😀", 3), "😀 … (cut)");
});
