/**
 * MCP tools → RAP operation specifications (pure). Each MCP tool (`tools/list`: name, description, inputSchema,
 * annotations) becomes one operation; a tool whose name RAP cannot carry is left out and reported, a description is
 * sanitised and bounded, an input schema the tool kit's strict JSON Schema 2020-12 compiler refuses is replaced by
 * `{type: "object"}` (the MCP server validates the arguments itself) and reported.
 */

import { schemaCompiler } from "../tool/toolset.ts";
import { MAX_JSON_DEPTH, nestedDeeperThan } from "../wire.ts";
import { cleanLine, cleanText } from "./text.ts";

/** What the bridge reads of an MCP tool (the SDK's `Tool`, or the same shape given by the operator). */
export interface McpToolDescription {
  name: string;
  title?: string;
  description?: string;
  inputSchema?: Record<string, unknown>;
  annotations?: {
    readOnlyHint?: boolean;
    destructiveHint?: boolean;
    idempotentHint?: boolean;
  };
}

export interface BridgedTool {
  /** The RAP operation name: the MCP tool's own name (it is already in RAP's recommended alphabet). */
  name: string;
  description: string;
  inputSchema: Record<string, unknown>;
  annotations: { readOnly?: boolean; destructive?: boolean; idempotent?: boolean };
}

export interface CatalogNote {
  /** The tool's name, sanitised for a log line. */
  tool: string;
  problem:
    | "name_unusable"
    | "name_duplicate"
    | "input_schema_replaced"
    | "input_schema_patterns_dropped"
    | "not_an_object";
}

export const MAX_DESCRIPTION_CHARS = 4_000;
// MCP (2025-11-25 "Tool names") allows these characters, 1 to 128 of them; RAP accepts any 1 to 128 characters but
// recommends fewer, and a runtime shows the name to the LLM: anything outside this set is left out, not rewritten
// (a rewritten name could collide with another tool's).
const TOOL_NAME = /^[A-Za-z0-9_.-]{1,128}$/;

/** The operations for a tool list, and what was left out or changed (for the operator's log). */
export function bridgedTools(tools: readonly unknown[]): {
  tools: BridgedTool[];
  notes: CatalogNote[];
} {
  const out: BridgedTool[] = [];
  const notes: CatalogNote[] = [];
  const seen = new Set<string>();
  const ajv = schemaCompiler();
  for (const raw of tools) {
    if (raw === null || typeof raw !== "object" || Array.isArray(raw)) {
      notes.push({ tool: "(not an object)", problem: "not_an_object" });
      continue;
    }
    const tool = raw as Partial<McpToolDescription>;
    const name = typeof tool.name === "string" ? tool.name : "";
    if (!TOOL_NAME.test(name)) {
      notes.push({ tool: cleanLine(name, 64) || "(empty)", problem: "name_unusable" });
      continue;
    }
    if (seen.has(name)) {
      notes.push({ tool: name, problem: "name_duplicate" });
      continue;
    }
    seen.add(name);
    const { schema, replaced, patternsDropped } = inputSchemaOf(tool.inputSchema, ajv);
    if (replaced) notes.push({ tool: name, problem: "input_schema_replaced" });
    if (patternsDropped) notes.push({ tool: name, problem: "input_schema_patterns_dropped" });
    out.push({
      name,
      description: descriptionOf(tool),
      inputSchema: schema,
      annotations: annotationsOf(tool.annotations),
    });
  }
  return { tools: out, notes };
}

function descriptionOf(tool: Partial<McpToolDescription>): string {
  const text = typeof tool.description === "string" ? tool.description : "";
  const title = typeof tool.title === "string" ? tool.title : "";
  const clean = cleanText(text.trim() || title.trim(), MAX_DESCRIPTION_CHARS).trim();
  return clean || `The MCP tool ${tool.name}.`;
}

/**
 * The schema as the tool kit will compile it: `$schema` dropped (MCP schemas often name draft-07, which the 2020-12
 * compiler refuses by URI; the keywords MCP tools use mean the same in both), the server's regular expressions
 * dropped (see `withoutPatterns`), then a trial compile.
 */
function inputSchemaOf(
  schema: unknown,
  ajv: ReturnType<typeof schemaCompiler>,
): { schema: Record<string, unknown>; replaced: boolean; patternsDropped: boolean } {
  const fallback = { schema: { type: "object" }, replaced: true, patternsDropped: false };
  if (schema === null || typeof schema !== "object" || Array.isArray(schema)) return fallback;
  if (nestedDeeperThan(schema, MAX_JSON_DEPTH)) return fallback;
  const { $schema: _dialect, $id: _id, ...given } = schema as Record<string, unknown>;
  if (given.type !== "object") return fallback;
  const seen = { dropped: false };
  const rest = withoutPatterns(given, seen) as Record<string, unknown>;
  try {
    ajv.compile(rest);
    // The tool kit compiles it again in its own instance, where an `$id` could clash: it was dropped above.
    return { schema: rest, replaced: false, patternsDropped: seen.dropped };
  } catch {
    return fallback;
  }
}

// Where JSON Schema 2020-12 keeps subschemas: maps of them, arrays of them, or one.
const SUBSCHEMA_MAPS = new Set(["properties", "$defs", "definitions", "dependentSchemas"]);
const SUBSCHEMA_LISTS = new Set(["allOf", "anyOf", "oneOf", "prefixItems", "items"]);
const SUBSCHEMAS = new Set([
  "not",
  "if",
  "then",
  "else",
  "contains",
  "items",
  "additionalProperties",
  "unevaluatedProperties",
  "propertyNames",
  "unevaluatedItems",
]);

/**
 * The schema without `pattern` and `patternProperties`: the tool kit would run the MCP server's regular expressions
 * on the runtime's (the model's) arguments in its own process, and one like `^(a+)+$` with a crafted argument blocks
 * it for minutes (ReDoS), for every user. The MCP server validates its arguments itself. Where `patternProperties`
 * went, `additionalProperties`/`unevaluatedProperties` go too (they would now refuse what the patterns allowed).
 * Depth is bounded by the caller.
 */
function withoutPatterns(node: unknown, seen: { dropped: boolean }): unknown {
  if (node === null || typeof node !== "object" || Array.isArray(node)) return node;
  const out: Record<string, unknown> = {};
  let hadPatternProperties = false;
  for (const [key, value] of Object.entries(node)) {
    if (key === "pattern" || key === "patternProperties") {
      seen.dropped = true;
      hadPatternProperties ||= key === "patternProperties";
      continue;
    }
    if (SUBSCHEMA_MAPS.has(key) && value !== null && typeof value === "object") {
      out[key] = Object.fromEntries(
        Object.entries(value).map(([name, sub]) => [name, withoutPatterns(sub, seen)]),
      );
    } else if (SUBSCHEMA_LISTS.has(key) && Array.isArray(value)) {
      out[key] = value.map((sub) => withoutPatterns(sub, seen));
    } else if (SUBSCHEMAS.has(key)) {
      out[key] = withoutPatterns(value, seen);
    } else {
      out[key] = value;
    }
  }
  if (hadPatternProperties) {
    delete out.additionalProperties;
    delete out.unevaluatedProperties;
  }
  return out;
}

function annotationsOf(
  hints: McpToolDescription["annotations"] | unknown,
): BridgedTool["annotations"] {
  if (hints === null || typeof hints !== "object") return {};
  const h = hints as Record<string, unknown>;
  const out: BridgedTool["annotations"] = {};
  if (typeof h.readOnlyHint === "boolean") out.readOnly = h.readOnlyHint;
  if (typeof h.destructiveHint === "boolean") out.destructive = h.destructiveHint;
  if (typeof h.idempotentHint === "boolean") out.idempotent = h.idempotentHint;
  return out;
}
