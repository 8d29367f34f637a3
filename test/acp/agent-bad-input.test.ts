/**
 * Bad input on the agent's stdin: each must get the JSON-RPC answer it deserves (or none, for notifications),
 * and the agent must keep serving, which a following `auth/status` proves. The framing and error answers come
 * from the SDK's connection; the auth-method checks are ours.
 */

import assert from "node:assert/strict";
import { test } from "node:test";
import { useIdp } from "../support/idp.ts";
import type { JsonlPeer, JsonRpcMessage } from "../support/jsonl-peer.ts";
import { tempDir } from "../support/tmp.ts";
import {
  assertResult,
  assertRpcError,
  initializeV1,
  startAgent,
} from "./fixtures/agent-process.ts";

const idp = await useIdp();
const TIMEOUT = { timeout: 30_000 };
const UNAUTHENTICATED = { state: "unauthenticated", accounts: [] };

/** The agent still answers requests. */
async function stillServing(agent: JsonlPeer): Promise<void> {
  assertResult(await agent.request("auth/status", {}), UNAUTHENTICATED);
}

/** Writes a raw line and returns the id-less error the agent answers it with. */
async function rawLineError(agent: JsonlPeer, line: string | Uint8Array): Promise<JsonRpcMessage> {
  const from = agent.mark();
  agent.writeRaw(line);
  return agent.waitFor(
    (m) => m.id === null && m.error !== undefined,
    "an error for the raw line",
    from,
  );
}

async function initializedAgent(t: { after(fn: () => unknown): void }): Promise<JsonlPeer> {
  const agent = startAgent(t, { issuer: idp.issuer, home: tempDir() });
  await initializeV1(agent, { auth: { terminal: true } });
  return agent;
}

test(
  "[ACP-jsonrpc-parse-error] a malformed JSON line answers −32700 with id null",
  TIMEOUT,
  async (t) => {
    const agent = await initializedAgent(t);
    assert.deepEqual(await rawLineError(agent, "{not json at all\n"), {
      jsonrpc: "2.0",
      id: null,
      error: { code: -32700, message: "Parse error" },
    });
    // Invalid UTF-8 is a parse error too, not a crash.
    assertRpcError(await rawLineError(agent, Uint8Array.from([0xff, 0xfe, 0x7b, 0x0a])), -32700);
    await stillServing(agent);
  },
);

test(
  "[ACP-jsonrpc-invalid-request] an array (batch) or number line answers −32600 with id null",
  TIMEOUT,
  async (t) => {
    const agent = await initializedAgent(t);
    assert.deepEqual(
      await rawLineError(agent, '[{"jsonrpc":"2.0","id":7,"method":"auth/status"}]\n'),
      {
        jsonrpc: "2.0",
        id: null,
        error: { code: -32600, message: "Invalid request: JSON-RPC batches are not supported" },
      },
    );
    await stillServing(agent);
    assertRpcError(await rawLineError(agent, "42\n"), -32600);
    await stillServing(agent);
    assertRpcError(await rawLineError(agent, '"auth/status"\n'), -32600);
    assertRpcError(await rawLineError(agent, '{"id":5,"method":"auth/status"}\n'), -32600);
    await stillServing(agent);
  },
);

test(
  "[ACP-jsonrpc-oversized-line] a 2 MB line is answered and the agent keeps serving",
  TIMEOUT,
  async (t) => {
    const agent = await initializedAgent(t);
    const padding = "a".repeat(2 * 1024 * 1024);
    // A well-formed request carrying 2 MB of _meta: answered like any other.
    agent.writeRaw(
      `${JSON.stringify({ jsonrpc: "2.0", id: "big", method: "auth/status", params: { _meta: { padding } } })}\n`,
    );
    assertResult(await agent.response("big"), UNAUTHENTICATED);
    // 2 MB of garbage: one parse error, not one per chunk.
    const error = await rawLineError(agent, `{${padding}\n`);
    assertRpcError(error, -32700);
    await stillServing(agent);
    assert.equal(agent.messages.filter((m) => m.id === null).length, 1);
  },
);

test(
  "[ACP-jsonrpc-framing] split writes, CRLF line endings and blank lines are all read as lines",
  TIMEOUT,
  async (t) => {
    const agent = await initializedAgent(t);
    await agent.writeRaw('{"jsonrpc":"2.0","id":"split","meth');
    // Give the first half its own read on the agent's side (best effort; nothing is asserted about time).
    await new Promise((resolve) => setTimeout(resolve, 50));
    agent.writeRaw('od":"auth/status","params":{}}\n');
    assertResult(await agent.response("split"), UNAUTHENTICATED);
    agent.writeRaw('\n  \n{"jsonrpc":"2.0","id":"crlf","method":"auth/status","params":{}}\r\n');
    assertResult(await agent.response("crlf"), UNAUTHENTICATED);
    await stillServing(agent);
    assert.deepEqual(
      agent.messages.filter((m) => m.error),
      [],
      "no errors for well-formed input",
    );
    assert.deepEqual(agent.garbage, []);
  },
);

test(
  "[ACP-jsonrpc-method-not-found] an unknown method answers −32601; an unknown notification is ignored",
  TIMEOUT,
  async (t) => {
    const agent = await initializedAgent(t);
    const response = await agent.request("nope/method", {});
    assert.deepEqual(response.error, {
      code: -32601,
      message: '"Method not found": nope/method',
      data: { method: "nope/method" },
    });
    const from = agent.mark();
    agent.notify("_nope/notification", { x: 1 });
    await stillServing(agent);
    assert.equal(agent.mark(), from + 1, "the notification got no answer");
    // A response to a request the agent never sent is dropped.
    agent.respond(987654, {});
    await stillServing(agent);
  },
);

test(
  "[ACP-authenticate-invalid-params] authenticate with a non-string, missing or unknown methodId answers −32602, quoting at most a prefix of it",
  TIMEOUT,
  async (t) => {
    const agent = await initializedAgent(t);
    assertRpcError(await agent.request("authenticate", { methodId: 42 }), -32602);
    assertRpcError(await agent.request("authenticate", {}), -32602);
    assertRpcError(await agent.request("authenticate", null), -32602);
    const unknown = await agent.request("authenticate", { methodId: "never-advertised" });
    assert.deepEqual(unknown.error, {
      code: -32602,
      message: 'Invalid params: unknown auth method "never-advertised"',
      data: { methodId: "never-advertised" },
    });
    // A long unknown id is not echoed in full in the message.
    const long = "x".repeat(10_000);
    const longAnswer = await agent.request("authenticate", { methodId: long });
    assertRpcError(longAnswer, -32602);
    assert.ok((longAnswer.error?.message.length ?? 0) < 300, "the message quotes at most a prefix");
    assert.ok(
      JSON.stringify(longAnswer.error).length < 600,
      "nor is it reflected in full in error.data (a 10 kB id would come back 10 kB)",
    );
    await stillServing(agent);
  },
);

test(
  "[ACP-terminal-not-authenticate] authenticate for the terminal method answers −32602, advertised or not",
  TIMEOUT,
  async (t) => {
    const advertised = await initializedAgent(t);
    const answer = await advertised.request("authenticate", { methodId: "terminal-login" });
    assertRpcError(answer, -32602, /terminal methods are run by the client/);
    assert.deepEqual(answer.error?.data, { methodId: "terminal-login" });
    await stillServing(advertised);

    const plain = startAgent(t, { issuer: idp.issuer, home: tempDir() });
    await initializeV1(plain);
    assertRpcError(
      await plain.request("authenticate", { methodId: "terminal-login" }),
      -32602,
      /unknown auth method/,
    );
    await stillServing(plain);
  },
);

test(
  "[ACP-initialize-first] before initialize every request, auth/status included, answers −32600 (SDK); initialize then works",
  TIMEOUT,
  async (t) => {
    const home = tempDir();
    const agent = startAgent(t, { issuer: idp.issuer, home });
    const notYet = {
      code: -32600,
      message: "Invalid request",
      data: "first ACP request must be initialize",
    };
    for (const [method, params] of [
      ["auth/status", {}],
      ["getAuthState", {}],
      ["authenticate", { methodId: "api-key", _meta: { "api-key": { apiKey: "echo-early" } } }],
      ["logout", {}],
      ["session/new", { cwd: home, mcpServers: [] }],
    ] as const) {
      const response = await agent.request(method, params);
      assert.deepEqual(response.error, notYet, method);
    }
    const init = await agent.request("initialize", { protocolVersion: 1, clientCapabilities: {} });
    assert.equal(init.error, undefined);
    // The early authenticate was refused, not run.
    await stillServing(agent);
  },
);

test("[ACP-stdio-eof] closing the agent's stdin ends it with exit code 0", TIMEOUT, async (t) => {
  const agent = await initializedAgent(t);
  await stillServing(agent);
  assert.deepEqual(await agent.close(), { code: 0, signal: null });
});
