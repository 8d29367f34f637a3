/**
 * How a pending OAuth login inside `authenticate` reaches the person and how it ends early: URL-mode elicitation
 * (accept, decline) for clients that offer it, `$/cancel_request`, and concurrent authenticate requests.
 */

import assert from "node:assert/strict";
import { test } from "node:test";
import { useIdp } from "../support/idp.ts";
import { tempDir } from "../support/tmp.ts";
import {
  assertResult,
  assertRpcError,
  initializeV1,
  newSessionParams,
  openInBrowser,
  startAgent,
  vaultSummaries,
} from "./fixtures/agent-process.ts";

const idp = await useIdp();
const TIMEOUT = { timeout: 30_000 };
const URL_ELICITATION = { elicitation: { url: {} } };
const UNAUTHENTICATED = { state: "unauthenticated", accounts: [] };

interface UrlElicitation {
  mode: string;
  requestId: number;
  elicitationId: string;
  url: string;
  message: string;
}

test(
  "[ACP-elicitation-url] with URL elicitation the agent asks through elicitation/create tied to the authenticate request; accept + open completes the login",
  TIMEOUT,
  async (t) => {
    const home = tempDir();
    const agent = startAgent(t, { issuer: idp.issuer, home });
    await initializeV1(agent, URL_ELICITATION);
    const from = agent.mark();
    const authId = agent.nextId();
    const pending = agent.request("authenticate", { methodId: "oauth" }, authId);
    const request = await agent.waitFor(
      (m) => m.method === "elicitation/create",
      "elicitation/create",
      from,
    );

    assert.equal(typeof request.id, "number", "elicitation/create is a request (it has an id)");
    const params = request.params as UrlElicitation;
    const code = new URL(params.url).searchParams.get("user_code");
    assert.deepEqual(request, {
      jsonrpc: "2.0",
      id: request.id,
      method: "elicitation/create",
      params: {
        mode: "url",
        requestId: authId,
        elicitationId: params.elicitationId,
        url: `${idp.issuer}/device?user_code=${code}`,
        message: `To sign in at ${new URL(idp.issuer).host}, open ${idp.issuer}/device and enter the code ${code}.`,
      },
    });
    assert.match(params.elicitationId, /^[0-9a-f-]{36}$/);
    // The client offered elicitation, so our extension notification is not needed.
    assert.deepEqual(agent.notifications("_agentauth/login_prompt"), []);

    agent.respond(request.id as number, { action: "accept" });
    await openInBrowser(params.url);
    assertResult(await pending, {});
    assert.equal(
      ((await agent.call("auth/status", {})) as { state: string }).state,
      "authenticated",
    );
    assert.equal((await agent.request("session/new", newSessionParams(home))).error, undefined);
  },
);

test(
  "[ACP-elicitation-decline] declining the URL elicitation ends the login with an error; the agent keeps serving and stores nothing",
  TIMEOUT,
  async (t) => {
    const home = tempDir();
    const agent = startAgent(t, { issuer: idp.issuer, home });
    await initializeV1(agent, URL_ELICITATION);
    agent.handle("elicitation/create", () => ({ action: "decline" }));
    const response = await agent.request("authenticate", { methodId: "oauth" });
    assert.equal(response.result, undefined);
    assert.ok(response.error, "authenticate failed");
    assertResult(await agent.request("auth/status", {}), UNAUTHENTICATED);
    assert.deepEqual(await vaultSummaries(home), []);
    assert.deepEqual(agent.notifications("auth/status_update"), []);
  },
);

test("[ACP-elicitation-decline-cancelled] a declined login answers −32800 (request cancelled), not auth_required", {
  ...TIMEOUT,
}, async (t) => {
  const agent = startAgent(t, { issuer: idp.issuer, home: tempDir() });
  await initializeV1(agent, URL_ELICITATION);
  agent.handle("elicitation/create", () => ({ action: "decline" }));
  assertRpcError(await agent.request("authenticate", { methodId: "oauth" }), -32800);
});

test(
  "[ACP-elicitation-cancel-action] an elicitation answered with action cancel ends the login; the agent keeps serving",
  TIMEOUT,
  async (t) => {
    const home = tempDir();
    const agent = startAgent(t, { issuer: idp.issuer, home });
    await initializeV1(agent, URL_ELICITATION);
    agent.handle("elicitation/create", () => ({ action: "cancel" }));
    const response = await agent.request("authenticate", { methodId: "oauth" });
    assert.ok(response.error, "authenticate failed");
    assertResult(await agent.request("auth/status", {}), UNAUTHENTICATED);
    assert.deepEqual(await vaultSummaries(home), []);
  },
);

test(
  "[ACP-cancel-request] $/cancel_request ends a pending oauth authenticate with −32800; the agent keeps serving and can log in again",
  TIMEOUT,
  async (t) => {
    const home = tempDir();
    const agent = startAgent(t, { issuer: idp.issuer, home });
    await initializeV1(agent);
    const from = agent.mark();
    const authId = agent.nextId();
    const pending = agent.request("authenticate", { methodId: "oauth" }, authId);
    await agent.notification("_agentauth/login_prompt", from);
    agent.notify("$/cancel_request", { requestId: authId });
    const response = await pending;
    assertRpcError(response, -32800, /^Request cancelled/);
    assertResult(await agent.request("auth/status", {}), UNAUTHENTICATED);
    assert.deepEqual(await vaultSummaries(home), []);

    // The cancelled login no longer blocks a new one.
    const again = agent.mark();
    const retry = agent.request("authenticate", { methodId: "oauth" });
    const prompt = await agent.notification("_agentauth/login_prompt", again);
    await openInBrowser((prompt.params as { url: string }).url);
    assertResult(await retry, {});
    assert.equal(
      ((await agent.call("auth/status", {})) as { state: string }).state,
      "authenticated",
    );
  },
);

test(
  "[ACP-authenticate-join] a second authenticate for the same method while one runs joins it: one prompt, both answer {}",
  TIMEOUT,
  async (t) => {
    const agent = startAgent(t, { issuer: idp.issuer, home: tempDir() });
    await initializeV1(agent);
    const from = agent.mark();
    const first = agent.request("authenticate", { methodId: "oauth" });
    const prompt = await agent.notification("_agentauth/login_prompt", from);
    const second = agent.request("authenticate", { methodId: "oauth" });
    // auth/status answers while a login is pending: the login does not block the connection.
    assertResult(await agent.request("auth/status", {}), UNAUTHENTICATED);
    await openInBrowser((prompt.params as { url: string }).url);
    assertResult(await first, {});
    assertResult(await second, {});
    assert.equal(agent.notifications("_agentauth/login_prompt").length, 1);
    assert.equal(agent.notifications("auth/status_update").length, 1);
  },
);

test("[ACP-cancel-request-joined] cancelling the first of two joined authenticate requests does not fail the second", {
  ...TIMEOUT,
}, async (t) => {
  const agent = startAgent(t, { issuer: idp.issuer, home: tempDir() });
  await initializeV1(agent);
  const from = agent.mark();
  const firstId = agent.nextId();
  const first = agent.request("authenticate", { methodId: "oauth" }, firstId);
  const prompt = await agent.notification("_agentauth/login_prompt", from);
  const second = agent.request("authenticate", { methodId: "oauth" });
  await agent.request("auth/status", {});
  agent.notify("$/cancel_request", { requestId: firstId });
  assertRpcError(await first, -32800);
  await openInBrowser((prompt.params as { url: string }).url);
  assertResult(await second, {});
});

test(
  "[ACP-oauth-login-unreachable] authenticate against an unreachable issuer fails with auth_required and a reason; the agent keeps serving",
  TIMEOUT,
  async (t) => {
    const home = tempDir();
    // Port 1 on loopback: nothing listens, the connection is refused at once.
    const agent = startAgent(t, { issuer: "http://127.0.0.1:1", home });
    await initializeV1(agent);
    const response = await agent.request("authenticate", { methodId: "oauth" });
    assertRpcError(response, -32000, /^Authentication required: .*network/);
    assert.deepEqual(response.error?.data, { reason: "network_error" });
    assertResult(await agent.request("auth/status", {}), UNAUTHENTICATED);
    assert.deepEqual(await vaultSummaries(home), []);
  },
);

test("[ACP-elicitation-error-fallback] when the client answers elicitation/create with an error, the person still gets the URL (login prompt) or authenticate fails", {
  // Bounded wait: a fallback or a failure comes within milliseconds, a silent login waits for its 10-minute
  // timeout. The bound is far from both (a loaded machine needs seconds just to start the agent): not a timing test.
  timeout: 60_000,
}, async (t) => {
  const agent = startAgent(t, { issuer: idp.issuer, home: tempDir() });
  await initializeV1(agent, URL_ELICITATION);
  agent.handle("elicitation/create", () => ({
    error: { code: -32603, message: "cannot show URLs right now" },
  }));
  const pending = agent.request("authenticate", { methodId: "oauth" });
  const first = await Promise.race([pending, agent.notification("_agentauth/login_prompt")]);
  if (first.method === "_agentauth/login_prompt") {
    await openInBrowser((first.params as { url: string }).url);
    assertResult(await pending, {});
  } else {
    assert.ok(
      first.error,
      "authenticate failed instead of waiting for a person who never saw the URL",
    );
  }
});

test("[ACP-logout-cancels-pending-login] logout while an oauth authenticate is pending ends that login; approving it afterwards signs nobody in", {
  ...TIMEOUT,
}, async (t) => {
  const home = tempDir();
  const agent = startAgent(t, { issuer: idp.issuer, home });
  await initializeV1(agent);
  const from = agent.mark();
  const pending = agent.request("authenticate", { methodId: "oauth" });
  const prompt = await agent.notification("_agentauth/login_prompt", from);
  assertResult(await agent.request("logout", {}), {});
  await openInBrowser((prompt.params as { url: string }).url);
  const response = await pending;
  assert.ok(response.error, `the pending authenticate was ended, got ${JSON.stringify(response)}`);
  assertResult(await agent.request("auth/status", {}), UNAUTHENTICATED);
  assert.deepEqual(await vaultSummaries(home), []);
});
