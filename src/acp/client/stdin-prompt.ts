/**
 * An agent that asks a question on its stdout without ending the line and then reads the answer from its stdin:
 * gemini-cli 0.61's `oauth-personal` writes "Enter the authorization code: " and takes the next line on stdin, which
 * is the ACP channel, as the code (issue 20 §2.3). Such a login can never finish over ACP, and anything the client
 * writes meanwhile (a `$/cancel_request`, the next request) is read as the answer and sent on (gemini posted it to
 * Google's token endpoint). The watch reports text left unterminated on stdout that reads like a prompt and stays
 * so for a moment, so the connection can stop the agent before writing anything more to it.
 */

import { peerText } from "../../core/display.ts";

/** How long an unterminated prompt-like text must stay alone before it counts: a log line written in two pieces does not. */
export const PROMPT_SETTLE_MS = 400;

/** CSI and OSC escape sequences (readline's cursor moves before a prompt), removed before the text is judged. */
// biome-ignore lint/suspicious/noControlCharactersInRegex: matching them is the point.
const ESCAPES = /\u001b\[[0-?]*[ -/]*[@-~]|\u001b\][^\u0007\u001b]*(\u0007|\u001b\\)|\u001b[@-_]/g;

/**
 * The question as one clean line when `text` (an unterminated stdout tail) reads like a prompt: it is not the start of
 * a JSON message, holds a letter, and ends in ":", "?", ">" or "]" (y/N), spaces aside. Else undefined. Pure.
 */
export function promptText(text: string): string | undefined {
  const plain = text.replace(ESCAPES, "").replace(/\s+$/, "");
  if (plain.startsWith("{") || plain.length > 400 || !/\p{L}/u.test(plain)) return undefined;
  if (!/[:?>\]]$/.test(plain)) return undefined;
  const line = plain.split(/\r|\n/).at(-1) ?? plain;
  return peerText(line.trim(), { max: 160 }) || undefined;
}

/**
 * Feeds the unterminated stdout tail after each chunk (`undefined` when the last chunk ended its line); calls
 * `onPrompt` once a prompt has stood unanswered for PROMPT_SETTLE_MS with nothing more printed.
 */
export function watchForPrompt(
  onPrompt: (prompt: string) => void,
): (tail: string | undefined) => void {
  let timer: ReturnType<typeof setTimeout> | undefined;
  let reported = false;
  return (tail) => {
    clearTimeout(timer);
    const prompt = tail === undefined || reported ? undefined : promptText(tail);
    if (prompt === undefined) return;
    timer = setTimeout(() => {
      reported = true;
      onPrompt(prompt);
    }, PROMPT_SETTLE_MS);
    timer.unref();
  };
}
