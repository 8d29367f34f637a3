/**
 * Untrusted text from an MCP server (tool names, descriptions, results, error messages) made safe to put in a RAP
 * toolset, a `tool_result` or a log (RAP overview, "Security and Trust": tool descriptions are untrusted, results
 * SHOULD be sanitised before the LLM). Pure.
 */

import type { Secret } from "../../core/secret.ts";

// C0 controls except tab and newline, DEL, C1 controls, and the bidirectional overrides/isolates that can make text
// read differently from what it is (Trojan Source); and invisible characters a model still reads: the Unicode tag
// block (text hidden in it is the "ASCII smuggling" injection), zero-width space, word joiner and invisible
// operators, BOM. Zero-width (non-)joiners stay: scripts and emoji need them.
const UNSAFE =
  // biome-ignore lint/suspicious/noControlCharactersInRegex: matching control characters is the point
  /[\u0000-\u0008\u000B-\u001F\u007F-\u009F\u200B\u200E\u200F\u202A-\u202E\u2060-\u2064\u2066-\u2069\uFEFF\u{E0000}-\u{E007F}]/gu;

/** Drops control and bidi-override characters, normalises CR LF, and cuts to `max` characters (marked). */
export function cleanText(value: string, max: number): string {
  const clean = value.replace(/\r\n?/g, "\n").replace(UNSAFE, "");
  return clean.length > max ? `${clean.slice(0, max)}… (cut)` : clean;
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
