/** `login()` by every method type, against real scripted agents over stdio. */

import assert from "node:assert/strict";
import { test } from "node:test";
import {
  type EnvVarRequest,
  runInheritedTerminal,
  type TerminalInvocation,
  type TerminalRunner,
  type UrlPrompt,
} from "../../src/acp/client/index.ts";
import {
  calls,
  cleanEnv,
  connectScripted,
  methods,
  stateFolder,
  until,
} from "./fixtures/scripted-agent-harness.ts";

const GUARD = { timeout: 30_000 };

/** The CLI's runner, watched: what it was asked to run. */
function watchedTerminal(seen: TerminalInvocation[]): TerminalRunner {
  return (invocation, signal) => {
    seen.push(invocation);
    return runInheritedTerminal(invocation, signal);
  };
}

test(
  "[ACP-client-login-terminal] terminal-only agent: same command + --login + env, exit 0, reconnect, authenticated",
  GUARD,
  async (t) => {
    const dir = stateFolder();
    const seen: TerminalInvocation[] = [];
    const client = await connectScripted(t, "terminal", dir, [], {
      runTerminal: watchedTerminal(seen),
      // The method sets SCRIPTED_LOGIN: variables the agent chose run only once confirmed.
      confirmCommand: async () => true,
    });
    assert.equal((await client.status()).state, "unauthenticated");
    const outcome = await client.login();
    assert.deepEqual(outcome.method, {
      id: "tty",
      name: "Log in from the terminal",
      type: "terminal",
    });
    assert.equal(outcome.status.state, "authenticated");
    assert.equal(outcome.authenticated, true);
    assert.equal(seen.length, 1);
    assert.deepEqual(
      seen[0]?.args.slice(-3),
      ["--state", dir, "--login"],
      "method args appended after the base args",
    );
    assert.deepEqual(calls(dir), [
      "initialize terminal=true",
      "auth/status",
      "terminal-login SCRIPTED_LOGIN=1",
      "initialize terminal=true",
      "auth/status",
    ]);
    assert.ok(
      !methods(dir).includes("authenticate"),
      "a terminal method is never passed to authenticate",
    );
  },
);

test(
  "[ACP-client-login-terminal] a non-zero exit is a typed error, and the agent is reconnected anyway",
  GUARD,
  async (t) => {
    const dir = stateFolder();
    const client = await connectScripted(t, "terminal", dir, [], {
      runTerminal: runInheritedTerminal,
      confirmCommand: async () => true,
      env: cleanEnv({ SCRIPTED_LOGIN_EXIT: "7" }),
    });
    await assert.rejects(client.login("tty"), { code: "acp_terminal_login_failed", exitCode: 7 });
    assert.equal((await client.status()).state, "unauthenticated", "the client still works");
  },
);

test(
  "[ACP-client-login-terminal] without a terminal, auth.terminal is not advertised and nothing runnable is offered",
  GUARD,
  async (t) => {
    const dir = stateFolder();
    const client = await connectScripted(t, "terminal", dir);
    assert.deepEqual(client.profile.authMethods, []);
    await assert.rejects(client.login(), { code: "acp_method_not_advertised" });
    assert.deepEqual(calls(dir), ["initialize terminal=false"]);
  },
);

test(
  "[ACP-client-login-env-var] legacy env_var: the hook's value restarts the agent, then authenticate",
  GUARD,
  async (t) => {
    const dir = stateFolder();
    const asked: EnvVarRequest[] = [];
    const client = await connectScripted(t, "env-var", dir, [], {
      env: cleanEnv({ SCRIPTED_EXPECTED_KEY: "sk-test-123" }),
      onEnvVars: async (request) => {
        asked.push(request);
        return { SCRIPTED_API_KEY: "sk-test-123", NOT_DECLARED: "ignored" };
      },
    });
    assert.equal((await client.status()).state, "unauthenticated");
    const outcome = await client.login();
    assert.equal(outcome.method.type, "env_var");
    assert.equal(outcome.status.state, "authenticated");
    assert.deepEqual(asked[0]?.missing, ["SCRIPTED_API_KEY"], "optional variables are not missing");
    assert.equal(asked[0]?.method.link, "https://example.com/keys");
    assert.deepEqual(calls(dir), [
      "start key=unset",
      "auth/status",
      "start key=set",
      "authenticate api-key key=match",
      "auth/status",
    ]);
  },
);

test(
  "[ACP-client-login-env-var] variables already in the environment: no question, no restart",
  GUARD,
  async (t) => {
    const dir = stateFolder();
    let asked = 0;
    const client = await connectScripted(t, "env-var", dir, [], {
      env: cleanEnv({ SCRIPTED_API_KEY: "k", SCRIPTED_EXPECTED_KEY: "k" }),
      onEnvVars: async () => {
        asked++;
        return {};
      },
    });
    const outcome = await client.login("api-key");
    assert.equal(outcome.status.state, "authenticated");
    assert.equal(asked, 0);
    assert.deepEqual(calls(dir), [
      "start key=set",
      "authenticate api-key key=match",
      "auth/status",
    ]);
  },
);

test(
  "[ACP-client-login-env-var] nobody to ask and nothing in the environment: a typed error naming the variable",
  GUARD,
  async (t) => {
    const dir = stateFolder();
    const client = await connectScripted(t, "env-var", dir);
    await assert.rejects(
      client.login("api-key"),
      (error: Error & { code?: string; missing?: string[] }) => {
        assert.equal(error.code, "acp_env_vars_missing");
        assert.deepEqual(error.missing, ["SCRIPTED_API_KEY"]);
        assert.match(error.message, /SCRIPTED_API_KEY/);
        return true;
      },
    );
    assert.deepEqual(calls(dir), ["start key=unset"]);
  },
);

test(
  "[ACP-client-login-url-elicitation] URL-mode elicitation reaches onUrl, is accepted, and the login completes",
  GUARD,
  async (t) => {
    const dir = stateFolder();
    const prompts: UrlPrompt[] = [];
    const client = await connectScripted(t, "url", dir, [], { onUrl: (p) => void prompts.push(p) });
    const outcome = await client.login();
    assert.equal(outcome.status.state, "authenticated");
    assert.deepEqual(prompts, [
      {
        url: "https://login.example.com/device?user_code=ABCD-EFGH",
        message: "Open the page to sign in to Scripted. [31m",
        via: "elicitation",
      },
    ]);
    assert.deepEqual(calls(dir).slice(0, 3), [
      "initialize url=true",
      "authenticate browser",
      "elicitation action=accept",
    ]);
  },
);

test(
  "[ACP-client-login-url-notification] the _agentauth/login_prompt notification reaches the same hook",
  GUARD,
  async (t) => {
    const dir = stateFolder();
    const prompts: UrlPrompt[] = [];
    const client = await connectScripted(t, "url", dir, ["--prompt-notification"], {
      onUrl: (p) => void prompts.push(p),
    });
    const outcome = await client.login("browser");
    assert.equal(outcome.authenticated, true);
    assert.deepEqual(prompts, [
      {
        url: "https://login.example.com/device?user_code=ABCD-EFGH",
        message: "Open https://login.example.com/device and enter ABCD-EFGH.",
        userCode: "ABCD-EFGH",
        expiresInSeconds: 600,
        methodId: "browser",
        via: "login_prompt",
      },
    ]);
  },
);

test(
  "[ACP-client-login-url-policy] a javascript: URL is declined and never shown; the login fails typed",
  GUARD,
  async (t) => {
    const dir = stateFolder();
    const prompts: UrlPrompt[] = [];
    const client = await connectScripted(t, "url", dir, ["--bad-url"], {
      onUrl: (p) => void prompts.push(p),
    });
    await assert.rejects(client.login(), { code: "acp_login_failed" });
    assert.deepEqual(prompts, []);
    assert.ok(calls(dir).includes("elicitation action=decline"));
  },
);

test(
  "[ACP-client-login-cancel] aborting the signal cancels the pending authenticate ($/cancel_request reaches the agent)",
  GUARD,
  async (t) => {
    const dir = stateFolder();
    const client = await connectScripted(t, "url", dir, ["--hang-login"], { onUrl: () => {} });
    const controller = new AbortController();
    const login = client.login("browser", { signal: controller.signal });
    await until(() => methods(dir).includes("authenticate"));
    controller.abort();
    await assert.rejects(login, { code: "acp_cancelled" });
    await until(() => methods(dir).includes("authenticate-cancelled"));
    assert.equal(
      (await client.status()).state,
      "unauthenticated",
      "the connection survives a cancelled login",
    );
  },
);

test(
  "[ACP-client-login-choice] an unadvertised id and a custom method type are typed errors, nothing is sent",
  GUARD,
  async (t) => {
    const dir = stateFolder();
    const client = await connectScripted(t, "v2", dir, [], { protocolVersion: 2, onUrl: () => {} });
    await assert.rejects(client.login("nope"), { code: "acp_method_not_advertised" });
    await assert.rejects(client.login("custom"), { code: "acp_method_unsupported" });
    assert.deepEqual(methods(dir), ["initialize"]);
  },
);

test(
  "[ACP-client-v2] v2: auth/login with methodId, elicitation, auth/status, auth/logout",
  GUARD,
  async (t) => {
    const dir = stateFolder();
    const prompts: UrlPrompt[] = [];
    const client = await connectScripted(t, "v2", dir, [], {
      protocolVersion: 2,
      onUrl: (p) => void prompts.push(p),
    });
    assert.equal(client.profile.protocolVersion, 2);
    assert.deepEqual(client.profile.agent, { name: "scripted-agent", version: "1.0.0" });
    assert.deepEqual(
      client.profile.authMethods.map((m) => [m.id, m.type]),
      [
        ["agent-login", "agent"],
        ["custom", "_vendor_sso"],
      ],
      "no terminal method: the client cannot run one, so did not advertise auth.terminal",
    );
    const outcome = await client.login();
    assert.deepEqual([outcome.method.id, outcome.status.state], ["agent-login", "authenticated"]);
    assert.equal(prompts[0]?.url, "https://login.example.com/v2");
    const after = await client.logout();
    assert.equal(after.state, "unauthenticated");
    assert.deepEqual(calls(dir), [
      "initialize v=2 terminal=false url=true",
      "auth/login agent-login",
      "elicitation action=accept",
      "auth/status",
      "auth/logout",
      "auth/status",
    ]);
  },
);

test(
  "[ACP-client-v2] v2 terminal method: env array overlaid, capabilities.auth.terminal advertised",
  GUARD,
  async (t) => {
    const dir = stateFolder();
    const client = await connectScripted(t, "v2", dir, [], {
      protocolVersion: 2,
      runTerminal: runInheritedTerminal,
      confirmCommand: async () => true,
    });
    const outcome = await client.login();
    assert.deepEqual([outcome.method.id, outcome.status.state], ["tty", "authenticated"]);
    assert.deepEqual(calls(dir).slice(0, 3), [
      "initialize v=2 terminal=true url=false",
      "terminal-login SCRIPTED_LOGIN=1",
      "initialize v=2 terminal=true url=false",
    ]);
  },
);
