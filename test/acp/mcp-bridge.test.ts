/**
 * The ACP bridge end to end (issue 12 §3): a real agent process built with the kit, the real ACP SDK client over
 * its stdio, a real `@modelcontextprotocol/server` behind OAuth (test/mcp/fixtures/protected-mcp-server.ts) and
 * the embedded authorization server. session/new with mcpServers → auth/status says which need a sign-in → the
 * person signs in through the client (URL elicitation, or the session's text) → the agent's MCP tool call works →
 * auth/status says signed in; and the token never crosses ACP.
 */

import assert from "node:assert/strict";
import { test } from "node:test";
import * as acp from "@agentclientprotocol/sdk/unstable";
import { startProtectedMcpServer } from "../mcp/fixtures/protected-mcp-server.ts";
import { useIdp } from "../support/idp.ts";
import { tempDir } from "../support/tmp.ts";
import { vaultSummaries, vaultTokens } from "./fixtures/agent-process.ts";
import { mcpServers, prompt, withMcpAgent } from "./fixtures/mcp-agent-process.ts";
import {
  assertNoTokenCrossedAcp,
  assertRefreshRefused,
  authStatus,
  httpServer,
  newSession,
  withFixtureSession,
} from "./fixtures/mcp-session.ts";

const idp = await useIdp();

test("[ACP-mcp-elicitation-journey] session/new with an OAuth MCP server: needs sign-in, URL elicitation, the tool call succeeds, signed in; no token on ACP", {
  timeout: 60_000,
}, async (t) => {
  const home = tempDir();
  const mcp = await startProtectedMcpServer({ issuer: idp.issuer });
  await withMcpAgent(t, { home, issuer: idp.issuer, elicitation: "accept" }, async (run) => {
    const sessionId = await newSession(run, home, [
      httpServer("fixture", mcp.url),
      { name: "local-tool", command: "/bin/true", args: [], env: [] },
    ]);
    const before = await run.waitForStatus((s) => s[0]?.state === "needs_sign_in");
    assert.equal(
      before.state,
      "authenticated",
      "the agent's own state is unchanged by its MCP servers",
    );
    assert.deepEqual(mcpServers(before), [
      {
        name: "fixture",
        url: mcp.url,
        transport: "http",
        state: "needs_sign_in",
        scopes: ["read"],
      },
    ]);
    assert.equal(
      before.accounts.find((a) => a._meta?.agentauth?.mcpServer)?.label,
      "MCP server “fixture”: needs sign-in",
    );
    assert.equal(run.elicitations.length, 0, "the probe never asks the person");

    const answer = await prompt(run, sessionId, "call fixture whoami");

    assert.deepEqual(answer, ["hello"]);
    assert.equal(mcp.stats.toolCalls, 1);
    assert.equal(run.elicitations.length, 1);
    const asked = run.elicitations[0] as Record<string, string>;
    assert.equal(asked.mode, "url");
    assert.equal(asked.sessionId, sessionId, "the elicitation is scoped to the session");
    assert.ok(asked.url?.startsWith(`${idp.issuer}`), "the URL is the authorization server's");
    assert.equal(new URL(asked.url as string).searchParams.get("resource"), mcp.url);
    assert.match(asked.message ?? "", /sign in to the MCP server “fixture”/);
    assert.deepEqual(run.completions, [{ elicitationId: asked.elicitationId }]);

    const after = await run.waitForStatus((s) => s[0]?.state === "signed_in");
    const signedIn = mcpServers(after)[0];
    assert.ok(signedIn?.scopes.includes("read"), `granted scopes listed: ${signedIn?.scopes}`);
    assert.ok(
      run.statusUpdates.some((u) => mcpServers(u)[0]?.state === "signed_in"),
      "auth/status_update announced the sign-in",
    );
    const stored = (await vaultSummaries(home)).filter((r) => r.resource === mcp.url);
    assert.equal(stored.length, 1);
    assert.equal(stored[0]?.subject, "acp-agent:mcp-agent");
    assert.equal(stored[0]?.issuer, idp.issuer);

    // A second call uses the stored token: no new sign-in.
    assert.deepEqual(await prompt(run, sessionId, "call fixture whoami"), ["hello"]);
    assert.equal(run.elicitations.length, 1);
    await assertNoTokenCrossedAcp(run, home);
  });
});

test("[ACP-mcp-prompt-path] a client without URL elicitation: the sign-in link comes as the session's text, then the tool call succeeds", {
  timeout: 60_000,
}, async (t) => {
  await withFixtureSession(
    t,
    { issuer: idp.issuer, elicitation: false },
    async ({ run, sessionId, home }) => {
      await run.waitForStatus((s) => s[0]?.state === "needs_sign_in");
      const answer = await prompt(run, sessionId, "call fixture whoami");
      assert.equal(answer.length, 2, `a sign-in message, then the tool's answer: ${answer}`);
      assert.match(answer[0] ?? "", /sign in to the MCP server “fixture”.* Open http/);
      assert.equal(answer[1], "hello");
      assert.equal(run.elicitations.length, 0);
      await run.waitForStatus((s) => s[0]?.state === "signed_in");
      await assertNoTokenCrossedAcp(run, home);
    },
  );
});

test("[ACP-mcp-decline] a declined elicitation: typed sign_in_declined, the server stays unauthenticated, the session goes on", {
  timeout: 60_000,
}, async (t) => {
  await withFixtureSession(
    t,
    { issuer: idp.issuer, elicitation: "decline" },
    async ({ run, sessionId, mcp, home }) => {
      assert.deepEqual(await prompt(run, sessionId, "call fixture whoami"), [
        "error: sign_in_declined",
      ]);
      assert.equal(run.elicitations.length, 1);
      assert.equal(mcp.stats.toolCalls, 0);
      const status = await run.waitForStatus((s) => s[0]?.error?.code === "sign_in_declined");
      assert.equal(mcpServers(status)[0]?.state, "needs_sign_in");
      assert.deepEqual(
        (await vaultSummaries(home)).filter((r) => r.resource === mcp.url),
        [],
        "nothing stored",
      );
      assert.deepEqual(await prompt(run, sessionId, "still there?"), ["echo: still there?"]);
      assert.deepEqual(run.completions, [], "no elicitation/complete for a declined sign-in");
    },
  );
});

test("[ACP-mcp-cancel] a cancelled elicitation: typed sign_in_cancelled", {
  timeout: 60_000,
}, async (t) => {
  await withFixtureSession(
    t,
    { issuer: idp.issuer, elicitation: "cancel" },
    async ({ run, sessionId }) => {
      assert.deepEqual(await prompt(run, sessionId, "call fixture whoami"), [
        "error: sign_in_cancelled",
      ]);
      const status = await run.waitForStatus((s) => s[0]?.error?.code === "sign_in_cancelled");
      assert.equal(mcpServers(status)[0]?.state, "needs_sign_in");
    },
  );
});

test("[ACP-mcp-elicitation-error-fallback] a client that advertised URL elicitation but answers it with an error gets the link in the session", {
  timeout: 60_000,
}, async (t) => {
  await withFixtureSession(
    t,
    { issuer: idp.issuer, elicitation: "error" },
    async ({ run, sessionId }) => {
      const answer = await prompt(run, sessionId, "call fixture whoami");
      assert.equal(run.elicitations.length, 1, "elicitation was tried first");
      assert.match(answer[0] ?? "", /sign in to the MCP server “fixture”.* Open http/);
      assert.equal(answer[1], "hello");
      assert.deepEqual(
        run.completions,
        [],
        "no elicitation/complete for an elicitation that failed",
      );
    },
  );
});

test("[ACP-mcp-logout] the agent's logout also signs it out of its MCP servers: the vault forgets them, the next call asks again", {
  timeout: 60_000,
}, async (t) => {
  await withFixtureSession(
    t,
    { issuer: idp.issuer, elicitation: "accept" },
    async ({ run, sessionId, mcp, home }) => {
      assert.deepEqual(await prompt(run, sessionId, "call fixture whoami"), ["hello"]);
      const [summary] = (await vaultSummaries(home)).filter((r) => r.resource === mcp.url);
      const [held] = await vaultTokens(home);
      const refreshToken = held?.refreshToken?.reveal();
      assert.ok(summary && refreshToken);

      await run.agent.request(acp.methods.agent.logout, {});

      // Revoked at the authorization server (RFC 7009), not only forgotten here.
      await assertRefreshRefused(idp.issuer, refreshToken, summary.clientId);

      assert.deepEqual(
        (await vaultSummaries(home)).filter((r) => r.resource === mcp.url),
        [],
        "the MCP server's credential is gone",
      );
      const status = await run.waitForStatus((s) => s[0]?.state === "needs_sign_in");
      assert.equal(
        status.state,
        "authenticated",
        "the agent's key is an environment variable: it survives",
      );
      assert.deepEqual(await prompt(run, sessionId, "call fixture whoami"), ["hello"]);
      assert.equal(run.elicitations.length, 2, "the person was asked again");
    },
  );
});

test("[ACP-mcp-one-ask-across-sessions] two sessions calling the same MCP server at once: the person is asked once, both calls succeed", {
  timeout: 60_000,
}, async (t) => {
  const home = tempDir();
  const mcp = await startProtectedMcpServer({ issuer: idp.issuer });
  await withMcpAgent(t, { home, issuer: idp.issuer, elicitation: "accept" }, async (run) => {
    const server = httpServer("fixture", mcp.url);
    const first = await newSession(run, home, [server]);
    const second = await newSession(run, home, [server]);
    const answers = await Promise.all([
      prompt(run, first, "call fixture whoami"),
      prompt(run, second, "call fixture whoami"),
    ]);
    assert.deepEqual(answers, [["hello"], ["hello"]]);
    assert.equal(run.elicitations.length, 1, "one sign-in for one server, whichever session asked");
    assert.equal((await vaultSummaries(home)).filter((r) => r.resource === mcp.url).length, 1);
  });
});

test("[ACP-mcp-step-up] the server starts asking for more scope: the person is asked again (elicitation) for the union, the call succeeds, auth/status lists the new scope", {
  timeout: 60_000,
}, async (t) => {
  await withFixtureSession(
    t,
    { issuer: idp.issuer, elicitation: "accept" },
    async ({ run, sessionId, mcp }) => {
      assert.deepEqual(await prompt(run, sessionId, "call fixture whoami"), ["hello"]);
      mcp.requiredScopes = ["read", "write"];

      assert.deepEqual(
        await prompt(run, sessionId, "call fixture whoami"),
        ["hello"],
        run.stderr(),
      );

      assert.equal(run.elicitations.length, 2);
      const scope = new URL((run.elicitations[1] as { url: string }).url).searchParams.get("scope");
      for (const s of ["read", "write"])
        assert.ok(scope?.split(" ").includes(s), `${s} in ${scope}`);
      assert.equal(run.completions.length, 2, "both elicitations were completed");
      const status = await run.waitForStatus((s) => s[0]?.scopes.includes("write") === true);
      assert.equal(mcpServers(status)[0]?.state, "signed_in");
    },
  );
});

test("[ACP-mcp-kept-across-restarts] a restarted agent finds the MCP token in its vault: signed in right after session/new, the call asks nobody", {
  timeout: 60_000,
}, async (t) => {
  const home = tempDir();
  const mcp = await startProtectedMcpServer({ issuer: idp.issuer });
  const server = httpServer("fixture", mcp.url);
  await withMcpAgent(t, { home, issuer: idp.issuer, elicitation: "accept" }, async (run) => {
    const sessionId = await newSession(run, home, [server]);
    assert.deepEqual(await prompt(run, sessionId, "call fixture whoami"), ["hello"]);
  });
  const refusedBefore = mcp.stats.unauthorized;
  await withMcpAgent(t, { home, issuer: idp.issuer, elicitation: "decline" }, async (run) => {
    const sessionId = await newSession(run, home, [server]);
    const status = await authStatus(run);
    assert.equal(mcpServers(status)[0]?.state, "signed_in", "the vault answers before any probe");
    // The new process's probe goes without a token (one 401); let it land so the count below is the call's alone.
    while (mcp.stats.unauthorized === refusedBefore) await new Promise((r) => setTimeout(r, 20));
    const afterProbe = mcp.stats.unauthorized;
    assert.deepEqual(await prompt(run, sessionId, "call fixture whoami"), ["hello"]);
    assert.equal(run.elicitations.length, 0, "nobody was asked");
    assert.equal(
      mcp.stats.unauthorized,
      afterProbe,
      "the call was sent with the stored token at once",
    );
  });
});
