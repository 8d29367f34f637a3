/** Where vault keys come from (environment or key file), how they are named, and how they rotate. */

import assert from "node:assert/strict";
import { createHash, randomBytes } from "node:crypto";
import { existsSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { test } from "node:test";
import { inspect } from "node:util";
import {
  Keyring,
  keyId,
  loadKeyring,
  openVault,
  parseVaultKey,
  rotateVaultKey,
  VaultKeyError,
  vaultKeyFilePath,
} from "../../src/vault/index.ts";
import { newKey, rawDb, sampleInput, tempHome, tokenValues } from "./helpers.ts";

test("[VAULT-key-env] base64 and base64url forms of one key are accepted and share one kid", (t) => {
  const home = tempHome(t);
  const bytes = Buffer.from(randomBytes(32).toString("hex").replace(/^../, "fb"), "hex"); // forces a +/- char
  const forms = [
    bytes.toString("base64"),
    bytes.toString("base64").replace(/=+$/, ""),
    bytes.toString("base64url"),
    ` ${bytes.toString("base64")}\n`,
  ];
  const expected = createHash("sha256").update(bytes).digest("hex").slice(0, 16);
  for (const form of forms) {
    assert.deepEqual(parseVaultKey(form), bytes);
    assert.equal(loadKeyring({ home, env: { AGENTAUTH_VAULT_KEY: form } }).currentKid, expected);
  }
  assert.equal(keyId(bytes), expected);
  assert.equal(
    existsSync(vaultKeyFilePath(home)),
    false,
    "an environment key never creates a key file",
  );
});

test("[VAULT-key-env] a malformed AGENTAUTH_VAULT_KEY gives vault_key_invalid without echoing it", (t) => {
  const home = tempHome(t);
  const malformed = [
    "",
    "short-SECRETVALUE",
    randomBytes(31).toString("base64"),
    randomBytes(33).toString("base64"),
    randomBytes(32).toString("hex"), // 64 hex chars decode as base64 to 48 bytes
    `${randomBytes(32).toString("base64").slice(0, 20)}%%${randomBytes(32).toString("base64").slice(22)}`,
    `${randomBytes(16).toString("base64")} ${randomBytes(16).toString("base64")}`,
    nonCanonical(randomBytes(32)),
  ];
  for (const value of malformed) {
    assert.throws(
      () => openVault({ home, env: { AGENTAUTH_VAULT_KEY: value } }),
      (e) => {
        assert.ok(e instanceof VaultKeyError, String(e));
        assert.equal(e.code, "vault_key_invalid");
        assert.match(e.message, /openssl rand -base64 32/);
        if (value.trim() !== "") {
          for (const text of [e.message, JSON.stringify(e), inspect(e)])
            assert.equal(text.includes(value.trim()), false);
        }
        return true;
      },
    );
  }
});

/** The same 32 bytes with the two unused low bits of the last character set: decodes fine, but is not canonical. */
function nonCanonical(bytes: Buffer): string {
  const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  const text = bytes.toString("base64"); // 43 characters and one "="
  const last = alphabet.indexOf(text[42]!);
  const changed = `${text.slice(0, 42)}${alphabet[last | 1]}=`;
  assert.deepEqual(Buffer.from(changed, "base64"), bytes);
  return changed;
}

test("[VAULT-key-file] created on first use, owner-only, JSON {current, keys}, reused afterwards", async (t) => {
  const home = tempHome(t);
  const first = openVault({ home, env: {} });
  const record = await first.put(sampleInput());
  await first.close();
  const path = vaultKeyFilePath(home);
  assert.equal(statSync(path).mode & 0o777, 0o600);
  const contents = JSON.parse(readFileSync(path, "utf8"));
  assert.deepEqual(Object.keys(contents).sort(), ["current", "keys"]);
  assert.deepEqual(Object.keys(contents.keys), [contents.current]);
  const key = Buffer.from(contents.keys[contents.current], "base64");
  assert.equal(key.length, 32);
  assert.equal(contents.current, createHash("sha256").update(key).digest("hex").slice(0, 16));

  const second = openVault({ home, env: {} });
  t.after(() => second.close());
  assert.equal(second.currentKid, contents.current);
  assert.deepEqual(tokenValues((await second.get(record))!), tokenValues(record));
  assert.equal(
    readFileSync(path, "utf8"),
    `${JSON.stringify(contents, null, 2)}\n`,
    "not rewritten",
  );
});

test("[VAULT-key-file] a malformed key file gives vault_key_invalid", (t) => {
  const good = newKey();
  const goodKid = keyId(Buffer.from(good, "base64"));
  const bad = [
    "not json",
    "[]",
    JSON.stringify({ keys: { [goodKid]: good } }),
    JSON.stringify({ current: "nope", keys: { [goodKid]: good } }),
    JSON.stringify({ current: "0000000000000000", keys: { "0000000000000000": good } }), // id does not match key
    JSON.stringify({ current: goodKid, keys: { [goodKid]: "dG9vIHNob3J0" } }),
  ];
  for (const text of bad) {
    const home = tempHome(t);
    writeFileSync(vaultKeyFilePath(home), text, { mode: 0o600 });
    assert.throws(
      () => openVault({ home, env: {} }),
      (e) =>
        e instanceof VaultKeyError &&
        e.code === "vault_key_invalid" &&
        !JSON.stringify(e).includes(good),
    );
  }
});

test("[VAULT-key-file-prototype] key files naming prototype members give vault_key_invalid with a fix, not a TypeError", (t) => {
  const good = newKey();
  const goodKid = keyId(Buffer.from(good, "base64"));
  const hostile = [
    '{"current":"toString","keys":{}}',
    '{"current":"__proto__","keys":{}}',
    '{"current":"constructor","keys":{}}',
    '{"current":"hasOwnProperty","keys":{"__proto__":"x"}}',
    `{"current":"__proto__","keys":{"__proto__":"${good}"}}`,
    `{"current":"${goodKid}","keys":{"__proto__":{"${goodKid}":"${good}"}}}`,
    `{"__proto__":{"current":"${goodKid}","keys":{"${goodKid}":"${good}"}}}`,
    `{"current":"${goodKid}","keys":{"${goodKid}":"${good}","__proto__":"${good}"}}`,
    `{"current":"${goodKid}","keys":{"${goodKid}":"${good}","toString":7}}`,
  ];
  for (const text of hostile) {
    const home = tempHome(t);
    writeFileSync(vaultKeyFilePath(home), text, { mode: 0o600 });
    assert.throws(
      () => openVault({ home, env: {} }),
      (e) => {
        assert.ok(e instanceof VaultKeyError, `${text}: ${String(e)}`);
        assert.equal(e.code, "vault_key_invalid");
        assert.match(e.message, /from a backup/);
        assert.ok(!e.message.includes(good), "the key never appears");
        return true;
      },
    );
  }
});

test("[VAULT-key-rotation] rotate, old rows stay readable, reencrypt moves every row to the new key", async (t) => {
  const home = tempHome(t);
  const env = {};
  const before = openVault({ home, env });
  const oldKid = before.currentKid;
  const alice = await before.put(sampleInput());
  const bob = await before.put(sampleInput({ subject: "bob" }));
  await before.close();

  const rotated = rotateVaultKey({ home, env });
  assert.deepEqual(rotated.previous, [oldKid]);
  assert.notEqual(rotated.kid, oldKid);

  const vault = openVault({ home, env });
  t.after(() => vault.close());
  assert.equal(vault.currentKid, rotated.kid);
  assert.deepEqual(
    tokenValues((await vault.get(alice))!),
    tokenValues(alice),
    "old rows still open",
  );
  const carol = await vault.put(sampleInput({ subject: "carol" }));
  const db = rawDb(vault.path);
  t.after(() => db.close());
  const kids = () =>
    db
      .prepare("SELECT subject, kid FROM credentials ORDER BY subject")
      .all()
      .map((r) => r.kid);
  assert.deepEqual(kids(), [oldKid, oldKid, rotated.kid]);

  assert.deepEqual(await vault.reencrypt(), { rewritten: 2 });
  assert.deepEqual(kids(), [rotated.kid, rotated.kid, rotated.kid]);
  assert.deepEqual(await vault.reencrypt(), { rewritten: 0 });
  assert.equal(
    (await vault.get(alice))?.version,
    alice.version,
    "re-sealing is not a content change",
  );

  // Drop the old key: everything must still open, proving nothing depends on it any more.
  const path = vaultKeyFilePath(home);
  const contents = JSON.parse(readFileSync(path, "utf8"));
  delete contents.keys[oldKid];
  writeFileSync(path, JSON.stringify(contents));
  const pruned = openVault({ home, env });
  t.after(() => pruned.close());
  for (const record of [alice, bob, carol]) {
    assert.deepEqual(tokenValues((await pruned.get(record))!), tokenValues(record));
  }
});

test("[VAULT-key-rotation] without reencrypt, dropping the old key makes old rows unreadable", async (t) => {
  // The control for the test above: shows that the old key really was still needed before re-encryption.
  const home = tempHome(t);
  const before = openVault({ home, env: {} });
  const oldKid = before.currentKid;
  const alice = await before.put(sampleInput());
  await before.close();
  rotateVaultKey({ home, env: {} });
  const path = vaultKeyFilePath(home);
  const contents = JSON.parse(readFileSync(path, "utf8"));
  delete contents.keys[oldKid];
  writeFileSync(path, JSON.stringify(contents));
  const vault = openVault({ home, env: {} });
  t.after(() => vault.close());
  await assert.rejects(vault.get(alice), { code: "vault_key_unknown" });
});

test("[VAULT-key-rotation] environment keys rotate through AGENTAUTH_VAULT_PREVIOUS_KEYS", async (t) => {
  const home = tempHome(t);
  const oldKey = newKey();
  const first = openVault({ home, env: { AGENTAUTH_VAULT_KEY: oldKey } });
  const record = await first.put(sampleInput());
  await first.close();
  assert.throws(() => rotateVaultKey({ home, env: { AGENTAUTH_VAULT_KEY: oldKey } }), {
    code: "vault_key_env_managed",
  });
  const env = {
    AGENTAUTH_VAULT_KEY: newKey(),
    AGENTAUTH_VAULT_PREVIOUS_KEYS: ` ${newKey()}, ${oldKey}`,
  };
  const vault = openVault({ home, env });
  t.after(() => vault.close());
  assert.deepEqual(tokenValues((await vault.get(record))!), tokenValues(record));
  assert.deepEqual(await vault.reencrypt(), { rewritten: 1 });
  assert.throws(() => openVault({ home, env: { ...env, AGENTAUTH_VAULT_PREVIOUS_KEYS: "junk" } }), {
    code: "vault_key_invalid",
  });
});

test("[VAULT-key-reload] a store reloads the key file when another process rotated it", async (t) => {
  const home = tempHome(t);
  const longRunning = openVault({ home, env: {} });
  t.after(() => longRunning.close());
  const oldKid = longRunning.currentKid;
  const record = await longRunning.put(sampleInput());

  // Elsewhere: rotate, re-encrypt everything, drop the old key.
  const { kid } = rotateVaultKey({ home, env: {} });
  const admin = openVault({ home, env: {} });
  await admin.reencrypt();
  await admin.close();
  const path = vaultKeyFilePath(home);
  const contents = JSON.parse(readFileSync(path, "utf8"));
  delete contents.keys[oldKid];
  writeFileSync(path, JSON.stringify(contents));

  assert.equal(longRunning.currentKid, oldKid);
  assert.deepEqual(tokenValues((await longRunning.get(record))!), tokenValues(record));
  assert.equal(longRunning.currentKid, kid, "new writes now use the rotated key");
});

test("[VAULT-keyring-redaction] a keyring prints key ids, never key bytes", () => {
  const current = randomBytes(32);
  const old = randomBytes(32);
  const keyring = new Keyring(current, [old]);
  const printed = `${inspect(keyring, { depth: 10, showHidden: true })} ${JSON.stringify(keyring)} ${String(keyring)}`;
  for (const key of [current, old]) {
    for (const form of [key.toString("base64"), key.toString("base64url"), key.toString("hex")]) {
      assert.equal(printed.includes(form), false);
    }
  }
  assert.ok(printed.includes(keyId(current)) && printed.includes(keyId(old)));
  assert.throws(() => new Keyring(randomBytes(16)), { code: "vault_key_invalid" });
});
