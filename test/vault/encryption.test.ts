/** AES-256-GCM at rest: no plaintext token on disk, a fresh nonce per write, ciphertexts bound to their record. */

import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { test } from "node:test";
import { credentialId, openVault, VaultKeyError } from "../../src/vault/index.ts";
import { newKey, rawDb, sampleInput, tempHome, tokenValues } from "./helpers.ts";

test("[VAULT-aes-gcm-at-rest] no token appears in the database or WAL file bytes", async (t) => {
  const home = tempHome(t);
  const vault = openVault({ home, env: { AGENTAUTH_VAULT_KEY: newKey() } });
  t.after(() => vault.close());
  const inputs = [
    sampleInput(),
    sampleInput({ subject: "bob" }),
    sampleInput({ subject: "carol" }),
  ];
  for (const input of inputs) await vault.put(input);
  const marker = "plaintext-label-MARKER";
  await vault.put(sampleInput({ subject: "dave", account: { label: marker } }));
  const secrets = inputs.flatMap(tokenValues);
  const scan = () => {
    const bytes = Buffer.concat([readFileSync(vault.path), readFileSync(`${vault.path}-wal`)]);
    // The control: non-secret display data is stored in clear, so the scan does see row contents.
    assert.ok(bytes.includes(marker), "the scan reads the rows");
    for (const value of secrets) {
      assert.equal(bytes.includes(value), false, "token found in plaintext");
      assert.equal(bytes.includes(Buffer.from(value, "utf16le")), false, "token found as UTF-16");
    }
  };
  scan(); // while open: most data is still in the -wal file
  const db = rawDb(vault.path);
  db.exec("PRAGMA wal_checkpoint(TRUNCATE)");
  db.close();
  const bytes = readFileSync(vault.path);
  assert.ok(bytes.includes(marker));
  for (const value of secrets)
    assert.equal(bytes.includes(value), false, "token found after checkpoint");
});

test("[VAULT-aes-gcm-nonce] every write uses a fresh 96-bit nonce and a new ciphertext", async (t) => {
  const home = tempHome(t);
  const vault = openVault({ home, env: { AGENTAUTH_VAULT_KEY: newKey() } });
  t.after(() => vault.close());
  const input = sampleInput();
  const db = rawDb(vault.path);
  t.after(() => db.close());
  const seen = new Set<string>();
  for (let i = 0; i < 20; i++) {
    await vault.put(input); // identical content every time
    const row = db.prepare("SELECT nonce, ciphertext FROM credentials").get()!;
    assert.equal(Buffer.from(String(row.nonce), "base64url").length, 12);
    seen.add(`${row.nonce}|${row.ciphertext}`);
  }
  assert.equal(seen.size, 20);
});

test("[VAULT-aad-binding] a ciphertext swapped into another row does not decrypt", async (t) => {
  const home = tempHome(t);
  const vault = openVault({ home, env: { AGENTAUTH_VAULT_KEY: newKey() } });
  t.after(() => vault.close());
  const alice = await vault.put(sampleInput());
  const bob = await vault.put(sampleInput({ subject: "bob" }));
  const db = rawDb(vault.path);
  t.after(() => db.close());
  const read = db.prepare("SELECT nonce, ciphertext FROM credentials WHERE id = ?");
  const a = read.get(alice.id) as { nonce: string; ciphertext: string };
  const b = read.get(bob.id) as { nonce: string; ciphertext: string };
  const write = db.prepare("UPDATE credentials SET nonce = ?, ciphertext = ? WHERE id = ?");
  write.run(b.nonce, b.ciphertext, alice.id);
  write.run(a.nonce, a.ciphertext, bob.id);
  for (const record of [alice, bob]) {
    await assert.rejects(vault.get(record), (e) => {
      assert.ok(e instanceof VaultKeyError);
      assert.equal(e.code, "vault_decrypt_failed");
      assert.equal(e.recordId, record.id);
      for (const value of [...tokenValues(alice), ...tokenValues(bob)]) {
        assert.equal(JSON.stringify(e).includes(value), false);
        assert.equal(e.message.includes(value), false);
      }
      return true;
    });
  }
  // Put them back: the same bytes decrypt again, so the failure above came from the binding alone.
  write.run(a.nonce, a.ciphertext, alice.id);
  assert.deepEqual(tokenValues((await vault.get(alice))!), tokenValues(alice));
});

test("[VAULT-aad-binding] a row re-keyed to another subject does not decrypt", async (t) => {
  const home = tempHome(t);
  const vault = openVault({ home, env: { AGENTAUTH_VAULT_KEY: newKey() } });
  t.after(() => vault.close());
  const alice = await vault.put(sampleInput());
  const db = rawDb(vault.path);
  t.after(() => db.close());
  const moved = { subject: "mallory", issuer: alice.issuer, resource: alice.resource };
  db.prepare("UPDATE credentials SET subject = ?, id = ? WHERE id = ?").run(
    "mallory",
    credentialId(moved),
    alice.id,
  );
  await assert.rejects(vault.get(moved), { code: "vault_decrypt_failed" });
});
