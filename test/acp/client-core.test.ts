/** The client journey's pure cores: advertised methods, initialize profiles, state readers, method choice, URLs. */

import assert from "node:assert/strict";
import { test } from "node:test";
import {
  type AdvertisedAuthMethod,
  AuthStatusCache,
  type CallerAbilities,
  chooseAuthMethod,
  initializeParams,
  isOpenableUrl,
  readAuthMethods,
  readAuthStatus,
  readGetAuthState,
  readInitializeResponse,
  readStatusHint,
  terminalInvocation,
} from "../../src/acp/client/index.ts";
import { promptFromElicitation, promptFromLoginPrompt } from "../../src/acp/client/url-prompt.ts";

const ALL: CallerAbilities = {
  showUrl: true,
  runTerminal: true,
  askEnvVars: true,
  envHas: () => false,
};
const NONE: CallerAbilities = {
  showUrl: false,
  runTerminal: false,
  askEnvVars: false,
  envHas: () => false,
};
const NOT_OURS = { agentIsAgentauth: false };

const v1Methods = readAuthMethods(
  [
    { id: "agent-login", name: "Agent login" },
    {
      id: "tty",
      name: "Terminal",
      type: "terminal",
      args: ["--login", 3],
      env: { A: "1", N: 2 }, // a bad name refuses the method: ACP-terminal-env-confirm
    },
    {
      type: "env_var",
      id: "key",
      name: "API key",
      vars: [{ name: "K" }, { name: "R", secret: false, optional: true }],
    },
    { id: "sso", name: "SSO", type: "_vendor_sso" },
    { name: "no id" },
    "garbage",
    { id: "agent-login", name: "duplicate" },
  ],
  1,
);

function byId(id: string): AdvertisedAuthMethod {
  const method = v1Methods.find((m) => m.id === id);
  assert.ok(method, id);
  return method;
}

test("[ACP-client-methods-v1] v1 authMethods: no type is agent, terminal env object, legacy env_var, junk dropped", () => {
  assert.deepEqual(
    v1Methods.map((m) => [m.id, m.type]),
    [
      ["agent-login", "agent"],
      ["tty", "terminal"],
      ["key", "env_var"],
      ["sso", "_vendor_sso"],
    ],
  );
  assert.equal(
    byId("agent-login").name,
    "Agent login",
    "the first of two methods with one id wins",
  );
  assert.deepEqual(byId("tty").args, ["--login"]);
  assert.deepEqual(byId("tty").env, { A: "1" }, "names with = and non-string values are dropped");
  assert.deepEqual(byId("key").vars, [
    { name: "K", label: undefined, secret: true, optional: false },
    { name: "R", label: undefined, secret: false, optional: true },
  ]);
});

test("[ACP-client-methods-v2] v2 authMethods: methodId, terminal env as [{name, value}]", () => {
  const methods = readAuthMethods(
    [
      { methodId: "a", name: "A", type: "agent" },
      {
        methodId: "t",
        name: "T",
        type: "terminal",
        args: ["--login"],
        env: [{ name: "X", value: "1" }],
      },
    ],
    2,
  );
  assert.deepEqual(
    methods.map((m) => [m.id, m.type, m.env]),
    [
      ["a", "agent", {}],
      ["t", "terminal", { X: "1" }],
    ],
  );
});

test("[ACP-client-profile] initialize answers: v1 logout/status capabilities, getAuthState flag, v2 logout by methods", () => {
  const v1 = readInitializeResponse(
    {
      protocolVersion: 1,
      agentInfo: { name: "a", version: "1" },
      agentCapabilities: { auth: { logout: {}, status: null }, getAuthState: true },
      authMethods: [],
    },
    1,
  );
  assert.deepEqual(v1.capabilities, {
    status: false,
    logout: true,
    getAuthState: true,
    agentauth: false,
    statusPush: false,
    sessionClose: false,
  });
  assert.deepEqual(v1.agent, { name: "a", version: "1" });
  const draft = readInitializeResponse(
    { protocolVersion: 1, agentCapabilities: { auth: { status: true } } },
    1,
  );
  assert.equal(draft.capabilities.status, true, "the RFD draft's `status: true` spelling counts");
  assert.equal(draft.capabilities.logout, false);
  const v2 = readInitializeResponse(
    {
      protocolVersion: 2,
      info: { name: "b", version: "2" },
      capabilities: { auth: { status: {} }, session: {} },
      authMethods: [{ methodId: "x", name: "X", type: "agent" }],
    },
    2,
  );
  assert.deepEqual(v2.capabilities, {
    status: true,
    logout: true,
    getAuthState: false,
    agentauth: false,
    statusPush: false,
    sessionClose: true,
  });
  const closes = readInitializeResponse(
    { protocolVersion: 1, agentCapabilities: { sessionCapabilities: { close: {} } } },
    1,
  );
  assert.equal(closes.capabilities.sessionClose, true, "v1 sessionCapabilities.close (codex-acp)");
  const v2Empty = readInitializeResponse(
    { protocolVersion: 2, info: { name: "b", version: "2" }, authMethods: [] },
    2,
  );
  assert.equal(
    v2Empty.capabilities.logout,
    false,
    "v2: an empty list means auth/logout MUST NOT be called",
  );
});

test("[ACP-client-method-choice] agent when URLs can be shown, else terminal, else env_var, else agent; never unknown types", () => {
  assert.equal(chooseAuthMethod(v1Methods, ALL, NOT_OURS).id, "agent-login");
  assert.equal(chooseAuthMethod(v1Methods, { ...ALL, showUrl: false }, NOT_OURS).id, "tty");
  assert.equal(
    chooseAuthMethod(v1Methods, { ...ALL, showUrl: false }, { agentIsAgentauth: true }).id,
    "agent-login",
  );
  assert.equal(chooseAuthMethod(v1Methods, { ...NONE, askEnvVars: true }, NOT_OURS).id, "key");
  assert.equal(
    chooseAuthMethod(v1Methods, { ...NONE, envHas: (n) => n === "K" }, NOT_OURS).id,
    "key",
  );
  assert.equal(
    chooseAuthMethod(v1Methods, NONE, NOT_OURS).id,
    "agent-login",
    "an agent method is the last resort",
  );
  const onlyOdd = v1Methods.filter((m) => m.type === "_vendor_sso" || m.type === "terminal");
  assert.throws(() => chooseAuthMethod(onlyOdd, NONE, NOT_OURS), {
    code: "acp_method_not_advertised",
  });
  assert.throws(() => chooseAuthMethod([], ALL, NOT_OURS), { code: "acp_method_not_advertised" });
});

test("[ACP-client-method-choice] an explicit choice must be advertised and runnable here", () => {
  assert.equal(chooseAuthMethod(v1Methods, NONE, NOT_OURS, "key").id, "key");
  assert.throws(() => chooseAuthMethod(v1Methods, ALL, NOT_OURS, "nope"), {
    code: "acp_method_not_advertised",
  });
  assert.throws(() => chooseAuthMethod(v1Methods, ALL, NOT_OURS, "sso"), {
    code: "acp_method_unsupported",
  });
  assert.throws(() => chooseAuthMethod(v1Methods, NONE, NOT_OURS, "tty"), {
    code: "acp_method_unsupported",
  });
});

test("[ACP-client-status-normalise] unrecognised states read as unknown; accounts keep display fields only", () => {
  const custom = readAuthStatus(
    {
      state: "_vendor_degraded",
      accounts: [{ label: "Max", email: "a@b.c", _meta: { token: "t" } }, { email: "x" }],
    },
    "auth/status",
  );
  assert.equal(custom.state, "unknown");
  assert.equal(custom.unrecognizedState, "_vendor_degraded");
  assert.deepEqual(custom.accounts, [{ label: "Max", email: "a@b.c" }]);
  assert.equal(readAuthStatus({ state: "not_required" }, "auth/status").state, "not_required");
  assert.equal(readAuthStatus({ state: 7 }, "auth/status").state, "unknown");
  assert.equal(readAuthStatus(null, "auth/status").state, "unknown");
  const draft = readAuthStatus(
    { authenticated: true, message: "Credentials are configured" },
    "auth/status",
  );
  assert.deepEqual([draft.state, draft.reason], ["authenticated", "Credentials are configured"]);
  assert.equal(readGetAuthState({ authenticated: false }).state, "unauthenticated");
  assert.equal(readGetAuthState({ authenticated: "yes" }).state, "unknown");
});

test("[ACP-client-status-hint] the vendor _auth/status_update payload is read as a hint", () => {
  assert.deepEqual(readStatusHint({ authStatus: { kind: "account", label: "ChatGPT Pro" } }), {
    state: "authenticated",
    label: "ChatGPT Pro",
    from: "_auth/status_update",
  });
  assert.equal(
    readStatusHint({ authStatus: { kind: "none", label: "Not logged in" } })?.state,
    "unauthenticated",
  );
  assert.equal(readStatusHint({ authStatus: { kind: "_new" } })?.state, "unknown");
  assert.equal(readStatusHint({ something: 1 }), undefined);
});

test("[ACP-client-status-epoch] a notification newer than an in-flight query wins; the query's answer is dropped", () => {
  const seen: string[] = [];
  const cache = new AuthStatusCache((s) => seen.push(s.state));
  const started = cache.epoch;
  cache.notify({ state: "authenticated", accounts: [], source: "auth/status_update" });
  const reported = cache.answer(
    { state: "unauthenticated", accounts: [], source: "auth/status" },
    started,
  );
  assert.equal(reported.state, "authenticated");
  assert.equal(cache.current?.state, "authenticated");
  const fresh = cache.answer(
    { state: "unauthenticated", accounts: [], source: "auth/status" },
    cache.epoch,
  );
  assert.equal(fresh.state, "unauthenticated", "a query with nothing newer is recorded");
  assert.deepEqual(seen, ["authenticated", "unauthenticated"]);
});

test("[ACP-client-url-policy] only https, or http on loopback, reaches the person", () => {
  assert.ok(isOpenableUrl("https://login.example.com/device"));
  assert.ok(isOpenableUrl("http://127.0.0.1:8080/device"));
  assert.ok(isOpenableUrl("http://localhost/cb"));
  for (const bad of [
    "http://example.com/",
    "javascript:alert(1)",
    "file:///etc/passwd",
    "data:text/html,x",
    "https://u:p@x.com/",
    "nope",
  ]) {
    assert.equal(isOpenableUrl(bad), false, bad);
  }
  assert.equal(
    promptFromElicitation({ mode: "form", message: "x", requestedSchema: {} }),
    undefined,
  );
  assert.equal(
    promptFromElicitation({ mode: "url", url: "javascript:alert(1)", message: "x" }),
    undefined,
  );
  assert.deepEqual(
    promptFromElicitation({
      mode: "url",
      url: "https://a.example/",
      message: "Go\u001b[2J there",
      requestId: 1,
      elicitationId: "e",
    }),
    {
      url: "https://a.example/",
      message: "Go [2J there",
      via: "elicitation",
    },
  );
  assert.deepEqual(
    promptFromLoginPrompt({
      methodId: "m",
      url: "https://a.example/d",
      userCode: "AB-CD",
      message: "Open it",
    }),
    {
      url: "https://a.example/d",
      message: "Open it",
      userCode: "AB-CD",
      methodId: "m",
      via: "login_prompt",
    },
  );
  assert.equal(promptFromLoginPrompt({ methodId: "m", url: "not a url", message: "x" }), undefined);
});

test("[ACP-terminal-args-append] terminal invocation: same command, method args appended, env overlaid", () => {
  const invocation = terminalInvocation(
    { command: "agent", args: ["--acp"], env: { PATH: "/bin", A: "0" }, cwd: "/w" },
    byId("tty"),
  );
  assert.deepEqual(invocation, {
    command: "agent",
    args: ["--acp", "--login"],
    env: { PATH: "/bin", A: "1" },
    cwd: "/w",
    method: { id: "tty", name: "Terminal" },
    agentNamed: false,
    extraEnv: { A: "1" },
  });
});

test("[ACP-client-initialize] initialize advertises terminal and URL elicitation only when the caller can use them", () => {
  assert.deepEqual(
    initializeParams(1, { runTerminal: true, showUrl: true }, { name: "c", version: "1" }),
    {
      protocolVersion: 1,
      clientCapabilities: {
        auth: { terminal: true },
        elicitation: { url: {} },
        _meta: { "terminal-auth": true },
      },
      clientInfo: { name: "c", version: "1" },
    },
  );
  assert.deepEqual(
    initializeParams(1, { runTerminal: false, showUrl: false }, { name: "c", version: "1" }),
    {
      protocolVersion: 1,
      clientCapabilities: { auth: { terminal: false } },
      clientInfo: { name: "c", version: "1" },
    },
  );
  assert.deepEqual(
    initializeParams(2, { runTerminal: true, showUrl: true }, { name: "c", version: "1" }),
    {
      protocolVersion: 2,
      info: { name: "c", version: "1" },
      capabilities: { auth: { terminal: {} }, elicitation: { url: {} } },
    },
  );
});
