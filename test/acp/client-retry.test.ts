/** `request()`: auth_required triggers the journey once and the request is retried once; never a loop. */

import assert from "node:assert/strict";
import { test } from "node:test";
import { calls, connectScripted, methods, stateFolder } from "./fixtures/scripted-agent-harness.ts";

const GUARD = { timeout: 30_000 };

test(
  "[ACP-client-retry-once] lazy agent: prompt fails auth_required, one authenticate, the retry succeeds",
  GUARD,
  async (t) => {
    const dir = stateFolder();
    const client = await connectScripted(t, "lazy", dir);
    const { sessionId } = await client.newSession("/tmp");
    assert.equal(sessionId, "lazy-1", "session/new succeeds signed out (lazy validation)");
    const response = await client.prompt(sessionId, "hello");
    assert.equal(response.stopReason, "end_turn");
    assert.deepEqual(calls(dir), [
      "session/new",
      "session/prompt",
      "authenticate login",
      "session/prompt",
    ]);
  },
);

test(
  "[ACP-client-retry-once] concurrent auth_required failures share one login",
  GUARD,
  async (t) => {
    const dir = stateFolder();
    const client = await connectScripted(t, "lazy", dir);
    const { sessionId } = await client.newSession("/tmp");
    const results = await Promise.all([
      client.prompt(sessionId, "a"),
      client.prompt(sessionId, "b"),
    ]);
    assert.deepEqual(
      results.map((r) => r.stopReason),
      ["end_turn", "end_turn"],
    );
    assert.equal(methods(dir).filter((m) => m === "authenticate").length, 1);
  },
);

test(
  "[ACP-client-retry-no-loop] an agent that still says auth_required after login: one retry, then a typed error",
  GUARD,
  async (t) => {
    const dir = stateFolder();
    const client = await connectScripted(t, "always-fails", dir);
    await assert.rejects(client.newSession("/tmp"), (error: Error & { code?: string }) => {
      assert.equal(error.code, "acp_auth_required");
      assert.match(error.message, /after signing in with "login"/);
      return true;
    });
    assert.deepEqual(calls(dir), ["session/new", "authenticate login", "session/new"]);
  },
);

test(
  "[ACP-client-retry-opt-out] login: false reports auth_required without signing in",
  GUARD,
  async (t) => {
    const dir = stateFolder();
    const client = await connectScripted(t, "always-fails", dir);
    await assert.rejects(
      client.request("session/new", { cwd: "/tmp", mcpServers: [] }, { login: false }),
      {
        code: "acp_auth_required",
      },
    );
    assert.deepEqual(calls(dir), ["session/new"]);
  },
);

test(
  "[ACP-client-request-errors] other agent errors come back typed with the JSON-RPC code",
  GUARD,
  async (t) => {
    const dir = stateFolder();
    const client = await connectScripted(t, "lazy", dir);
    await assert.rejects(
      client.request("session/load", { sessionId: "x", cwd: "/tmp", mcpServers: [] }),
      {
        code: "acp_request_failed",
        rpcCode: -32601,
      },
    );
  },
);
