/** Test support for the console: a running console over a store, signed in through its one-time link. */

import { request as httpRequest } from "node:http";
import { after } from "node:test";
import { type ConsoleOptions, type RunningConsole, startConsole } from "../../src/console/index.ts";

export interface SignedIn {
  console: RunningConsole;
  /** `agentauth_console=…` for the Cookie header. */
  cookie: string;
  csrf: string;
  /** The console's origin, for an Origin header. */
  origin: string;
}

/** Starts a console for this test file (closed after it) and redeems its login link like a browser. */
export async function signedInConsole(options: ConsoleOptions): Promise<SignedIn> {
  const running = await startConsole({ vaultPollMs: 50, ...options });
  after(() => running.close());
  const login = await fetch(running.loginUrl, { redirect: "manual" });
  await login.arrayBuffer();
  const setCookie = login.headers.get("set-cookie");
  if (login.status !== 303 || !setCookie) throw new Error(`login answered ${login.status}`);
  const cookie = setCookie.split(";")[0] as string;
  const page = await (await fetch(running.url, { headers: { cookie } })).text();
  const csrf = /<meta name="csrf-token" content="([^"]+)">/.exec(page)?.[1];
  if (!csrf) throw new Error("no CSRF token in the page");
  return { console: running, cookie, csrf, origin: new URL(running.url).origin };
}

/** A POST as the page sends it; `headers` overrides or (with undefined) removes one. */
export async function postJson(
  signedIn: SignedIn,
  path: string,
  body: unknown,
  headers: Record<string, string | undefined> = {},
): Promise<{ status: number; json: Record<string, unknown>; headers: Headers }> {
  const all: Record<string, string | undefined> = {
    "content-type": "application/json",
    "x-csrf-token": signedIn.csrf,
    cookie: signedIn.cookie,
    origin: signedIn.origin,
    ...headers,
  };
  const response = await fetch(new URL(path, signedIn.console.url), {
    method: "POST",
    headers: Object.fromEntries(
      Object.entries(all).filter((e): e is [string, string] => e[1] !== undefined),
    ),
    body: typeof body === "string" ? body : JSON.stringify(body),
  });
  const text = await response.text();
  let json: Record<string, unknown> = {};
  try {
    json = JSON.parse(text) as Record<string, unknown>;
  } catch {
    json = { raw: text };
  }
  return { status: response.status, json, headers: response.headers };
}

/**
 * Reads server-sent events until `accept` takes one `state` event's data; aborts the stream after. Bounded (20 s,
 * far beyond a vault poll even on a loaded machine): a state that never comes fails with a message, not a hang.
 */
export async function nextState<T>(
  signedIn: SignedIn,
  accept: (state: T) => boolean,
  trigger?: () => Promise<void>,
  timeoutMs = 20_000,
): Promise<T> {
  const controller = new AbortController();
  let timedOut = false;
  let seen = 0;
  const timer = setTimeout(() => {
    timedOut = true;
    controller.abort();
  }, timeoutMs);
  const response = await fetch(new URL("/api/events", signedIn.console.url), {
    headers: { cookie: signedIn.cookie, accept: "text/event-stream" },
    signal: controller.signal,
  }).catch((error) => {
    clearTimeout(timer);
    throw timedOut ? new Error(`the event stream did not open within ${timeoutMs} ms`) : error;
  });
  if (!response.body) throw new Error("no event stream");
  const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = "";
  let triggered = false;
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) throw new Error("the event stream ended");
      buffer += value;
      let end = buffer.indexOf("\n\n");
      while (end >= 0) {
        const frame = buffer.slice(0, end);
        buffer = buffer.slice(end + 2);
        end = buffer.indexOf("\n\n");
        if (!frame.split("\n").includes("event: state")) continue;
        const data = frame
          .split("\n")
          .filter((line) => line.startsWith("data: "))
          .map((line) => line.slice(6))
          .join("\n");
        const state = JSON.parse(data) as T;
        seen++;
        if (accept(state)) return state;
        if (trigger && !triggered) {
          triggered = true;
          await trigger();
        }
      }
    }
  } catch (error) {
    if (!timedOut) throw error;
    throw new Error(`no accepted state event within ${timeoutMs} ms (${seen} state events seen)`);
  } finally {
    clearTimeout(timer);
    controller.abort();
    await reader.cancel().catch(() => {});
  }
}

/** A raw HTTP request (node:http), so Host and every other header are exactly what the test says. */
export function rawRequest(
  url: string,
  options: {
    method?: string;
    headers?: Record<string, string>;
    body?: string | Buffer;
    /** The request target as sent, when it is not the URL's path (absolute-form, malformed). */
    path?: string;
  } = {},
): Promise<{
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}> {
  return new Promise((resolve, reject) => {
    const target = new URL(url);
    const request = httpRequest(
      {
        host: target.hostname,
        port: target.port,
        path: options.path ?? `${target.pathname}${target.search}`,
        method: options.method ?? "GET",
        headers: options.headers ?? {},
      },
      (response) => {
        const chunks: Buffer[] = [];
        response.on("data", (chunk: Buffer) => chunks.push(chunk));
        response.on("end", () =>
          resolve({
            status: response.statusCode ?? 0,
            headers: response.headers,
            body: Buffer.concat(chunks).toString("utf8"),
          }),
        );
        response.on("error", reject);
      },
    );
    request.on("error", reject);
    request.end(options.body);
  });
}
