/** The SQLite store against the shared contract, plus what only a file-backed store has: persistence, WAL, permissions. */

import assert from "node:assert/strict";
import { statSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";
import { Keyring, openVault, SqliteCredentialStore, vaultDbPath } from "../../src/vault/index.ts";
import { newKey, rawDb, sampleInput, tempHome, tokenValues } from "./helpers.ts";
import { credentialStoreContract } from "./store-contract.ts";

credentialStoreContract("SqliteCredentialStore", (t, now) => {
  const home = tempHome(t);
  const store = new SqliteCredentialStore({
    path: join(home, "vault.db"),
    keyring: new Keyring(Buffer.from(newKey(), "base64")),
    now,
  });
  t.after(() => store.close());
  return store;
});

test("[VAULT-sqlite-persistence] records survive closing and reopening the file", async (t) => {
  const home = tempHome(t);
  const env = { AGENTAUTH_VAULT_KEY: newKey() };
  const input = sampleInput();
  const first = openVault({ home, env });
  const written = await first.put(input);
  await first.close();
  const second = openVault({ home, env });
  t.after(() => second.close());
  assert.deepEqual(await second.get(input), written);
  assert.deepEqual(tokenValues((await second.getById(written.id))!), tokenValues(input));
});

test("[VAULT-sqlite-wal] the file is in WAL mode, so readers and one writer can share it across processes", async (t) => {
  const home = tempHome(t);
  const vault = openVault({ home, env: { AGENTAUTH_VAULT_KEY: newKey() } });
  t.after(() => vault.close());
  await vault.put(sampleInput());
  const db = rawDb(vaultDbPath(home));
  t.after(() => db.close());
  // journal_mode=WAL is stored in the file, so a separate connection sees it; busy_timeout is per connection
  // and is exercised for real by [VAULT-busy-timeout] in multiprocess.test.ts.
  assert.equal(db.prepare("PRAGMA journal_mode").get()?.journal_mode, "wal");
  assert.equal(db.prepare("PRAGMA user_version").get()?.user_version, 1);
});

test("[VAULT-home] openVault honours $AGENTAUTH_HOME and keeps its files owner-only", async (t) => {
  const root = tempHome(t);
  const home = join(root, "nested", "agentauth");
  const vault = openVault({ env: { AGENTAUTH_HOME: home } });
  t.after(() => vault.close());
  await vault.put(sampleInput());
  assert.equal(vault.path, join(home, "vault.db"));
  assert.equal(statSync(home).mode & 0o777, 0o700);
  assert.equal(statSync(join(home, "vault.db")).mode & 0o777, 0o600);
  assert.equal(statSync(join(home, "vault.db-wal")).mode & 0o777, 0o600);
  assert.equal(statSync(join(home, "vault.key")).mode & 0o777, 0o600);
});

test("[VAULT-atomic-writes] a failed reencrypt leaves every row as it was", async (t) => {
  const home = tempHome(t);
  const env = { AGENTAUTH_VAULT_KEY: newKey() };
  const vault = openVault({ home, env });
  t.after(() => vault.close());
  const good = await vault.put(sampleInput());
  const bad = await vault.put(sampleInput({ subject: "bob" }));
  const db = rawDb(vault.path);
  t.after(() => db.close());
  db.prepare("UPDATE credentials SET ciphertext = 'garbage!' WHERE id = ?").run(bad.id);
  const before = db.prepare("SELECT id, kid, nonce, ciphertext FROM credentials ORDER BY id").all();
  // A new current key makes both rows stale; the corrupt one fails midway through the transaction.
  const rotated = new SqliteCredentialStore({
    path: vault.path,
    keyring: new Keyring(Buffer.from(newKey(), "base64"), [
      Buffer.from(env.AGENTAUTH_VAULT_KEY, "base64"),
    ]),
  });
  t.after(() => rotated.close());
  await assert.rejects(rotated.reencrypt(), { code: "vault_record_corrupt" });
  assert.deepEqual(
    db.prepare("SELECT id, kid, nonce, ciphertext FROM credentials ORDER BY id").all(),
    before,
  );
  assert.deepEqual(tokenValues((await vault.get(good))!), tokenValues(good));
});

test("[VAULT-provider-migration] a vault file from before provider presets gains the column in place and its rows still read", async (t) => {
  const home = tempHome(t);
  const env = { AGENTAUTH_VAULT_KEY: newKey() };
  const first = openVault({ home, env });
  const written = await first.put(sampleInput());
  await first.close();
  // Recreate the old layout: the table as it was before the provider column existed.
  const db = rawDb(vaultDbPath(home));
  db.exec("ALTER TABLE credentials DROP COLUMN provider");
  assert.equal(
    db
      .prepare("PRAGMA table_info(credentials)")
      .all()
      .some((c) => c.name === "provider"),
    false,
  );
  db.close();
  const second = openVault({ home, env });
  t.after(() => second.close());
  assert.deepEqual(await second.get(written), written);
  const withProvider = await second.put(sampleInput({ provider: { name: "slack" } }));
  assert.deepEqual((await second.get(withProvider))?.provider, { name: "slack" });
});
