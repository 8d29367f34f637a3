/**
 * The store reuses tokens it already opened while a row's sealed bytes stay the same (src/vault/opened-tokens.ts):
 * the reuse must be exact. A row changed in any way after it was read (its ciphertext, nonce, key id, key columns or
 * provider) is opened and checked again, so a tampered row still fails; a caller cannot change what the next reader
 * gets; a key dropped from the keyring stops reads as before.
 */

import assert from "node:assert/strict";
import { join } from "node:path";
import { test } from "node:test";
import { inspect } from "node:util";
import { secret } from "../../src/core/secret.ts";
import {
  Keyring,
  SqliteCredentialStore,
  VaultCorruptError,
  VaultKeyError,
} from "../../src/vault/index.ts";
import { OpenedTokens } from "../../src/vault/opened-tokens.ts";
import { sealTokens } from "../../src/vault/seal.ts";
import { newKey, rawDb, sampleInput, tempHome, tokenValues } from "./helpers.ts";

const keyBytes = () => Buffer.from(newKey(), "base64");

function open(t: import("node:test").TestContext, keyring: Keyring | (() => Keyring)) {
  const path = join(tempHome(t), "vault.db");
  const store = new SqliteCredentialStore({ path, keyring });
  t.after(() => store.close());
  const db = rawDb(path);
  t.after(() => db.close());
  return { store, db };
}

test("[VAULT-opened-tokens-exact] a row altered after it was read fails on the next read, as it would unread", async (t) => {
  const { store, db } = open(t, new Keyring(keyBytes()));
  const other = await store.put(sampleInput({ subject: "bob" }));
  const victim = await store.put(sampleInput());
  assert.ok((await store.get(victim))?.tokens.accessToken, "read once: its tokens are now kept");
  // Another row's sealed bytes moved into this row: the same nonce/ciphertext shape, another record's AAD.
  db.prepare(
    "UPDATE credentials SET nonce = (SELECT nonce FROM credentials WHERE id = ?), " +
      "ciphertext = (SELECT ciphertext FROM credentials WHERE id = ?) WHERE id = ?",
  ).run(other.id, other.id, victim.id);
  await assert.rejects(store.get(victim), (e) => e instanceof VaultKeyError);
  // One flipped character of the ciphertext.
  const fresh = await store.put(sampleInput({ subject: "carol" }));
  await store.get(fresh);
  const { ciphertext } = db
    .prepare("SELECT ciphertext FROM credentials WHERE id = ?")
    .get(fresh.id) as {
    ciphertext: string;
  };
  const flipped = `${ciphertext.slice(0, 5)}${ciphertext[5] === "A" ? "B" : "A"}${ciphertext.slice(6)}`;
  db.prepare("UPDATE credentials SET ciphertext = ? WHERE id = ?").run(flipped, fresh.id);
  await assert.rejects(store.get(fresh), (e) => e instanceof VaultKeyError);
  // The provider column is bound by the associated data: editing it after a read still fails.
  const withProvider = await store.put(
    sampleInput({
      subject: "dave",
      provider: { name: "github", options: { host: "ghe.example" } },
    }),
  );
  await store.get(withProvider);
  db.prepare("UPDATE credentials SET provider = ? WHERE id = ?").run(
    JSON.stringify({ name: "github", options: { host: "evil.example" } }),
    withProvider.id,
  );
  await assert.rejects(store.get(withProvider), (e) => e instanceof VaultKeyError);
  // The token flags are still checked against what the kept tokens hold.
  const flags = await store.put(sampleInput({ subject: "erin" }));
  await store.get(flags);
  db.prepare("UPDATE credentials SET has_id = 0 WHERE id = ?").run(flags.id);
  await assert.rejects(store.get(flags), (e) => e instanceof VaultCorruptError);
});

test("[VAULT-opened-tokens-exact] each read is a fresh record: what one caller changes, the next does not see", async (t) => {
  const { store } = open(t, new Keyring(keyBytes()));
  const input = sampleInput();
  await store.put(input);
  const first = await store.get(input);
  assert.ok(first);
  first.tokens.accessToken = secret("changed-by-a-caller");
  delete first.tokens.refreshToken;
  first.scopes.push("admin");
  const second = await store.get(input);
  assert.equal(second?.tokens.accessToken?.reveal(), input.tokens.accessToken?.reveal());
  assert.equal(second?.tokens.refreshToken?.reveal(), input.tokens.refreshToken?.reveal());
  assert.deepEqual(second?.scopes, input.scopes);
});

test("[VAULT-opened-tokens-exact] a key dropped from the keyring stops reads of its rows, kept tokens or not", async (t) => {
  const oldKey = keyBytes();
  const newer = keyBytes();
  // Reloading gives the rotated keyring without the old key (rotation finished, old key dropped).
  const path = join(tempHome(t), "vault.db");
  const store = new SqliteCredentialStore({
    path,
    keyring: new Keyring(oldKey),
    reloadKeyring: () => new Keyring(newer),
  });
  t.after(() => store.close());
  const before = sampleInput({ subject: "old" });
  await store.put(before);
  assert.ok(await store.get(before), "read under the old key: its tokens are kept");
  // Another process writes under the new key; reading it makes this store reload its keyring.
  const rotated = new SqliteCredentialStore({ path, keyring: new Keyring(newer) });
  t.after(() => rotated.close());
  const after = sampleInput({ subject: "new" });
  await rotated.put(after);
  assert.ok(await store.get(after), "reloaded: the new key reads");
  await assert.rejects(
    store.get(before),
    (e) => e instanceof VaultKeyError && e.code === "vault_key_unknown",
    "the old key is gone: kept tokens must not outlive it",
  );
});

test("[VAULT-opened-tokens-no-leak] the kept tokens never print, are bounded in number, and can be dropped", () => {
  const memo = new OpenedTokens(2);
  const keyring = new Keyring(keyBytes());
  const inputs = ["a", "b", "c"].map((subject) => sampleInput({ subject }));
  for (const [i, input] of inputs.entries())
    memo.open(keyring, input, null, sealTokens(keyring, input, input.tokens), `id-${i}`);
  assert.equal(memo.size, 2, "bounded: the oldest is dropped");
  const printed = [inspect(memo, { depth: 10 }), JSON.stringify(memo), String(memo)].join("\n");
  for (const value of inputs.flatMap(tokenValues)) assert.equal(printed.includes(value), false);
  memo.forget("id-2");
  assert.equal(memo.size, 1);
  memo.clear();
  assert.equal(memo.size, 0);
});
