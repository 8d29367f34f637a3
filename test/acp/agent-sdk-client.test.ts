/**
 * Our agent driven by the real ACP SDK client (`@agentclientprotocol/sdk/unstable`) over the agent process's
 * stdio: what an SDK-based editor sees, including our `_agentauth/login_prompt` extension parsed with the shared
 * wire schema.
 */

import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { Readable, Writable } from "node:stream";
import { test } from "node:test";
import * as acp from "@agentclientprotocol/sdk/unstable";
import { LOGIN_PROMPT, type LoginPrompt, LoginPromptSchema } from "../../src/acp/wire.ts";
import { useIdp } from "../support/idp.ts";
import { tempDir } from "../support/tmp.ts";
import { agentEnv, EXAMPLE_AGENT, openInBrowser } from "./fixtures/agent-process.ts";

const idp = await useIdp();

test("[ACP-sdk-client-journey] the SDK client: initialize, auth/status, auth_required, authenticate via the login prompt, session, logout", {
  timeout: 30_000,
}, async (t) => {
  const home = tempDir();
  const child = spawn(process.execPath, ["--no-warnings", EXAMPLE_AGENT], {
    env: agentEnv({ issuer: idp.issuer, home }),
    stdio: ["pipe", "pipe", "pipe"],
  });
  const closed = new Promise<number | null>((resolve) => child.once("close", resolve));
  t.after(async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
    await closed;
  });
  let stderr = "";
  child.stderr.setEncoding("utf8");
  child.stderr.on("data", (chunk: string) => {
    stderr += chunk;
  });

  const statusUpdates: unknown[] = [];
  const prompts: LoginPrompt[] = [];
  const chunks: unknown[] = [];
  const stream = acp.ndJsonStream(
    Writable.toWeb(child.stdin),
    Readable.toWeb(child.stdout) as ReadableStream<Uint8Array>,
  );
  const journey = await acp
    .client({ name: "agentauth-wire-test" })
    .onNotification(acp.methods.client.auth.statusUpdate, ({ params }) => {
      statusUpdates.push(params);
    })
    .onNotification(LOGIN_PROMPT, LoginPromptSchema, async ({ params }) => {
      prompts.push(params);
      await openInBrowser(params.url);
    })
    .onNotification(acp.methods.client.session.update, ({ params }) => {
      chunks.push(params.update);
    })
    .connectWith(stream, async (agent) => {
      const init = await agent.request(acp.methods.agent.initialize, {
        protocolVersion: acp.PROTOCOL_VERSION,
        clientCapabilities: {},
      });
      const before = await agent.request(acp.methods.agent.auth.status, {});
      const refused = await agent
        .request(acp.methods.agent.session.new, { cwd: home, mcpServers: [] })
        .then(
          () => undefined,
          (error: unknown) => error,
        );
      const authenticated = await agent.request(acp.methods.agent.authenticate, {
        methodId: "oauth",
      });
      const after = await agent.request(acp.methods.agent.auth.status, {});
      const session = await agent.request(acp.methods.agent.session.new, {
        cwd: home,
        mcpServers: [],
      });
      const turn = await agent.request(acp.methods.agent.session.prompt, {
        sessionId: session.sessionId,
        prompt: [{ type: "text", text: "through the SDK" }],
      });
      const loggedOut = await agent.request(acp.methods.agent.logout, {});
      const end = await agent.request(acp.methods.agent.auth.status, {});
      return { init, before, refused, authenticated, after, session, turn, loggedOut, end };
    });

  assert.deepEqual(journey.init.agentCapabilities?.auth, { logout: {}, status: {} });
  assert.deepEqual(
    journey.init.authMethods?.map((m) => m.id),
    ["oauth", "api-key"],
  );
  assert.deepEqual(journey.before, { state: "unauthenticated", accounts: [] });
  assert.ok(journey.refused instanceof acp.RequestError, "session/new was refused before login");
  assert.equal(journey.refused.code, -32000);
  assert.deepEqual(journey.authenticated, {});
  const alice = {
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
  };
  assert.deepEqual(journey.after, alice);
  assert.equal(typeof journey.session.sessionId, "string");
  assert.deepEqual(journey.turn, { stopReason: "end_turn" });
  assert.deepEqual(chunks, [
    {
      sessionUpdate: "agent_message_chunk",
      content: { type: "text", text: "echo: through the SDK" },
    },
  ]);
  assert.deepEqual(journey.loggedOut, {});
  assert.deepEqual(journey.end, { state: "unauthenticated", accounts: [] });
  // Exactly one prompt, parsed by the shared schema, and exactly the two changes announced, in order.
  assert.equal(prompts.length, 1);
  assert.equal(prompts[0]?.methodId, "oauth");
  assert.deepEqual(statusUpdates, [alice, { state: "unauthenticated", accounts: [] }]);
  assert.doesNotMatch(stderr, /Got response to unknown request|Error/);
});
