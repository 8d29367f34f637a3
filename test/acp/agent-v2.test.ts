/**
 * ACP v2 (draft) wire tests of our reference agent over raw JSON lines: the router picks v2 from
 * `protocolVersion: 2`, and the agent speaks `auth/login`, `auth/logout`, `auth/status` with v2 shapes.
 */

import assert from "node:assert/strict";
import { test } from "node:test";
import { useIdp } from "../support/idp.ts";
import type { JsonlPeer } from "../support/jsonl-peer.ts";
import { tempDir } from "../support/tmp.ts";
import {
  AUTH_REQUIRED_MESSAGE,
  assertNotPrinted,
  assertResult,
  assertRpcError,
  oauthLogin,
  startAgent,
  vaultSummaries,
} from "./fixtures/agent-process.ts";

const idp = await useIdp();
const TIMEOUT = { timeout: 30_000 };

const INFO = {
  name: "agentauth-example-agent",
  title: "agentauth example agent",
  version: "0.1.0",
};
const OAUTH = {
  methodId: "oauth",
  name: "Sign in",
  description: "Sign in with your browser or another device (OAuth device flow)",
  type: "agent",
};
const API_KEY = {
  methodId: "api-key",
  name: "API key",
  description:
    'A key starting with "echo-", in _meta["api-key"].apiKey or $AGENTAUTH_EXAMPLE_API_KEY',
  type: "agent",
};
const TERMINAL = {
  methodId: "terminal-login",
  name: "Sign in from the terminal",
  description: null,
  type: "terminal",
  args: ["--login"],
  env: [],
};

async function initializeV2(agent: JsonlPeer, capabilities: Record<string, unknown>) {
  return agent.request("initialize", {
    protocolVersion: 2,
    info: { name: "t", version: "1" },
    capabilities,
  });
}

test(
  "[ACP-v2-initialize-shape] v2 initialize answers protocolVersion 2, info, capabilities.auth.status and methodId/type methods",
  TIMEOUT,
  async (t) => {
    const agent = startAgent(t, { issuer: idp.issuer, home: tempDir() });
    assertResult(await initializeV2(agent, { auth: { terminal: {} } }), {
      protocolVersion: 2,
      info: INFO,
      // v2 has no logout marker: a non-empty authMethods obliges auth/login and auth/logout.
      capabilities: { auth: { status: {} }, _meta: { agentauth: { version: 1 } } },
      authMethods: [OAUTH, API_KEY, TERMINAL],
    });
  },
);

test(
  "[ACP-v2-terminal-gated] without capabilities.auth.terminal no terminal method is advertised",
  TIMEOUT,
  async (t) => {
    const agent = startAgent(t, { issuer: idp.issuer, home: tempDir() });
    const response = await initializeV2(agent, {});
    assert.deepEqual((response.result as { authMethods: unknown[] }).authMethods, [OAUTH, API_KEY]);
  },
);

test(
  "[ACP-v2-login-logout] auth/login with an API key, auth/status, session/new gating, auth/logout",
  TIMEOUT,
  async (t) => {
    const home = tempDir();
    const agent = startAgent(t, { issuer: idp.issuer, home });
    await initializeV2(agent, { auth: { terminal: {} } });
    assertResult(await agent.request("auth/status", {}), {
      state: "unauthenticated",
      accounts: [],
    });
    assertRpcError(
      await agent.request("session/new", { cwd: home }),
      -32000,
      AUTH_REQUIRED_MESSAGE,
    );
    // The v1 names do not exist in v2.
    assertRpcError(await agent.request("authenticate", { methodId: "api-key" }), -32601);
    assertRpcError(await agent.request("logout", {}), -32601);
    assertRpcError(await agent.request("auth/login", { methodId: "terminal-login" }), -32602);
    assertRpcError(await agent.request("auth/login", { methodId: "nope" }), -32602);
    assertRpcError(await agent.request("auth/login", { methodId: "api-key" }), -32602);

    const key = `echo-${crypto.randomUUID()}`;
    const from = agent.mark();
    const login = await agent.request("auth/login", {
      methodId: "api-key",
      _meta: { "api-key": { apiKey: key } },
    });
    assertResult(login, {});
    const authenticated = {
      state: "authenticated",
      accounts: [{ label: "Echo API key", active: true }],
    };
    const update = await agent.notification("auth/status_update", from);
    assert.deepEqual(update.params, authenticated);
    assert.ok(agent.messages.indexOf(update) < agent.messages.indexOf(login));
    assertResult(await agent.request("auth/status", {}), authenticated);
    const session = await agent.request("session/new", { cwd: home });
    assert.equal(typeof (session.result as { sessionId?: unknown }).sessionId, "string");

    const out = agent.mark();
    assertResult(await agent.request("auth/logout", {}), {});
    const gone = await agent.notification("auth/status_update", out);
    assert.deepEqual(gone.params, { state: "unauthenticated", accounts: [] });
    assertResult(await agent.request("auth/status", {}), {
      state: "unauthenticated",
      accounts: [],
    });
    assertResult(await agent.request("auth/logout", {}), {});
    assert.deepEqual(await vaultSummaries(home), []);
    assertRpcError(await agent.request("session/new", { cwd: home }), -32000);
    assertNotPrinted(agent, key, "the API key");
  },
);

test(
  "[ACP-v2-login-oauth] auth/login oauth runs the device login with the login-prompt extension",
  TIMEOUT,
  async (t) => {
    const agent = startAgent(t, { issuer: idp.issuer, home: tempDir() });
    await initializeV2(agent, {});
    const { response } = await oauthLogin(agent, "auth/login");
    assertResult(response, {});
    assertResult(await agent.request("auth/status", {}), {
      state: "authenticated",
      accounts: [
        {
          label: "alice@example.test",
          active: true,
          name: "Alice Liddell",
          email: "alice@example.test",
          organization: "Wonderland Labs",
        },
      ],
    });
  },
);
