/** The in-memory store against the shared CredentialStore contract. */

import assert from "node:assert/strict";
import { test } from "node:test";
import { MemoryCredentialStore } from "../../src/vault/index.ts";
import { sampleInput } from "./helpers.ts";
import { credentialStoreContract } from "./store-contract.ts";

credentialStoreContract("MemoryCredentialStore", (t, now) => {
  const store = new MemoryCredentialStore({ now });
  t.after(() => store.close());
  return store;
});

test("[VAULT-delete] deleteById removes exactly the record with that id", async () => {
  const store = new MemoryCredentialStore();
  const alice = await store.put(sampleInput());
  const bob = await store.put(sampleInput({ subject: "bob" }));
  assert.equal(await store.deleteById(alice.id), true);
  assert.equal(await store.deleteById(alice.id), false);
  assert.deepEqual(
    (await store.list()).map((s) => s.id),
    [bob.id],
  );
});
