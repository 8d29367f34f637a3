/** Pure parts of issue 20 §2: where a key goes, what a method needs, which method comes first, what a prompt is. */

import assert from "node:assert/strict";
import { test } from "node:test";
import { readInitializeResponse } from "../../src/acp/client/index.ts";
import { planLogin } from "../../src/acp/client/login-plan.ts";
import { methodNeeds, needsMet } from "../../src/acp/client/method-needs.ts";
import { promptText } from "../../src/acp/client/stdin-prompt.ts";

const abilities = (env: Record<string, string> = {}) => ({
  showUrl: true,
  runTerminal: true,
  askEnvVars: true,
  envHas: (name: string) => Boolean(env[name]),
});

const gemini = readInitializeResponse(
  {
    protocolVersion: 1,
    agentInfo: { name: "gemini-cli", title: "Gemini CLI", version: "0.61.0" },
    authMethods: [
      { id: "oauth-personal", name: "Log in with Google" },
      {
        id: "gemini-api-key",
        name: "Gemini API key",
        _meta: { "api-key": { provider: "google" } },
      },
      { id: "vertex-ai", name: "Vertex AI" },
    ],
  },
  1,
);

const method = (profile: typeof gemini, id: string) => {
  const found = profile.authMethods.find((m) => m.id === id);
  assert.ok(found, id);
  return found;
};

test("[ACP-login-gemini-api-key-string] the key's shape follows the agent: a plain string for gemini-cli and unknown agents, {apiKey} for agentauth's kit", () => {
  assert.deepEqual(methodNeeds(gemini, method(gemini, "gemini-api-key")).route, {
    kind: "meta",
    shape: "string",
    standsFor: "GEMINI_API_KEY",
  });
  const other = (meta: Record<string, unknown>) =>
    readInitializeResponse(
      {
        protocolVersion: 1,
        agentInfo: { name: "someone-else", version: "1" },
        agentCapabilities: { _meta: meta },
        authMethods: [{ id: "api-key", name: "Key" }],
      },
      1,
    );
  const unknown = other({});
  assert.deepEqual(methodNeeds(unknown, method(unknown, "api-key")).route, {
    kind: "meta",
    shape: "string",
  });
  const kit = other({ agentauth: { version: 1 } });
  assert.deepEqual(methodNeeds(kit, method(kit, "api-key")).route, {
    kind: "meta",
    shape: "object",
  });
  const vertex = methodNeeds(gemini, method(gemini, "vertex-ai"));
  assert.deepEqual(vertex.route, { kind: "env", name: "GOOGLE_API_KEY" });
  assert.equal(
    needsMet(vertex, (n) => n === "GOOGLE_CLOUD_PROJECT", false),
    false,
  );
  assert.equal(
    needsMet(vertex, (n) => n === "GOOGLE_CLOUD_PROJECT" || n === "GOOGLE_CLOUD_LOCATION", false),
    true,
  );
  assert.equal(
    needsMet(vertex, () => false, true),
    true,
    "a key stands for GOOGLE_API_KEY",
  );
});

test("[ACP-login-key-method-needs-key] planLogin refuses an unset key method before anything is sent, and a key for a method that takes none", () => {
  const name = "Gemini CLI";
  assert.throws(
    () => planLogin(gemini, abilities(), { methodId: "gemini-api-key", keyGiven: false, name }),
    (error: Error & { code?: string; acceptsKey?: boolean }) =>
      error.code === "acp_env_vars_missing" && error.acceptsKey === true,
  );
  const ok = planLogin(gemini, abilities({ GEMINI_API_KEY: "k" }), {
    methodId: "gemini-api-key",
    keyGiven: false,
    name,
  });
  assert.equal(ok.route, undefined, "no key given: nothing to route");
  assert.throws(
    () => planLogin(gemini, abilities(), { methodId: "oauth-personal", keyGiven: true, name }),
    (error: Error & { code?: string }) =>
      error.code === "acp_method_unsupported" && /gemini-api-key, vertex-ai/.test(error.message),
  );
});

test("[ACP-login-key-terminal-method] a key for a method that runs as a terminal login is refused, not dropped: the login in the terminal would never read it", () => {
  const profile = readInitializeResponse(
    {
      protocolVersion: 1,
      agentInfo: { name: "keyed-tui", title: "Keyed TUI", version: "1.0.0" },
      authMethods: [
        {
          id: "api-key",
          name: "API key",
          _meta: {
            "api-key": { provider: "x" },
            "terminal-auth": { command: "keyed-tui", args: ["login"], label: "Keyed TUI login" },
          },
        },
        { id: "token", name: "Token", _meta: { "api-key": { provider: "x" } } },
      ],
    },
    1,
  );
  const name = "Keyed TUI";
  assert.throws(
    () => planLogin(profile, abilities(), { methodId: "api-key", keyGiven: true, name }),
    (error: Error & { code?: string }) =>
      error.code === "acp_method_unsupported" &&
      /"api-key" .*runs as a login in the terminal/.test(error.message) &&
      /the key was not sent/.test(error.message) &&
      /sign in without the key .*or give the key to a method that reads it: token/.test(
        error.message,
      ),
  );
  // Without a key it runs in the terminal as before; a key goes to the method that reads it.
  assert.equal(
    planLogin(profile, abilities(), { methodId: "api-key", keyGiven: false, name }).kind,
    "terminal",
  );
  assert.equal(
    planLogin(profile, abilities(), { methodId: "token", keyGiven: true, name }).kind,
    "agent",
  );
});

test("[ACP-login-prefer-set-variable] without a method id: a method whose variables are set, or that takes the key given, comes first", () => {
  const name = "x";
  const plan = (env: Record<string, string>, keyGiven = false) =>
    planLogin(gemini, abilities(env), { keyGiven, name }).method.id;
  assert.equal(plan({}), "oauth-personal");
  assert.equal(plan({ GEMINI_API_KEY: "k" }), "gemini-api-key");
  assert.equal(plan({ GOOGLE_API_KEY: "k" }), "vertex-ai");
  assert.equal(plan({}, true), "gemini-api-key");
  const qwen = readInitializeResponse(
    {
      protocolVersion: 1,
      agentInfo: { name: "qwen-code", version: "0.24.4" },
      authMethods: [
        { id: "openai", name: "OpenAI", _meta: { type: "terminal", args: ["--auth-type=openai"] } },
      ],
    },
    1,
  );
  assert.equal(qwen.authMethods[0]?.terminal, undefined, "qwen's server-as-login is dropped");
  assert.equal(planLogin(qwen, abilities(), { keyGiven: false, name }).kind, "agent");
});

test("[ACP-login-stdin-prompt] promptText: an unterminated question, escapes removed; log text and JSON are not prompts", () => {
  assert.equal(
    promptText("\u001b[1G\u001b[0JEnter the authorization code: "),
    "Enter the authorization code:",
  );
  assert.equal(promptText("Continue? [y/N] "), "Continue? [y/N]");
  assert.equal(promptText("Paste code here if prompted > "), "Paste code here if prompted >");
  assert.equal(promptText('{"jsonrpc":"2.0","id":1,"result":'), undefined);
  assert.equal(promptText("Loading"), undefined);
  assert.equal(promptText("...."), undefined);
  assert.equal(promptText(`${"x".repeat(500)}:`), undefined);
  assert.ok(!promptText("Code\u202e: ")?.includes("\u202e"), "sanitised");
});
