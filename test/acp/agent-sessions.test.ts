/**
 * What happens to running sessions on logout (the spec leaves it to the agent): the three SESSION_POLICY values
 * of the reference agent, over raw JSON lines. API-key logins keep these fast; the policy does not depend on
 * the method.
 */

import assert from "node:assert/strict";
import { test } from "node:test";
import { useIdp } from "../support/idp.ts";
import type { JsonlPeer } from "../support/jsonl-peer.ts";
import { tempDir } from "../support/tmp.ts";
import {
  AUTH_REQUIRED_MESSAGE,
  assertResult,
  assertRpcError,
  initializeV1,
  newSessionParams,
  promptParams,
  type SessionPolicyName,
  startAgent,
} from "./fixtures/agent-process.ts";

const idp = await useIdp();
const TIMEOUT = { timeout: 30_000 };
const API_KEY_LOGIN = { methodId: "api-key", _meta: { "api-key": { apiKey: "echo-sessions" } } };

/** An agent with `policy`, logged in with an API key, with one session open. */
async function agentWithSession(
  t: { after(fn: () => unknown): void },
  policy: SessionPolicyName,
): Promise<{ agent: JsonlPeer; home: string; sessionId: string }> {
  const home = tempDir();
  const agent = startAgent(t, { issuer: idp.issuer, home, policy });
  await initializeV1(agent);
  assertResult(await agent.request("authenticate", API_KEY_LOGIN), {});
  const { sessionId } = (await agent.call("session/new", newSessionParams(home))) as {
    sessionId: string;
  };
  assertResult(await agent.request("session/prompt", promptParams(sessionId, "before")), {
    stopReason: "end_turn",
  });
  assertResult(await agent.request("logout", {}), {});
  return { agent, home, sessionId };
}

test(
  "[ACP-session-policy-require-auth] after logout an old session needs a login again, and works again after one",
  TIMEOUT,
  async (t) => {
    const { agent, home, sessionId } = await agentWithSession(t, "require-auth");
    assertRpcError(
      await agent.request("session/prompt", promptParams(sessionId, "after logout")),
      -32000,
      AUTH_REQUIRED_MESSAGE,
    );
    assertRpcError(await agent.request("session/new", newSessionParams(home)), -32000);
    assertResult(await agent.request("authenticate", API_KEY_LOGIN), {});
    assertResult(await agent.request("session/prompt", promptParams(sessionId, "back")), {
      stopReason: "end_turn",
    });
  },
);

test(
  "[ACP-session-policy-terminate] after logout an old session is gone (−32002), even after logging in again",
  TIMEOUT,
  async (t) => {
    const { agent, home, sessionId } = await agentWithSession(t, "terminate");
    const gone = {
      jsonrpc: "2.0",
      error: { code: -32002, message: "Resource not found", data: { sessionId } },
    };
    const before = await agent.request("session/prompt", promptParams(sessionId, "after logout"));
    assert.deepEqual(before, { ...gone, id: before.id });
    assertResult(await agent.request("authenticate", API_KEY_LOGIN), {});
    const after = await agent.request("session/prompt", promptParams(sessionId, "after login"));
    assert.deepEqual(after, { ...gone, id: after.id });
    // New sessions are unaffected once logged in again.
    const { sessionId: fresh } = (await agent.call("session/new", newSessionParams(home))) as {
      sessionId: string;
    };
    assert.notEqual(fresh, sessionId);
    assertResult(await agent.request("session/prompt", promptParams(fresh, "new")), {
      stopReason: "end_turn",
    });
  },
);

test(
  "[ACP-session-policy-keep] after logout an old session keeps working while session/new needs a login",
  TIMEOUT,
  async (t) => {
    const { agent, home, sessionId } = await agentWithSession(t, "keep");
    const from = agent.mark();
    assertResult(await agent.request("session/prompt", promptParams(sessionId, "kept")), {
      stopReason: "end_turn",
    });
    const chunk = await agent.notification("session/update", from);
    assert.deepEqual((chunk.params as { update: unknown }).update, {
      sessionUpdate: "agent_message_chunk",
      content: { type: "text", text: "echo: kept" },
    });
    assertRpcError(
      await agent.request("session/new", newSessionParams(home)),
      -32000,
      AUTH_REQUIRED_MESSAGE,
    );
    // "keep" covers sessions this connection created, not ids a client makes up.
    assertRpcError(
      await agent.request("session/prompt", promptParams("made-up-session", "hi")),
      -32000,
      AUTH_REQUIRED_MESSAGE,
    );
  },
);
