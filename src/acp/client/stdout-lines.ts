/**
 * The agent's stdout read as ACP's stdio transport (newline-delimited JSON-RPC), with what is not JSON-RPC dropped
 * here, before the SDK sees it. The SDK answers every unparseable line with `{"id":null,"error":{"code":-32700}}`
 * into the agent's stdin; gemini-cli's `oauth-personal` prints its prompt on stdout and then read those answers as
 * the authorization code it asked for (issue 8 §3.2). Agents that log to stdout are common; we keep the last few
 * dropped lines (sanitised, clipped) to explain a silent or failing agent.
 */

import type { AnyMessage } from "@agentclientprotocol/sdk/unstable";
import { MessageTooLargeError } from "@agentclientprotocol/sdk/unstable";
import { peerText } from "../../core/display.ts";

/** How many dropped lines are kept, and how much of each. */
const KEEP_LINES = 5;
const KEEP_CHARS = 160;
const NEWLINE = 0x0a;

/** What the agent printed on stdout that was not JSON-RPC. */
export class StrayOutput {
  #count = 0;
  readonly #last: string[] = [];
  readonly #onLine: ((line: string) => void) | undefined;

  /** `onLine` sees each dropped line as the agent wrote it (unsanitised: clean it before showing it). */
  constructor(onLine?: (line: string) => void) {
    this.#onLine = onLine;
  }

  get count(): number {
    return this.#count;
  }

  /** The last few dropped lines, oldest first, each one line without control characters, clipped. */
  get last(): readonly string[] {
    return [...this.#last];
  }

  add(line: string): void {
    this.#count++;
    this.#onLine?.(line);
    this.#last.push(peerText(line, { max: KEEP_CHARS }));
    if (this.#last.length > KEEP_LINES) this.#last.shift();
  }

  /** A sentence for an error message, or "" when nothing was dropped. */
  note(): string {
    const n = this.#count;
    if (n === 0) return "";
    const last = this.#last.filter(Boolean).map((line) => `"${line}"`);
    return (
      ` It printed ${n} line${n === 1 ? "" : "s"} on stdout that ${n === 1 ? "is" : "are"} not JSON-RPC (dropped)` +
      `${last.length > 0 ? `; the last: ${last.join(", ")}` : ""}.`
    );
  }
}

/** The longest unterminated line handed to `onUnterminated` (a prompt is short). */
const TAIL_BYTES = 1024;

/**
 * Bytes → JSON-RPC messages. A line is kept when it parses to a JSON object with `"jsonrpc": "2.0"`; anything else
 * (text, arrays, other JSON) goes to `stray`. A line longer than `maxMessageBytes` ends the stream with the SDK's
 * `MessageTooLargeError`, as the SDK's own reader does. After each chunk, `onUnterminated` gets the start of the line
 * still open (undefined when the chunk ended its line): a question the agent waits on (stdin-prompt.ts).
 */
export function jsonRpcMessages(
  input: ReadableStream<Uint8Array>,
  options: {
    maxMessageBytes: number;
    stray: StrayOutput;
    onUnterminated?: (tail: string | undefined) => void;
  },
): ReadableStream<AnyMessage> {
  const decoder = new TextDecoder();
  let pending: Uint8Array[] = [];
  let pendingBytes = 0;
  const take = (controller: TransformStreamDefaultController<AnyMessage>, tail: Uint8Array) => {
    const bytes =
      pending.length === 0 ? tail : concat([...pending, tail], pendingBytes + tail.length);
    pending = [];
    pendingBytes = 0;
    const line = decoder.decode(bytes).trim();
    if (!line) return;
    const message = parseJsonRpc(line);
    if (message) controller.enqueue(message);
    else options.stray.add(line);
  };
  return input.pipeThrough(
    new TransformStream<Uint8Array, AnyMessage>({
      transform(chunk, controller) {
        let start = 0;
        for (let end = chunk.indexOf(NEWLINE); end !== -1; end = chunk.indexOf(NEWLINE, start)) {
          if (pendingBytes + end - start > options.maxMessageBytes) {
            throw new MessageTooLargeError(options.maxMessageBytes);
          }
          take(controller, chunk.subarray(start, end));
          start = end + 1;
        }
        if (start < chunk.length) {
          const rest = chunk.slice(start);
          pendingBytes += rest.length;
          if (pendingBytes > options.maxMessageBytes) {
            throw new MessageTooLargeError(options.maxMessageBytes);
          }
          pending.push(rest);
        }
        // A long unterminated run is output in progress, not a question.
        const open = pendingBytes > 0 && pendingBytes <= TAIL_BYTES;
        options.onUnterminated?.(open ? decoder.decode(concat(pending, pendingBytes)) : undefined);
      },
      flush(controller) {
        if (pendingBytes > 0) take(controller, new Uint8Array(0));
      },
    }),
  );
}

function parseJsonRpc(line: string): AnyMessage | undefined {
  // Not JSON-RPC unless it can open an object: skip the parse for ordinary log lines.
  if (line.charCodeAt(0) !== 0x7b) return undefined;
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch {
    return undefined;
  }
  if (typeof value !== "object" || value === null || Array.isArray(value)) return undefined;
  return (value as { jsonrpc?: unknown }).jsonrpc === "2.0" ? (value as AnyMessage) : undefined;
}

function concat(parts: Uint8Array[], length: number): Uint8Array {
  const out = new Uint8Array(length);
  let at = 0;
  for (const part of parts) {
    out.set(part, at);
    at += part.length;
  }
  return out;
}
