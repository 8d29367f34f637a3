/**
 * Text a peer sent (an agent, a host, a tool, an authorization server, an MCP server), made safe to print on a
 * terminal, put in a log line a person reads or hand to a model: no control characters (every terminal escape
 * sequence starts with one), no Unicode bidirectional overrides (they reorder what a person sees, "Trojan Source"),
 * no invisible characters (what a person cannot see but a model still reads, or what splits a word so a filter
 * misses it), bounded in length.
 *
 * This file is the one declaration of those classes: `peerText` uses them for terminals and logs, and the RAP MCP
 * bridge's `cleanText` (src/rap/mcp-bridge/text.ts) uses `stripInvisible` and `dropControls` for the text it gives
 * a model, so the two cannot drift apart again.
 */

/** C0 and C1 control characters, newlines and tabs included. */
// biome-ignore lint/suspicious/noControlCharactersInRegex: matching them is the point.
const CONTROL = /[\u0000-\u001f\u007f-\u009f]+/g;
/** The same without the newline, for text that may keep several lines. */
// biome-ignore lint/suspicious/noControlCharactersInRegex: matching them is the point.
const CONTROL_BUT_NEWLINE = /[\u0000-\u0009\u000b-\u001f\u007f-\u009f]+/g;
/** The same without tab and newline, for text whose layout is kept (tool results, descriptions). */
// biome-ignore lint/suspicious/noControlCharactersInRegex: matching them is the point.
const CONTROL_BUT_TAB_NEWLINE = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/g;

/**
 * Characters that are in the text but not seen, removed outright (a space in their place would show where the
 * text was split, and none was meant):
 * - bidirectional marks, embeddings, overrides and isolates: ALM U+061C, LRM/RLM U+200E/F, U+202A–U+202E,
 *   U+2066–U+2069 (Trojan Source);
 * - the Unicode tag block U+E0000–U+E007F: a copy of ASCII nothing renders, which a model reads ("ASCII
 *   smuggling"); its one legitimate use, emoji subdivision flags, degrades to the plain black flag;
 * - zero-width space U+200B, word joiner and invisible operators U+2060–U+2064 (U+2065 is unassigned), the
 *   deprecated format controls U+206A–U+206F, the BOM / zero-width no-break space U+FEFF: they split words so a
 *   filter or a reader misses them, and carry hidden bits;
 * - soft hyphen U+00AD: shown only where a line breaks, so on a terminal it is an invisible word splitter;
 * - Mongolian vowel separator U+180E: a format character since Unicode 6.3, invisible and a known filter evader;
 *   Mongolian text loses a glyph variant, no letter;
 * - interlinear annotation marks U+FFF9–U+FFFB: they hide the annotation in some renderers;
 * - the rest of Unicode's default-ignorable code points, which a renderer shows as nothing even unassigned: the
 *   Hangul fillers U+3164/U+FFA0 (a blank nobody types, the "invisible identifier"), the discouraged Khmer
 *   inherent vowels U+17B4/U+17B5, shorthand and musical format controls U+1BCA0–U+1BCA3, U+1D173–U+1D17A, and
 *   the unassigned U+FFF0–U+FFF8, U+E0080–U+E00FF, U+E01F0–U+E0FFF (a tag-block-like channel once assigned).
 * Kept on purpose: zero-width non-joiner and joiner U+200C/U+200D (Persian, Indic scripts and emoji sequences need
 * them; up to three in a row, see JOINER_RUN), a single variation selector after a character (emoji presentation
 * U+FE0F; ideographic variants), see VARIATION_RUN and SELECTOR_AFTER_JOINER, the
 * Mongolian free variation selectors U+180B–U+180D, U+180F, the combining grapheme joiner U+034F (it orders marks
 * in Hebrew and others) and the Hangul choseong/jungseong fillers U+115F/U+1160 (archaic syllables are built of
 * them). test/core/display.test.ts checks every other default-ignorable code point goes.
 */
const UNSEEN =
  /[\u00ad\u061c\u17b4\u17b5\u180e\u200b\u200e\u200f\u202a-\u202e\u2060-\u206f\u3164\ufeff\uffa0\ufff0-\ufffb\u{1bca0}-\u{1bca3}\u{1d173}-\u{1d17a}\u{e0000}-\u{e00ff}\u{e01f0}-\u{e0fff}]/gu;
/**
 * Two or more variation selectors in a row (U+FE00–U+FE0F, U+E0100–U+E01EF). A visible character takes at most
 * one; a run of them after one character is a payload nothing renders ("emoji smuggling", a byte per selector).
 * The run keeps its first selector, so the character still looks as its sender meant.
 */
const VARIATION_RUN = /([\ufe00-\ufe0f\u{e0100}-\u{e01ef}])[\ufe00-\ufe0f\u{e0100}-\u{e01ef}]+/gu;
/**
 * Variation selectors right after a joiner: a selector varies the character before it, and a joiner is none, so
 * nothing renders them. Without this, selectors interleaved with the (kept) joiners carry the same payload as a
 * run: x, VS, ZWJ, VS, ZWJ, VS…
 */
const SELECTOR_AFTER_JOINER = /(?<=[\u200c\u200d])[\ufe00-\ufe0f\u{e0100}-\u{e01ef}]+/gu;
/**
 * Four or more joiners (ZWNJ, ZWJ) in a row: the "zero-width binary" payload (ZWNJ a 0, ZWJ a 1). Real text needs
 * at most three (ZWJ ZWNJ ZWJ: cursive joining without a ligature); the run keeps its first three.
 */
const JOINER_RUN = /([\u200c\u200d]{3})[\u200c\u200d]+/g;
/**
 * Line and paragraph separators U+2028/U+2029: some terminals and most JSON-to-JS paths take them for newlines,
 * so they end a line like one (a space on one line, a newline where lines are kept), never pass through as is.
 */
const LINE_SEPARATOR = /[\u2028\u2029]/g;
/**
 * A surrogate half without its other half (a peer's JSON can carry one as an escape, "\ud800"). With the `u` flag
 * a pair is one code point, so only lone halves match. Written as U+FFFD, which any UTF-8 encoder writes anyway;
 * left as is, JSON.stringify writes it as an escape a strict consumer refuses, or fails to encode.
 */
const LONE_SURROGATE = /[\ud800-\udfff]/gu;

/**
 * Removes the characters nobody sees (bidi controls, tag characters, zero-width spaces, word joiners, BOM, soft
 * hyphens, see UNSEEN), the variation selectors nothing renders (a run's extras, any after a joiner), a joiner run's
 * extras beyond three, and writes a lone surrogate half as U+FFFD.
 * Control characters, tabs and newlines are left to the caller, which decides whether they become spaces or go.
 * Pure.
 */
export function stripInvisible(text: string): string {
  return text
    .replace(UNSEEN, "")
    .replace(SELECTOR_AFTER_JOINER, "")
    .replace(VARIATION_RUN, "$1")
    .replace(JOINER_RUN, "$1")
    .replace(LONE_SURROGATE, "\ufffd");
}

/**
 * The text cut to at most `max` UTF-16 code units, then `mark`, or the text itself when it fits. The cut is on a
 * code point boundary: half a surrogate pair left at the end would be an invalid character (U+FFFD in UTF-8, an
 * escape a strict JSON consumer refuses). Pure.
 */
export function clip(text: string, max: number, mark: string): string {
  if (text.length <= max) return text;
  const end = max > 0 && isHighSurrogate(text.charCodeAt(max - 1)) ? max - 1 : max;
  return `${text.slice(0, Math.max(0, end))}${mark}`;
}

function isHighSurrogate(unit: number): boolean {
  return unit >= 0xd800 && unit <= 0xdbff;
}

/**
 * Drops C0 and C1 control characters except tab and newline, after turning CR LF, CR and the Unicode line and
 * paragraph separators into newlines. Dropped, not replaced: for text kept with its layout. Pure.
 */
export function dropControls(text: string): string {
  return text
    .replace(/\r\n?/g, "\n")
    .replace(LINE_SEPARATOR, "\n")
    .replace(CONTROL_BUT_TAB_NEWLINE, "");
}

/** What JSON.stringify leaves raw that a terminal or a reader must not get raw: DEL, C1, line separators, UNSEEN. */
const JSON_UNSAFE = new RegExp(`[\\u007f-\\u009f\\u2028\\u2029]|${UNSEEN.source}`, "gu");

/** A joiner or a variation selector (U+E0100–U+E01EF all start with the high surrogate U+DB40). */
const JOINER_OR_SELECTOR = /\u200c|\u200d|[\ufe00-\ufe0f\udb40]/;
/** Anything but printable ASCII: a line without it has nothing to escape. */
const NOT_PRINTABLE_ASCII = /[^\u0020-\u007e]/;

/** `\uXXXX` escapes for a character (a surrogate pair for one beyond the BMP), valid in a JSON string. */
function jsonEscape(text: string): string {
  let out = "";
  for (let i = 0; i < text.length; i++)
    out += `\\u${text.charCodeAt(i).toString(16).padStart(4, "0")}`;
  return out;
}

/**
 * JSON text (from JSON.stringify, which escapes C0 controls) made safe on a terminal with the same data: DEL, C1,
 * line separators, bidi and invisible characters, and the selectors and joiners stripInvisible drops, become `\u`
 * escapes. Parsing gives back exactly what was serialised. They can only occur inside JSON strings, so this holds
 * for any JSON text, a log line too. Pure.
 */
export function escapeUnseenInJson(json: string): string {
  // Most lines are printable ASCII: one cheap scan instead of the Unicode-aware replaces (every log line comes here).
  if (!NOT_PRINTABLE_ASCII.test(json)) return json;
  const escaped = json.replace(JSON_UNSAFE, jsonEscape);
  if (!JOINER_OR_SELECTOR.test(escaped)) return escaped;
  return escaped
    .replace(SELECTOR_AFTER_JOINER, jsonEscape)
    .replace(VARIATION_RUN, (run, first: string) => first + jsonEscape(run.slice(first.length)))
    .replace(JOINER_RUN, (run, first: string) => first + jsonEscape(run.slice(first.length)));
}

/**
 * JSON for a terminal or a pipe, the one way agentauth prints it (the CLI's `--json` output, ready lines and `--json`
 * errors, the demo's ready line). JSON.stringify escapes C0 controls but leaves DEL, C1 controls (the one-byte CSI),
 * bidi overrides and invisible characters raw, so peer text in a field (an account a provider named with U+202E)
 * reached the terminal as is, where text mode (peerText) and the logs (escapeUnseenInJson) already escaped it (issue
 * 20 §1.7). Here they become `\u` escapes: what a program parses is exactly what was stored. Pure.
 */
export function jsonText(value: unknown): string {
  return escapeUnseenInJson(JSON.stringify(value));
}

/** `jsonText` and a newline: one JSON line. */
export function jsonLine(value: unknown): string {
  return `${jsonText(value)}\n`;
}

export interface PeerTextOptions {
  /** Longest text kept, in UTF-16 code units; longer text is cut and ends with "…". Default 200. */
  max?: number;
  /** Keep newlines (a message of several lines). Default false: one line, control runs become one space. */
  multiline?: boolean;
}

/** A peer's text for a terminal: control, bidi and invisible characters removed, trimmed, clipped. */
export function peerText(text: unknown, options: PeerTextOptions = {}): string {
  const max = options.max ?? 200;
  const raw = stripInvisible(typeof text === "string" ? text : String(text ?? ""));
  // A line separator ends a line like a newline does: kept as one in multi-line text, else part of a control run.
  const lines = raw.replace(LINE_SEPARATOR, "\n");
  const clean = (
    options.multiline ? lines.replace(CONTROL_BUT_NEWLINE, " ") : lines.replace(CONTROL, " ")
  ).trim();
  return clip(clean, max, "…");
}

/**
 * A peer's URL for a terminal: the WHATWG-parsed href (which percent-encodes control characters and spaces), or
 * `undefined` when it does not parse, so a caller can say "the server sent an unusable URL" instead of printing it.
 */
export function peerUrl(url: unknown, max = 2048): string | undefined {
  if (typeof url !== "string" && !(url instanceof URL)) return undefined;
  let href: string;
  try {
    href = new URL(url).href;
  } catch {
    return undefined;
  }
  // The parser already escaped C0 controls and spaces; C1, bidi and invisible characters are percent-encoded as
  // UTF-8 too, except in the host (IDNA refuses or drops them). Strip anything left for certainty.
  return peerText(href, { max });
}
