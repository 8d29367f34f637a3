import assert from "node:assert/strict";
import { test } from "node:test";
import { Secret } from "../../src/core/index.ts";
import { REGISTRATION_SUBJECT } from "../../src/oauth/index.ts";
import { OAuthMessageSchema } from "../../src/rap/wire.ts";
import { MemoryCredentialStore } from "../../src/vault/index.ts";
import { callbackSink, type Message } from "../support/callback-sink.ts";
import { useIdp } from "../support/idp.ts";
import { invocation, post, startTool } from "./tool-fixture.ts";
import {
  authorize,
  oauthOperations,
  person,
  providers,
  providerUrl,
  RAP_TOOL_CLIENT,
  SCOPE,
} from "./tool-oauth-fixture.ts";

const idp = await useIdp({ clients: [RAP_TOOL_CLIENT] });
const sink = await callbackSink();
const store = new MemoryCredentialStore();
const { tool, url } = await startTool({
  operations: oauthOperations(idp),
  providers: providers(idp),
  store,
});
const invoke = `${url}/invoke`;

function grants(type: string): { success: number; error: number } {
  return idp.stats.byGrant[type] ?? { success: 0, error: 0 };
}

/** Invokes and waits for the call's first message. */
async function call(
  fields: Record<string, unknown>,
): Promise<{ body: Record<string, unknown>; first: Message }> {
  const body = invocation(sink.url, { operation: "whoami", arguments: {}, ...fields });
  assert.equal((await post(invoke, body)).status, 200);
  return { body, first: await sink.waitFor((m) => m.id === body.id) };
}

async function authorizedUser(userId: string): Promise<void> {
  const { body, first } = await call({ user_id: userId });
  assert.equal(first.type, "oauth");
  await authorize(String(first.auth_url));
  await sink.waitFor((m) => m.id === body.id && m.type === "tool_result");
}

test("[RAP-oauth-flow] no token: an oauth message with a PKCE S256 URL; after the redirect, the retried result", async () => {
  const codeGrants = grants("authorization_code").success;
  const { body, first } = await call({
    user_id: "u-alice",
    call_id: "secondary",
    group_id: "thread_oauth",
  });
  assert.deepEqual(Object.keys(first).sort(), ["auth_url", "call_id", "group_id", "id", "type"]);
  assert.ok(OAuthMessageSchema.safeParse(first).success);
  assert.equal(first.group_id, "thread_oauth");
  assert.equal(first.call_id, "secondary", "call_id is echoed");
  const consentUrl = new URL(String(first.auth_url));
  assert.equal(
    consentUrl.origin,
    new URL(url).origin,
    "auth_url leads to the tool's consent page first",
  );
  assert.equal(consentUrl.pathname, "/oauth/start");
  assert.ok(!consentUrl.searchParams.has("state"), "the provider's state is not in auth_url");
  const authUrl = await providerUrl(consentUrl.href);
  assert.equal(
    authUrl.origin,
    idp.issuer,
    "the provider's own authorization endpoint (loopback http is allowed)",
  );
  assert.equal(authUrl.searchParams.get("code_challenge_method"), "S256");
  assert.match(authUrl.searchParams.get("code_challenge") ?? "", /^[A-Za-z0-9_-]{43}$/);
  assert.ok((authUrl.searchParams.get("state") ?? "").length >= 43, "256-bit state");
  assert.equal(authUrl.searchParams.get("redirect_uri"), `${url}/oauth/callback`);
  assert.equal(authUrl.searchParams.get("client_id"), "rap-tool");
  assert.equal(authUrl.searchParams.get("scope"), SCOPE);
  assert.equal(sink.forCall(String(body.id)).length, 1, "no tool_result yet: the call is pending");

  const landed = await authorize(authUrl.href);
  assert.equal(landed.status, 200);
  assert.match(landed.page, /return to your conversation/);
  const result = await sink.waitFor((m) => m.id === body.id && m.type === "tool_result");
  assert.equal(result.text, "signed in as alice (Alice Liddell)");
  assert.equal(result.call_id, "secondary");
  assert.equal(grants("authorization_code").success, codeGrants + 1);
  const record = await store.get({ subject: "u-alice", issuer: idp.issuer, resource: "" });
  assert.ok(record?.tokens.accessToken, "the token is stored under the RAP user_id");
  assert.equal(record?.clientId, "rap-tool");
});

test("[RAP-oauth-token-reuse] the same user needs no authorization again; another user does", async () => {
  await authorizedUser("u-carol");
  const codeGrants = grants("authorization_code").success;
  const again = await call({ user_id: "u-carol" });
  assert.equal(again.first.type, "tool_result");
  assert.equal(again.first.text, "signed in as alice (Alice Liddell)");
  assert.equal(grants("authorization_code").success, codeGrants, "no new authorization");
  const other = await call({ user_id: "u-dave" });
  assert.equal(other.first.type, "oauth", "tokens are per user_id");
});

test("[RAP-oauth-refresh-expired-token] an expired token is refreshed (once) instead of asking the person again", async () => {
  await authorizedUser("u-erin");
  const key = { subject: "u-erin", issuer: idp.issuer, resource: "" };
  const record = await store.get(key);
  assert.ok(record);
  const { id: _id, version: _v, createdAt: _c, updatedAt: _u, ...input } = record;
  await store.put({ ...input, expiresAt: Date.now() - 1000 });
  idp.resetStats();
  const { first } = await call({ user_id: "u-erin" });
  assert.equal(first.type, "tool_result");
  assert.equal(first.text, "signed in as alice (Alice Liddell)");
  assert.equal(grants("refresh_token").success, 1);
  assert.equal(grants("authorization_code").success, 0);
  const refreshed = await store.get(key);
  assert.ok((refreshed?.expiresAt ?? 0) > Date.now(), "the vault holds the new expiry");
  assert.notEqual(
    refreshed?.tokens.refreshToken?.reveal(),
    record.tokens.refreshToken?.reveal(),
    "rotated",
  );
});

test("[RAP-oauth-login-required] a credential marked login_required starts a new authorization", async () => {
  await authorizedUser("u-frank");
  const record = await store.get({ subject: "u-frank", issuer: idp.issuer, resource: "" });
  assert.ok(record);
  const { id: _id, version: _v, createdAt: _c, updatedAt: _u, ...input } = record;
  await store.put({ ...input, status: "login_required" });
  const { first } = await call({ user_id: "u-frank" });
  assert.equal(first.type, "oauth");
});

test("[RAP-oauth-no-user-id] an operation that needs OAuth, invoked without user_id, gets an explaining error", async () => {
  for (const userId of [undefined, null]) {
    const { first } = await call({ user_id: userId });
    assert.equal(first.type, "tool_result");
    assert.match(
      String(first.text),
      /^Error: whoami needs access to Demo ID on behalf of a user, but the invocation carries no user_id/,
    );
  }
  const open = await call({ operation: "public_echo", user_id: undefined });
  assert.equal(open.first.text, "public", "operations without requiresAuth do not need user_id");
});

test("[RAP-oauth-reserved-user-id] a user_id in agentauth's namespace (agentauth:…, where client registrations live) is refused at intake with an error tool_result, for every operation: no oauth message, nothing stored; disconnect refuses it too", async () => {
  for (const userId of [REGISTRATION_SUBJECT, "agentauth:client:https://mcp.example/"]) {
    for (const operation of ["whoami", "public_echo"]) {
      const { first } = await call({ operation, user_id: userId });
      assert.equal(
        first.type,
        "tool_result",
        `${operation} as ${userId}: ${JSON.stringify(first)}`,
      );
      assert.match(
        String(first.text),
        /^Error: The invocation's user_id starts with "agentauth:", which is kept for agentauth's own vault records/,
      );
    }
  }
  assert.equal(
    (await store.list()).filter((c) => c.subject.startsWith("agentauth:")).length,
    0,
    "nothing filed under the reserved namespace",
  );
  // A record of agentauth's own under that namespace is not the tool's to revoke or delete.
  const own = await store.put({
    subject: "agentauth:kept",
    issuer: idp.issuer,
    resource: "",
    clientId: RAP_TOOL_CLIENT.client_id,
    tokens: { accessToken: new Secret("kept-access-token-0123456789"), tokenType: "bearer" },
    scopes: [],
    account: {},
    status: "active",
  });
  await assert.rejects(tool.disconnect("agentauth:kept", "demo"), { code: "invalid_subject" });
  assert.ok(await store.getById(own.id), "still there");
  await store.deleteById(own.id);
});

test("[RAP-oauth-state-csrf-forged] a forged or missing state is refused with a 400 page; nothing is exchanged or sent", async () => {
  const { body, first } = await call({ user_id: "u-grace" });
  const genuine = await providerUrl(String(first.auth_url));
  const before = { ...grants("authorization_code") };
  const messages = sink.messages.length;
  for (const query of [
    "code=abc&state=forged-state-value",
    "code=abc",
    `code=abc&state=${genuine.searchParams.get("state")?.slice(0, -1)}x`,
    "error=access_denied&state=",
    `state=${"a".repeat(5000)}`,
  ]) {
    const response = await person.fetch(`${url}/oauth/callback?${query}`);
    assert.equal(response.status, 400, query);
    assert.match(response.headers.get("content-type") ?? "", /^text\/html/);
    assert.equal(response.headers.get("referrer-policy"), "no-referrer");
    assert.match(await response.text(), /not valid/);
  }
  assert.deepEqual(grants("authorization_code"), before, "no code exchange");
  await tool.settled();
  assert.equal(sink.messages.length, messages, "no callback");
  // The genuine authorization still works afterwards.
  await authorize(genuine.href);
  assert.equal(
    (await sink.waitFor((m) => m.id === body.id && m.type === "tool_result")).text,
    "signed in as alice (Alice Liddell)",
  );
});

test("[RAP-oauth-state-replayed] replaying a used redirect is refused: no second exchange, no second result", async () => {
  const { body, first } = await call({ user_id: "u-heidi" });
  const { redirect } = await authorize(String(first.auth_url));
  await sink.waitFor((m) => m.id === body.id && m.type === "tool_result");
  const before = { ...grants("authorization_code") };
  const replay = await person.fetch(redirect);
  assert.equal(replay.status, 400);
  await replay.arrayBuffer();
  await tool.settled();
  assert.deepEqual(grants("authorization_code"), before);
  assert.equal(sink.forCall(String(body.id)).length, 2, "oauth + one tool_result, nothing more");
});

test("[RAP-oauth-denied] access_denied on the redirect (valid state) ends the call with an actionable error", async () => {
  const { body, first } = await call({ user_id: "u-ivan" });
  const state = (await providerUrl(String(first.auth_url))).searchParams.get("state") ?? "";
  const before = { ...grants("authorization_code") };
  const query = new URLSearchParams({ error: "access_denied", state, iss: idp.issuer });
  const response = await person.fetch(`${url}/oauth/callback?${query}`);
  assert.equal(response.status, 200);
  assert.match(await response.text(), /was not granted/);
  const result = await sink.waitFor((m) => m.id === body.id && m.type === "tool_result");
  assert.equal(
    result.text,
    "Error: Demo ID authorization was denied by the user. To use whoami, ask again and grant the requested permissions.",
  );
  assert.deepEqual(grants("authorization_code"), before, "nothing exchanged");
  assert.equal(await store.get({ subject: "u-ivan", issuer: idp.issuer, resource: "" }), undefined);
});

test("[RAP-oauth-exchange-failed] a valid state with a bogus code: the exchange fails, the call ends with an error", async () => {
  const { body, first } = await call({ user_id: "u-judy" });
  const state = (await providerUrl(String(first.auth_url))).searchParams.get("state") ?? "";
  const errorsBefore = grants("authorization_code").error;
  const query = new URLSearchParams({ code: "bogus-code", state, iss: idp.issuer });
  const response = await person.fetch(`${url}/oauth/callback?${query}`);
  assert.equal(response.status, 400);
  assert.match(await response.text(), /did not complete/);
  const result = await sink.waitFor((m) => m.id === body.id && m.type === "tool_result");
  assert.equal(
    result.text,
    "Error: Signing in to Demo ID did not complete (the sign-in code was invalid or had expired). Ask again to get a new sign-in link.",
  );
  assert.equal(
    grants("authorization_code").error,
    errorsBefore + 1,
    "the server refused the exchange",
  );
});

test("[RAP-oauth-iss-mismatch] a redirect naming another issuer (mix-up) ends the call with an error", async () => {
  const { body, first } = await call({ user_id: "u-kim" });
  const state = (await providerUrl(String(first.auth_url))).searchParams.get("state") ?? "";
  const query = new URLSearchParams({ code: "x", state, iss: "https://evil.example" });
  const response = await person.fetch(`${url}/oauth/callback?${query}`);
  assert.equal(response.status, 400);
  await response.arrayBuffer();
  const result = await sink.waitFor((m) => m.id === body.id && m.type === "tool_result");
  assert.match(
    String(result.text),
    /^Error: Signing in to Demo ID did not complete \(the response came from an unexpected server\)/,
  );
});

test("[RAP-oauth-cancel-pending] a cancelled pending authorization sends nothing, and its link stops working", async () => {
  const { body, first } = await call({ user_id: "u-leo", group_id: "thread_cancel_oauth" });
  await post(`${url}/cancel_tool_call`, {
    thread_id: "thread_cancel_oauth",
    tool_call_id: body.id,
  });
  const before = { ...grants("authorization_code") };
  const landed = await authorize(String(first.auth_url));
  assert.equal(landed.status, 400);
  await tool.settled();
  assert.deepEqual(grants("authorization_code"), before, "no exchange for a cancelled call");
  assert.equal(sink.forCall(String(body.id)).length, 1, "only the oauth message");
});

test("[RAP-oauth-one-authorization-many-calls] one authorization resumes every call of that user waiting on it", async () => {
  const a = await call({ user_id: "u-mia" });
  const b = await call({ user_id: "u-mia" });
  assert.equal(a.first.type, "oauth");
  assert.equal(b.first.type, "oauth");
  await authorize(String(b.first.auth_url));
  for (const { body } of [a, b]) {
    const result = await sink.waitFor((m) => m.id === body.id && m.type === "tool_result");
    assert.equal(result.text, "signed in as alice (Alice Liddell)");
  }
  const stale = await authorize(String(a.first.auth_url));
  assert.equal(stale.status, 400, "the other link has nothing left to do");
  await tool.settled();
  assert.equal(sink.forCall(String(a.body.id)).length, 2);
});

test("[RAP-oauth-token-rejected] a token the API refuses is refreshed once, then re-authorized once, then an error", async () => {
  await authorizedUser("u-nina");
  idp.resetStats();
  const { body, first } = await call({ user_id: "u-nina", operation: "always_rejected" });
  assert.equal(first.type, "oauth", "refresh did not help, so the person is asked again");
  assert.equal(grants("refresh_token").success, 1);
  await authorize(String(first.auth_url));
  const result = await sink.waitFor((m) => m.id === body.id && m.type === "tool_result");
  assert.equal(
    result.text,
    "Error: Demo ID refused access even after you authorized. Check that your account may use always_rejected, then ask again.",
  );
});
