/**
 * An MCP `tools/call` result → the RAP `tool_result` text (pure). Text blocks are joined; other blocks are named, not
 * inlined (an image's base64 means nothing to the LLM in a RAP thread); `structuredContent` is used when there is no
 * content. Everything is sanitised and bounded. `isError: true` becomes a typed error result.
 */

import type { Secret } from "../../core/secret.ts";
import { McpCallError } from "./errors.ts";
import { carriesToken, cleanLine, cleanText } from "./text.ts";

export const DEFAULT_MAX_RESULT_CHARS = 200_000;

/**
 * The text for a successful result; throws `McpCallError` for `isError` or a result that is not a CallToolResult.
 * `token` (the call's access token): an error text holding it is withheld, checked before the text is cut.
 */
export function resultText(
  tool: string,
  result: unknown,
  maxChars = DEFAULT_MAX_RESULT_CHARS,
  token?: Secret,
): string {
  if (result === null || typeof result !== "object" || Array.isArray(result)) {
    throw malformed(tool);
  }
  const { content, structuredContent, isError } = result as Record<string, unknown>;
  if (content !== undefined && !Array.isArray(content)) throw malformed(tool);
  const parts = (content ?? []).map(blockText);
  if (parts.length === 0 && structuredContent !== undefined) {
    parts.push(JSON.stringify(structuredContent) ?? "");
  }
  const joined = parts.join("\n");
  if (joined.length > maxChars) {
    throw new McpCallError(
      "mcp_result_too_large",
      `${tool}: the MCP server's result is larger than this tool passes on (${maxChars} characters). Ask for less (a narrower query, fewer items).`,
    );
  }
  const text = cleanText(joined, maxChars);
  if (isError === true) {
    // Checked whole, before the cut below: a token straddling it would leave its first part in the message, which
    // the tool kit's check (whole secrets only) would let through.
    if (carriesToken(joined, token)) {
      throw new McpCallError(
        "mcp_tool_error",
        `${tool} reported an error; its text was withheld because it contained a credential. Report this to the tool's operator.`,
      );
    }
    throw new McpCallError(
      "mcp_tool_error",
      `${tool} reported an error: ${cleanLine(text, 2_000) || "(no details given)"}`,
    );
  }
  return text;
}

function blockText(block: unknown): string {
  if (block === null || typeof block !== "object") return "";
  const b = block as Record<string, unknown>;
  switch (b.type) {
    case "text":
      return typeof b.text === "string" ? b.text : "";
    case "image":
    case "audio":
      return `[${b.type}${typeof b.mimeType === "string" ? ` ${cleanLine(b.mimeType, 100)}` : ""} omitted]`;
    case "resource_link":
      return `[resource ${typeof b.uri === "string" ? cleanLine(b.uri, 2_000) : ""}]`;
    case "resource": {
      const resource = b.resource as Record<string, unknown> | undefined;
      if (typeof resource?.text === "string") return resource.text;
      return `[resource ${typeof resource?.uri === "string" ? cleanLine(resource.uri, 2_000) : ""} omitted]`;
    }
    default:
      return "";
  }
}

function malformed(tool: string): McpCallError {
  return new McpCallError(
    "mcp_answer_malformed",
    `${tool}: the MCP server answered with something that is not a tool result. Try again later; if it keeps happening, tell the tool's operator.`,
  );
}
