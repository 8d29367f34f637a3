/**
 * Text a peer sent (an agent, a host, a tool, an authorization server), made safe to print on a terminal or put in
 * a log line a person reads: no control characters (every terminal escape sequence starts with one), no Unicode
 * bidirectional overrides (they reorder what a person sees, "Trojan Source"), bounded in length.
 */

/** C0 and C1 control characters, newlines and tabs included. */
// biome-ignore lint/suspicious/noControlCharactersInRegex: matching them is the point.
const CONTROL = /[\u0000-\u001f\u007f-\u009f]+/g;
/** The same without the newline, for text that may keep several lines. */
// biome-ignore lint/suspicious/noControlCharactersInRegex: matching them is the point.
const CONTROL_BUT_NEWLINE = /[\u0000-\u0009\u000b-\u001f\u007f-\u009f]+/g;
/** Bidirectional embeddings, overrides and isolates (U+202A–U+202E, U+2066–U+2069), and LRM/RLM/ALM. */
const BIDI = /[\u202a-\u202e\u2066-\u2069\u200e\u200f\u061c]/g;

export interface PeerTextOptions {
  /** Longest text kept, in UTF-16 code units; longer text is cut and ends with "…". Default 200. */
  max?: number;
  /** Keep newlines (a message of several lines). Default false: one line, control runs become one space. */
  multiline?: boolean;
}

/** A peer's text for a terminal: control characters and bidi overrides removed, trimmed, clipped. */
export function peerText(text: unknown, options: PeerTextOptions = {}): string {
  const max = options.max ?? 200;
  const raw = typeof text === "string" ? text : String(text ?? "");
  const clean = (
    options.multiline ? raw.replace(CONTROL_BUT_NEWLINE, " ") : raw.replace(CONTROL, " ")
  )
    .replace(BIDI, "")
    .trim();
  return clean.length > max ? `${clean.slice(0, max)}…` : clean;
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
  // The parser already escaped C0 controls and spaces; C1 and bidi characters are percent-encoded as UTF-8 too,
  // except in the host (IDNA refuses them). Strip anything left for certainty.
  return peerText(href, { max });
}
