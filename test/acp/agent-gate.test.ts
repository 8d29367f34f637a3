/**
 * The gate's cache of a positive answer, in process (the kit's own state against a real in-memory credential
 * store): a check that was already reading when a logout happened must not cache its stale "yes". And the kit's
 * request dispatch with the real SDK client and agent app connected in memory.
 */

import assert from "node:assert/strict";
import { test } from "node:test";
import * as acp from "@agentclientprotocol/sdk/unstable";
import { createAgentAuth } from "../../src/acp/agent/index.ts";
import { MemoryCredentialStore } from "../../src/vault/index.ts";
import type { CredentialFilter } from "../../src/vault/types.ts";

/** A real store whose next `list` waits until released: lets a logout run while a status read is in flight. */
class HeldStore extends MemoryCredentialStore {
  #hold: Promise<void> | undefined;
  #release: (() => void) | undefined;
  holdNextList(): void {
    this.#hold = new Promise((resolve) => {
      this.#release = resolve;
    });
  }
  release(): void {
    this.#release?.();
  }
  override async list(filter?: CredentialFilter) {
    const result = await super.list(filter);
    const hold = this.#hold;
    this.#hold = undefined;
    if (hold) await hold;
    return result;
  }
}

test("[ACP-gate-cache-epoch] a status read overtaken by logout does not cache 'authenticated'; the next gated request is refused", async () => {
  const store = new HeldStore();
  const auth = createAgentAuth({
    name: "gate-test",
    store,
    env: {},
    methods: [{ kind: "api-key", id: "api-key", name: "API key" }],
  });
  const gated = auth.gate(() => ({ sessionId: "s1" }));
  await auth.credentials.storeApiKey({ kind: "api-key", id: "api-key", name: "API key" }, "key-1", {
    label: "k",
  });
  store.holdNextList();
  const inFlight = auth.isAuthenticated(); // reads "configured", then waits
  await auth.logout(); // deletes the key while that read is held
  store.release();
  assert.equal(await inFlight, true, "the overtaken read itself still saw the key");
  await assert.rejects(
    async () => gated({ params: { cwd: "/", mcpServers: [] } }),
    (error: { code?: number }) => error.code === -32000,
  );
  assert.equal(await auth.isAuthenticated(), false);
});

test("[ACP-kit-author-fallback] the kit's methods sit behind the request fallback; an author's own '*' handler still gets every other request", async () => {
  const auth = createAgentAuth({
    name: "fallback-test",
    store: new MemoryCredentialStore(),
    env: {},
    methods: [{ kind: "api-key", id: "api-key", name: "API key" }],
  });
  const seen: string[] = [];
  const app = auth
    .installV1(acp.agent({ name: "fallback-test" }), {})
    .onRequest(acp.methods.agent.session.new, () => ({ sessionId: "s1" }))
    .onRequest("*", (ctx: { method: string }) => {
      seen.push(ctx.method);
      return { answeredBy: "author" };
    });
  assert.throws(() => app.onRequest("*", () => ({})), /already registered/);
  // The real SDK client against the real SDK agent app, connected in memory.
  const results = await acp.client({ name: "c" }).connectWith(app, async (agent) => {
    await agent.request(acp.methods.agent.initialize, {
      protocolVersion: acp.PROTOCOL_VERSION,
      clientCapabilities: {},
    });
    const settle = (p: Promise<unknown>) =>
      p.then(
        (v) => v,
        (e: unknown) => e,
      );
    return {
      custom: await agent.request("_vendor/ping", { x: 1 }),
      status: await agent.request(acp.methods.agent.auth.status, {}),
      badAuth: await settle(
        agent.request(acp.methods.agent.authenticate, { methodId: 42 } as never),
      ),
      noParams: await settle(agent.request(acp.methods.agent.logout, undefined as never)),
      gated: await settle(
        agent.request(acp.methods.agent.session.new, { cwd: "/", mcpServers: [] }),
      ),
      login: await agent.request(acp.methods.agent.authenticate, {
        methodId: "api-key",
        _meta: { "api-key": { apiKey: "k-1" } },
      }),
      session: await agent.request(acp.methods.agent.session.new, { cwd: "/", mcpServers: [] }),
    };
  });
  assert.deepEqual(results.custom, { answeredBy: "author" });
  assert.deepEqual(
    seen,
    ["_vendor/ping"],
    "the author's fallback saw only what the kit does not answer",
  );
  assert.deepEqual(results.status, { state: "unauthenticated", accounts: [] });
  assert.equal((results.badAuth as acp.RequestError).code, -32602);
  assert.deepEqual(results.noParams, {});
  assert.equal((results.gated as acp.RequestError).code, -32000);
  assert.deepEqual(results.login, {});
  assert.deepEqual(results.session, { sessionId: "s1" });
});
