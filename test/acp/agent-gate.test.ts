/**
 * The gate's cache of a positive answer, in process (no peer here: the kit's own state against a real in-memory
 * credential store): a check that was already reading when a logout happened must not cache its stale "yes".
 */

import assert from "node:assert/strict";
import { test } from "node:test";
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
