/**
 * Untrusted text from an MCP server (tool names, descriptions, results, error messages) made safe to put in a RAP
 * toolset, a `tool_result` or a log (RAP overview, "Security and Trust": tool descriptions are untrusted, results
 * SHOULD be sanitised before the LLM). Pure.
 */

import { clip, dropControls, stripInvisible } from "../../core/display.ts";
import type { Secret } from "../../core/secret.ts";

/**
 * Drops control characters (tab and newline kept, every line break made a newline), bidi overrides and invisible
 * characters a model still reads (Unicode tag block, zero-width space, word joiner, BOM…: the one list is in
 * src/core/display.ts), and cuts to `max` characters (marked). Dropped, not turned into spaces like `peerText`
 * does: `carriesToken` relies on seeing a token split by such a character joined again.
 */
export function cleanText(value: string, max: number): string {
  const clean = stripInvisible(dropControls(value));
  return clip(clean, max, "… (cut)");
}

/** One line for a message: whitespace runs become one space. */
export function cleanLine(value: string, max: number): string {
  return cleanText(value, max).replace(/\s+/g, " ").trim();
}

/**
 * Whether untrusted text holds the token, as sent or once cleaned (a control character inside it is dropped by the
 * cleaning, which would join it again). Checked before any cut: a cut can leave a token's first part. Pure.
 */
export function carriesToken(value: string, token: Secret | undefined): boolean {
  const whole = token?.reveal();
  if (!whole) return false;
  return value.includes(whole) || cleanText(value, Number.POSITIVE_INFINITY).includes(whole);
}
