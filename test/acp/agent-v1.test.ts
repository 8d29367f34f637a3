/**
 * ACP v1 wire tests of our reference agent, as raw JSON lines over real stdio: initialize, auth/status, the draft
 * getAuthState, auth_required gating, the OAuth login with our login-prompt extension, API keys, environment
 * credentials, logout with revocation, and that no secret ever reaches the agent's output.
 */

import assert from "node:assert/strict";
import { test } from "node:test";
import { GetAuthStateResponseSchema, LoginPromptSchema } from "../../src/acp/wire.ts";
import { Secret } from "../../src/core/secret.ts";
import { discoverAuthorizationServer, introspectToken } from "../../src/oauth/index.ts";
import { openVault } from "../../src/vault/index.ts";
import { expireAccessToken } from "../support/credentials.ts";
import { useIdp } from "../support/idp.ts";
import { tempDir } from "../support/tmp.ts";
import {
  AUTH_REQUIRED_MESSAGE,
  assertNotPrinted,
  assertResult,
  assertRpcError,
  initializeV1,
  newSessionParams,
  oauthLogin,
  promptParams,
  startAgent,
  vaultSummaries,
  vaultTokens,
} from "./fixtures/agent-process.ts";

const idp = await useIdp();
const as = await discoverAuthorizationServer(idp.issuer);
const TIMEOUT = { timeout: 30_000 };

const AGENT_INFO = {
  name: "agentauth-example-agent",
  title: "agentauth example agent",
  version: "0.1.0",
};
const OAUTH_METHOD = {
  id: "oauth",
  name: "Sign in",
  description: "Sign in with your browser or another device (OAuth device flow)",
};
const API_KEY_METHOD = {
  id: "api-key",
  name: "API key",
  description:
    'A key starting with "echo-", in _meta["api-key"].apiKey or $AGENTAUTH_EXAMPLE_API_KEY',
};
const TERMINAL_METHOD = {
  id: "terminal-login",
  name: "Sign in from the terminal",
  description: null,
  type: "terminal",
  args: ["--login"],
  env: {},
};
const ALICE = {
  label: "alice@example.test",
  active: true,
  name: "Alice Liddell",
  email: "alice@example.test",
  organization: "Wonderland Labs",
};
const UNAUTHENTICATED = { state: "unauthenticated", accounts: [] };
const ALICE_AUTHENTICATED = { state: "authenticated", accounts: [ALICE] };

test(
  "[ACP-v1-initialize-shape] without auth.terminal the agent advertises oauth and api-key, logout, status and getAuthState (in _meta)",
  TIMEOUT,
  async (t) => {
    for (const clientCapabilities of [{}, { auth: { terminal: false } }]) {
      const agent = startAgent(t, { issuer: idp.issuer, home: tempDir() });
      const response = await agent.request("initialize", {
        protocolVersion: 1,
        clientCapabilities,
      });
      assertResult(response, {
        protocolVersion: 1,
        agentInfo: AGENT_INFO,
        // getAuthState is a custom capability: ACP's extensibility rule puts it in _meta, never at the root.
        agentCapabilities: {
          auth: { logout: {}, status: {} },
          _meta: { agentauth: { version: 1 }, getAuthState: true },
        },
        authMethods: [OAUTH_METHOD, API_KEY_METHOD],
      });
    }
  },
);

test(
  "[ACP-v1-terminal-advertised] with clientCapabilities.auth.terminal the terminal method appears with its args and env",
  TIMEOUT,
  async (t) => {
    const agent = startAgent(t, { issuer: idp.issuer, home: tempDir() });
    const result = await initializeV1(agent, { auth: { terminal: true } });
    assert.deepEqual(result.authMethods, [OAUTH_METHOD, API_KEY_METHOD, TERMINAL_METHOD]);
    assert.deepEqual(result.agentCapabilities, {
      auth: { logout: {}, status: {} },
      _meta: { agentauth: { version: 1 }, getAuthState: true },
    });
  },
);

test(
  "[ACP-status-unauthenticated] before any login auth/status is unauthenticated and getAuthState gives the seed shape per method",
  TIMEOUT,
  async (t) => {
    const agent = startAgent(t, { issuer: idp.issuer, home: tempDir() });
    await initializeV1(agent, { auth: { terminal: true } });
    assertResult(await agent.request("auth/status", {}), UNAUTHENTICATED);
    const state = await agent.request("getAuthState", {});
    assertResult(state, {
      authenticated: false,
      message: "Sign in with one of the advertised methods.",
      // One entry per agent-run method; the terminal method is the client's to run and has no state here.
      authMethods: [
        { authMethodId: "oauth", authenticated: false, message: "Not configured." },
        { authMethodId: "api-key", authenticated: false, message: "Not configured." },
      ],
    });
    assert.doesNotThrow(() => GetAuthStateResponseSchema.parse(state.result));
    // Nothing changed, so nothing was announced.
    assert.deepEqual(agent.notifications(), []);
  },
);

test(
  "[ACP-gating-auth-required] session methods answer −32000 before login; initialize, auth/status, getAuthState and logout never do",
  TIMEOUT,
  async (t) => {
    const home = tempDir();
    const agent = startAgent(t, { issuer: idp.issuer, home });
    await initializeV1(agent);
    assertRpcError(
      await agent.request("session/new", newSessionParams(home)),
      -32000,
      AUTH_REQUIRED_MESSAGE,
    );
    assertRpcError(
      await agent.request("session/prompt", promptParams("no-such-session", "hi")),
      -32000,
      AUTH_REQUIRED_MESSAGE,
    );
    // The example agent implements no session/load and does not advertise loadSession, so the method does not
    // exist: "method not found", not an auth error (gating an absent method would mislead the client).
    assertRpcError(
      await agent.request("session/load", { sessionId: "s", ...newSessionParams(home) }),
      -32601,
    );
    for (const method of ["auth/status", "getAuthState", "auth/status", "getAuthState"]) {
      const response = await agent.request(method, {});
      assert.equal(
        response.error,
        undefined,
        `${method} failed: ${JSON.stringify(response.error)}`,
      );
    }
    // Logout with nothing to forget succeeds, twice (idempotent), and announces nothing: nothing changed.
    assertResult(await agent.request("logout", {}), {});
    assertResult(await agent.request("logout", {}), {});
    assertResult(await agent.request("auth/status", {}), UNAUTHENTICATED);
    assert.deepEqual(agent.notifications("auth/status_update"), []);
    assert.deepEqual(await vaultSummaries(home), []);
  },
);

test(
  "[ACP-oauth-login] authenticate oauth: login prompt, status_update before the response, then sessions work and prompts echo",
  TIMEOUT,
  async (t) => {
    const home = tempDir();
    const agent = startAgent(t, { issuer: idp.issuer, home });
    await initializeV1(agent);
    const { response, prompt, id } = await oauthLogin(agent);
    assertResult(response, {});

    const params = LoginPromptSchema.parse(prompt.params);
    assert.deepEqual(prompt, { jsonrpc: "2.0", method: "_agentauth/login_prompt", params });
    assert.equal(params.methodId, "oauth");
    const url = new URL(params.url);
    assert.equal(url.origin, idp.issuer);
    assert.equal(url.pathname, "/device");
    assert.match(params.userCode ?? "", /^[A-Z]{4}-[A-Z]{4}$/);
    assert.equal(url.searchParams.get("user_code"), params.userCode);
    assert.equal(
      params.message,
      `To sign in at ${new URL(idp.issuer).host}, open ${idp.issuer}/device and enter the code ${params.userCode}.`,
    );
    assert.equal(params.expiresInSeconds, 600);
    // The prompt also goes to the agent's stderr, for a person watching the agent's log.
    assert.ok(agent.stderr.includes(params.message), "the login prompt is on stderr");

    const update = await agent.notification("auth/status_update");
    assert.deepEqual(update, {
      jsonrpc: "2.0",
      method: "auth/status_update",
      params: ALICE_AUTHENTICATED,
    });
    assert.ok(
      agent.messages.indexOf(update) < agent.messages.indexOf(response),
      "auth/status_update arrives before the authenticate response",
    );
    assert.equal(agent.notifications("auth/status_update").length, 1);
    assert.equal(response.id, id);

    assertResult(await agent.request("auth/status", {}), ALICE_AUTHENTICATED);
    assertResult(await agent.request("getAuthState", {}), {
      authenticated: true,
      message: "Credentials are configured.",
      authMethods: [
        {
          authMethodId: "oauth",
          authenticated: true,
          message: "Credentials stored in the agentauth vault.",
        },
        { authMethodId: "api-key", authenticated: false, message: "Not configured." },
      ],
    });

    const session = await agent.request("session/new", newSessionParams(home));
    const { sessionId } = session.result as { sessionId: string };
    assert.equal(typeof sessionId, "string");
    const from = agent.mark();
    const turn = await agent.request("session/prompt", promptParams(sessionId, "hello wire"));
    assertResult(turn, { stopReason: "end_turn" });
    const chunk = await agent.notification("session/update", from);
    assert.deepEqual(chunk.params, {
      sessionId,
      update: {
        sessionUpdate: "agent_message_chunk",
        content: { type: "text", text: "echo: hello wire" },
      },
    });
    assert.ok(agent.messages.indexOf(chunk) < agent.messages.indexOf(turn));
    assert.deepEqual(agent.garbage, []);
  },
);

test(
  "[ACP-logout-revokes] logout announces unauthenticated, revokes the refresh token at the server and re-gates sessions",
  TIMEOUT,
  async (t) => {
    const home = tempDir();
    const agent = startAgent(t, { issuer: idp.issuer, home });
    await initializeV1(agent);
    assertResult((await oauthLogin(agent)).response, {});
    const session = (await agent.call("session/new", newSessionParams(home))) as {
      sessionId: string;
    };

    const [tokens] = await vaultTokens(home);
    const refreshToken = tokens?.refreshToken;
    assert.ok(refreshToken instanceof Secret, "the login stored a refresh token");
    const client = { clientId: "agentauth-example-agent" };
    const introspect = () =>
      introspectToken({ as, client, token: refreshToken, tokenTypeHint: "refresh_token" });
    assert.equal((await introspect()).active, true);

    const from = agent.mark();
    const logout = await agent.request("logout", {});
    assertResult(logout, {});
    const update = await agent.notification("auth/status_update", from);
    assert.deepEqual(update.params, UNAUTHENTICATED);
    assert.ok(agent.messages.indexOf(update) < agent.messages.indexOf(logout));

    assert.equal((await introspect()).active, false, "the refresh token was revoked (RFC 7009)");
    assert.deepEqual(await vaultSummaries(home), []);
    assertResult(await agent.request("auth/status", {}), UNAUTHENTICATED);
    assertRpcError(
      await agent.request("session/new", newSessionParams(home)),
      -32000,
      AUTH_REQUIRED_MESSAGE,
    );
    // Default policy (require-auth): the old session needs a login again.
    assertRpcError(
      await agent.request("session/prompt", promptParams(session.sessionId, "still there?")),
      -32000,
      AUTH_REQUIRED_MESSAGE,
    );
    // A second logout has nothing left to do and says nothing new.
    assertResult(await agent.request("logout", {}), {});
    assert.equal(agent.notifications("auth/status_update").length, 2);
  },
);

test(
  "[ACP-logout-offline] logout with the authorization server down still forgets locally, warns on stderr, and prints no token",
  TIMEOUT,
  async (t) => {
    const other = await useIdp();
    const home = tempDir();
    const agent = startAgent(t, { issuer: other.issuer, home });
    await initializeV1(agent);
    assertResult((await oauthLogin(agent)).response, {});
    const [tokens] = await vaultTokens(home);
    await other.close();

    assertResult(await agent.request("logout", {}), {});
    assertResult(await agent.request("auth/status", {}), UNAUTHENTICATED);
    assert.deepEqual(await vaultSummaries(home), []);
    const warning = agent.stderr
      .split("\n")
      .filter((line) => line.startsWith("{"))
      .map((line) => JSON.parse(line) as { event?: string; level?: string; method?: string })
      .find((entry) => entry.event === "acp.logout_revoke_failed");
    assert.equal(warning?.level, "warn");
    assert.equal(warning?.method, "oauth");
    for (const value of [tokens?.accessToken, tokens?.refreshToken, tokens?.idToken]) {
      if (value) assertNotPrinted(agent, value.reveal(), "a token");
    }
  },
);

test(
  "[ACP-status-pure] auth/status and getAuthState change nothing in the vault, refresh nothing, and never answer −32000",
  TIMEOUT,
  async (t) => {
    const home = tempDir();
    const agent = startAgent(t, { issuer: idp.issuer, home });
    await initializeV1(agent);
    assertResult((await oauthLogin(agent)).response, {});
    // An expired access token is the strongest temptation to "helpfully" refresh inside a status query.
    const vault = openVault({ env: { AGENTAUTH_HOME: home } });
    try {
      const [summary] = await vault.list();
      const record = summary && (await vault.getById(summary.id));
      assert.ok(record, "the login stored a credential");
      await expireAccessToken(vault, record);
    } finally {
      await vault.close();
    }
    const before = await vaultSummaries(home);
    const refreshesBefore = idp.stats.byGrant.refresh_token?.success ?? 0;
    const updatesBefore = agent.notifications().length;

    const answers = await Promise.all([
      ...Array.from({ length: 20 }, () => agent.request("auth/status", {})),
      ...Array.from({ length: 5 }, () => agent.request("getAuthState", {})),
    ]);
    for (let i = 0; i < 10; i++) answers.push(await agent.request("auth/status", {}));
    for (const answer of answers) {
      assert.equal(answer.error, undefined, JSON.stringify(answer.error));
    }
    for (const answer of answers.filter((a) => (a.result as { state?: string }).state)) {
      assert.deepEqual(answer.result, ALICE_AUTHENTICATED);
    }
    assert.deepEqual(await vaultSummaries(home), before);
    assert.equal(idp.stats.byGrant.refresh_token?.success ?? 0, refreshesBefore);
    assert.equal(agent.notifications().length, updatesBefore, "a status query announces nothing");
  },
);

test(
  "[ACP-api-key] authenticate api-key stores the key, reports it, and refuses bad, missing and oversized keys with −32602",
  TIMEOUT,
  async (t) => {
    const home = tempDir();
    const agent = startAgent(t, { issuer: idp.issuer, home });
    await initializeV1(agent);
    const good = `echo-${crypto.randomUUID()}`;
    const refused = `nope-${crypto.randomUUID()}`;
    const huge = `echo-${"k".repeat(100 * 1024)}`;

    const apiKey = (key: string) => ({
      methodId: "api-key",
      _meta: { "api-key": { apiKey: key } },
    });
    assertRpcError(await agent.request("authenticate", apiKey(refused)), -32602);
    assertRpcError(await agent.request("authenticate", { methodId: "api-key" }), -32602);
    assertRpcError(await agent.request("authenticate", { methodId: "api-key", _meta: {} }), -32602);
    // A plain string is read too (gemini-cli's shape, [ACP-apikey-meta-string]); the key in it is still checked.
    assertRpcError(
      await agent.request("authenticate", { methodId: "api-key", _meta: { "api-key": refused } }),
      -32602,
    );
    assertRpcError(
      await agent.request("authenticate", { methodId: "api-key", _meta: { "api-key": 42 } }),
      -32602,
    );
    assertRpcError(await agent.request("authenticate", apiKey("")), -32602);
    assertRpcError(await agent.request("authenticate", apiKey(huge)), -32602);
    assertResult(await agent.request("auth/status", {}), UNAUTHENTICATED);
    assert.deepEqual(await vaultSummaries(home), [], "a refused key is not stored");

    const from = agent.mark();
    const accepted = await agent.request("authenticate", apiKey(good));
    assertResult(accepted, {});
    const keyAccount = {
      state: "authenticated",
      accounts: [{ label: "Echo API key", active: true }],
    };
    const update = await agent.notification("auth/status_update", from);
    assert.deepEqual(update.params, keyAccount);
    assert.ok(agent.messages.indexOf(update) < agent.messages.indexOf(accepted));
    assertResult(await agent.request("auth/status", {}), keyAccount);
    const session = await agent.request("session/new", newSessionParams(home));
    assert.equal(session.error, undefined);

    // Stored, so a new agent process on the same vault starts authenticated.
    await agent.close();
    const again = startAgent(t, { issuer: idp.issuer, home });
    await initializeV1(again);
    assertResult(await again.request("auth/status", {}), keyAccount);

    for (const peer of [agent, again]) {
      assertNotPrinted(peer, good, "the accepted API key");
      assertNotPrinted(peer, refused, "the refused API key");
      assertNotPrinted(peer, huge.slice(0, 64), "the oversized API key");
    }
  },
);

test(
  "[ACP-env-credentials] a key in the environment counts as configured, and survives logout (honest status)",
  TIMEOUT,
  async (t) => {
    const home = tempDir();
    const agent = startAgent(t, {
      issuer: idp.issuer,
      home,
      env: { AGENTAUTH_EXAMPLE_API_KEY: "echo-env" },
    });
    await initializeV1(agent);
    const fromEnv = {
      state: "authenticated",
      accounts: [{ label: "$AGENTAUTH_EXAMPLE_API_KEY", active: true }],
    };
    assertResult(await agent.request("auth/status", {}), fromEnv);
    const state = await agent.request("getAuthState", {});
    assertResult(state, {
      authenticated: true,
      message: "Credentials are configured.",
      authMethods: [
        { authMethodId: "oauth", authenticated: false, message: "Not configured." },
        {
          authMethodId: "api-key",
          authenticated: true,
          message: "Configured through an environment variable.",
        },
      ],
    });
    assert.match(
      (state.result as { authMethods: { message: string }[] }).authMethods[1]?.message ?? "",
      /environment/,
    );
    assert.equal((await agent.request("session/new", newSessionParams(home))).error, undefined);

    // Logout cannot unset the agent's environment: the status stays authenticated, and says so.
    assertResult(await agent.request("logout", {}), {});
    assertResult(await agent.request("auth/status", {}), fromEnv);
    assert.equal((await agent.request("session/new", newSessionParams(home))).error, undefined);
    assert.deepEqual(agent.notifications("auth/status_update"), []);
    assert.deepEqual(await vaultSummaries(home), []);
    assertNotPrinted(agent, "echo-env", "the environment API key");
  },
);

test(
  "[ACP-env-oauth-token] an OAuth token in $AGENTAUTH_EXAMPLE_TOKEN counts as configured without any login",
  TIMEOUT,
  async (t) => {
    const home = tempDir();
    const token = `env-token-${crypto.randomUUID()}`;
    const agent = startAgent(t, {
      issuer: idp.issuer,
      home,
      env: { AGENTAUTH_EXAMPLE_TOKEN: token },
    });
    await initializeV1(agent);
    assertResult(await agent.request("auth/status", {}), {
      state: "authenticated",
      accounts: [{ label: "$AGENTAUTH_EXAMPLE_TOKEN", active: true }],
    });
    const state = (await agent.call("getAuthState", {})) as { authMethods: unknown[] };
    assert.deepEqual(state.authMethods[0], {
      authMethodId: "oauth",
      authenticated: true,
      message: "Configured through an environment variable.",
    });
    assert.equal((await agent.request("session/new", newSessionParams(home))).error, undefined);
    assertNotPrinted(agent, token, "the environment token");
  },
);

test(
  "[ACP-no-token-output] over a full run no access, refresh or id token appears on the agent's stdout or stderr",
  TIMEOUT,
  async (t) => {
    const home = tempDir();
    const agent = startAgent(t, { issuer: idp.issuer, home });
    await initializeV1(agent, { auth: { terminal: true } });
    await agent.call("auth/status", {});
    assertResult((await oauthLogin(agent)).response, {});
    const [tokens] = await vaultTokens(home);
    const values = [tokens?.accessToken, tokens?.refreshToken, tokens?.idToken].map((s) =>
      s?.reveal(),
    );
    assert.ok(values[0] && values[1] && values[2], "the vault holds access, refresh and id tokens");
    await agent.call("auth/status", {});
    await agent.call("getAuthState", {});
    const { sessionId } = (await agent.call("session/new", newSessionParams(home))) as {
      sessionId: string;
    };
    await agent.call("session/prompt", promptParams(sessionId, "anything secret?"));
    await agent.call("logout", {});
    await agent.call("auth/status", {});
    await agent.close();
    for (const [i, value] of values.entries()) {
      assertNotPrinted(
        agent,
        value as string,
        ["the access token", "the refresh token", "the id token"][i] as string,
      );
    }
    assert.deepEqual(agent.garbage, [], "stdout carried only JSON-RPC messages");
  },
);
