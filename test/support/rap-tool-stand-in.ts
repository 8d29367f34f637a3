/**
 * Test support: a loopback RAP tool stand-in. It serves a toolset document, acknowledges invocations (or answers
 * whatever status the test scripts), records invocations and notices, and lets the test deliver callbacks later,
 * well-formed or hostile. The runtime is the peer under test.
 */

import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { after } from "node:test";
import {
  createReplayCache,
  type InvocationAuth,
  invocationAuthChallenge,
  verifyInvocationAuth,
} from "../../src/rap/invocation-auth.ts";
import type { Invocation, Toolset } from "../../src/rap/wire.ts";

export interface StandInOptions {
  name?: string;
  tools?: Toolset["tools"];
  /** The toolset document served; default built from name/tools and this server's /invoke. */
  toolset?: (origin: string) => unknown;
  /** Status for each invocation attempt (1-based per call id); default 200. */
  ack?: (invocation: Invocation, attempt: number) => number;
  /** Headers sent with every acknowledgement that is not 200 (e.g. Retry-After with a 503). */
  refusalHeaders?: Record<string, string>;
  /** Require this invocation authentication on every request (checked with the tool side's real verifier). */
  auth?: InvocationAuth;
}

export interface StandIn {
  origin: string;
  invocations: Invocation[];
  attempts: Map<string, number>;
  notices: { path: string; body: unknown }[];
  /** Requests refused with 401 because their authentication did not verify. */
  refused: { method: string; path: string; reason: string }[];
  /** Requests whose authentication verified (all of them when `auth` is unset). */
  authenticated: { method: string; path: string }[];
  options: StandInOptions;
  /** The last invocation received for `id`. */
  invocation(id: string): Invocation;
  /** POSTs a callback to `url` (default: the invocation's callback_url). */
  deliver(
    target: Invocation | string,
    body: unknown,
    init?: { headers?: Record<string, string>; raw?: string | Uint8Array; method?: string },
  ): Promise<{ status: number; body: Record<string, unknown> }>;
  close(): Promise<void>;
}

export const echoTool: Toolset["tools"][number] = {
  name: "echo",
  description: "Echoes its text.",
  inputSchema: {
    type: "object",
    properties: { text: { type: "string" } },
    required: ["text"],
    additionalProperties: false,
  },
};

export async function standInTool(options: StandInOptions = {}): Promise<StandIn> {
  const state: StandIn = {
    origin: "",
    invocations: [],
    attempts: new Map(),
    notices: [],
    refused: [],
    authenticated: [],
    options,
    invocation(id) {
      const found = state.invocations.findLast((i) => i.id === id);
      if (!found) throw new Error(`no invocation ${id}`);
      return found;
    },
    async deliver(target, body, init = {}) {
      const url = typeof target === "string" ? target : target.callback_url;
      const response = await fetch(url, {
        method: init.method ?? "POST",
        headers: { "content-type": "application/json", ...init.headers },
        ...(init.method === "GET" ? {} : { body: (init.raw ?? JSON.stringify(body)) as BodyInit }),
      });
      const text = await response.text();
      let parsed: Record<string, unknown> = {};
      try {
        parsed = JSON.parse(text);
      } catch {}
      return { status: response.status, body: parsed };
    },
    close: async () => {},
  };
  const seen = createReplayCache();
  const server = createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const bytes = Buffer.concat(chunks);
    const raw = bytes.toString("utf8");
    const path = new URL(req.url ?? "/", state.origin).pathname;
    const method = req.method ?? "GET";
    if (options.auth) {
      const check = verifyInvocationAuth(
        options.auth,
        {
          method,
          host: req.headers.host ?? "",
          path: req.url ?? "/",
          headers: req.headers,
          body: bytes,
        },
        seen,
      );
      if (!check.ok) {
        state.refused.push({ method, path, reason: check.reason });
        res.writeHead(401, { "www-authenticate": invocationAuthChallenge(options.auth) }).end();
        return;
      }
    }
    state.authenticated.push({ method, path });
    if (req.method === "GET" && path === "/.well-known/rap-toolset") {
      const doc = options.toolset?.(state.origin) ?? {
        name: options.name ?? "stand-in",
        endpoint: `${state.origin}/invoke`,
        tools: options.tools ?? [echoTool],
      };
      res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(doc));
      return;
    }
    if (req.method === "POST" && path === "/invoke") {
      const invocation = JSON.parse(raw) as Invocation;
      const attempt = (state.attempts.get(invocation.id) ?? 0) + 1;
      state.attempts.set(invocation.id, attempt);
      const status = options.ack?.(invocation, attempt) ?? 200;
      if (status === 200) state.invocations.push(invocation);
      res.writeHead(status, status === 200 ? {} : (options.refusalHeaders ?? {})).end();
      return;
    }
    if (req.method === "POST") {
      state.notices.push({ path, body: raw ? JSON.parse(raw) : undefined });
      res.writeHead(200).end();
      return;
    }
    res.writeHead(404).end();
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  state.origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  state.close = () =>
    new Promise((resolve) => {
      server.close(() => resolve());
      server.closeAllConnections();
    });
  after(() => state.close());
  return state;
}

/** Bounded polling: resolves with the first truthy value of `probe`, fails after `timeoutMs`. */
export async function eventually<T>(
  probe: () => T | Promise<T>,
  what: string,
  timeoutMs = 10_000,
): Promise<NonNullable<T>> {
  const start = Date.now();
  for (;;) {
    const value = await probe();
    if (value) return value as NonNullable<T>;
    if (Date.now() - start > timeoutMs) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

/** A loopback endpoint that records `user_choice` answers (the tool's response_url). */
export async function scriptedChoiceServer(): Promise<{ origin: string; received: unknown[] }> {
  const received: unknown[] = [];
  const server = createServer(async (req, res) => {
    let raw = "";
    for await (const chunk of req) raw += chunk;
    received.push(JSON.parse(raw));
    res.writeHead(200).end();
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  after(
    () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  );
  return { origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, received };
}
