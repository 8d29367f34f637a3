/**
 * Test support: a loopback RAP callback receiver standing in for a runtime's callback endpoint. It records every
 * POST (status it answered, raw body) and every accepted message, and can be told to fail the next deliveries.
 */

import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { after } from "node:test";

export type Message = Record<string, unknown> & { type: string };

export interface CallbackSink {
  /** POST messages here: `http://127.0.0.1:<port>/callback`. */
  url: string;
  /** Every delivery attempt, in order, with the status the sink answered. */
  attempts: { status: number; body: string }[];
  /** The messages the sink accepted (answered 2xx), parsed. */
  messages: Message[];
  /** Answer `status` to the next `count` deliveries (then 200 again). */
  failNext(count: number, status: number): void;
  /** Waits (bounded) for an accepted message matching `match`; throws with what did arrive on timeout. */
  waitFor(match: (message: Message) => boolean, timeoutMs?: number): Promise<Message>;
  /** Forgets everything recorded and any queued failures. */
  reset(): void;
  /** The accepted messages answering call `id`. */
  forCall(id: string): Message[];
  close(): Promise<void>;
}

export async function callbackSink(): Promise<CallbackSink> {
  const failures: number[] = [];
  const attempts: CallbackSink["attempts"] = [];
  const messages: Message[] = [];
  const server = createServer(async (req, res) => {
    let body = "";
    for await (const chunk of req) body += chunk;
    const status = failures.shift() ?? 200;
    attempts.push({ status, body });
    if (status < 300) messages.push(JSON.parse(body) as Message);
    res.writeHead(status, { "content-type": "application/json" }).end('{"ok":true}');
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/callback`;
  const close = () =>
    new Promise<void>((resolve) => {
      server.close(() => resolve());
      server.closeAllConnections();
    });
  after(close);
  return {
    url,
    attempts,
    messages,
    failNext(count, status) {
      for (let i = 0; i < count; i++) failures.push(status);
    },
    async waitFor(match, timeoutMs = 10_000) {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const found = messages.find(match);
        if (found) return found;
        if (Date.now() > deadline) {
          throw new Error(
            `no matching callback within ${timeoutMs} ms; got ${JSON.stringify(messages)}`,
          );
        }
        await new Promise((resolve) => setTimeout(resolve, 5));
      }
    },
    reset() {
      failures.length = 0;
      attempts.length = 0;
      messages.length = 0;
    },
    forCall: (id) => messages.filter((m) => m.id === id || m.tool_call_id === id),
    close,
  };
}
