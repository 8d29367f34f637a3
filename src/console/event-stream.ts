/**
 * The console's server-sent events: every open stream gets the whole state, at most once per 100 ms after a change,
 * and a heartbeat every 15 s. Bounded: at most 16 streams (the oldest gives way) and 1 MiB queued per stream (a
 * reader that stopped reading is dropped; it reconnects and gets the whole state).
 */

import type { IncomingMessage, ServerResponse } from "node:http";
import { SECURITY_HEADERS } from "./security.ts";

const DEBOUNCE_MS = 100;
/** Event streams open at once (one person, a few tabs). */
const MAX_STREAMS = 16;
/** Bytes queued for one event stream before it is dropped. */
const MAX_STREAM_BACKLOG = 1024 * 1024;
const HEARTBEAT_MS = 15_000;

const SSE_HEADERS: Record<string, string> = {
  ...SECURITY_HEADERS,
  "content-type": "text/event-stream; charset=utf-8",
  connection: "keep-alive",
};

export interface EventStreams {
  /** Something changed: push the state to every stream soon (debounced). */
  changed(): void;
  /** Answers a `GET /api/events` with a stream that starts with the current state. */
  open(request: IncomingMessage, response: ServerResponse): void;
  close(): void;
}

export function eventStreams(state: () => unknown): EventStreams {
  const streams = new Set<ServerResponse>();
  let pushTimer: NodeJS.Timeout | undefined;
  const write = (stream: ServerResponse, text: string) => {
    if (stream.writableLength > MAX_STREAM_BACKLOG) {
      streams.delete(stream);
      stream.destroy();
      return;
    }
    stream.write(text);
  };
  const pushNow = () => {
    pushTimer = undefined;
    if (streams.size === 0) return;
    const frame = `event: state\ndata: ${JSON.stringify(state())}\n\n`;
    for (const stream of streams) write(stream, frame);
  };
  const heartbeat = setInterval(() => {
    for (const stream of streams) write(stream, ": heartbeat\n\n");
  }, HEARTBEAT_MS);
  heartbeat.unref();
  return {
    changed() {
      if (pushTimer) return;
      pushTimer = setTimeout(pushNow, DEBOUNCE_MS);
      pushTimer.unref();
    },
    open(request, response) {
      response.writeHead(200, SSE_HEADERS);
      response.write(`retry: 2000\n\nevent: state\ndata: ${JSON.stringify(state())}\n\n`);
      streams.add(response);
      // The oldest stream gives way (a page that reloads often leaves closed ones behind briefly).
      if (streams.size > MAX_STREAMS) {
        const oldest = streams.values().next().value;
        if (oldest) {
          streams.delete(oldest);
          oldest.end();
        }
      }
      const drop = () => streams.delete(response);
      request.on("close", drop);
      response.on("close", drop);
      // A browser that went away mid-write is not the server's failure.
      response.on("error", drop);
    },
    close() {
      clearInterval(heartbeat);
      if (pushTimer) clearTimeout(pushTimer);
      for (const stream of streams) stream.end();
      streams.clear();
    },
  };
}
