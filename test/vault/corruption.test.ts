/** Damaged rows, wrong keys and unopenable files: each is a typed error with a stable code, never a crash or a leak. */

import assert from "node:assert/strict";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";
import { inspect } from "node:util";
import {
  type CredentialRecord,
  Keyring,
  openVault,
  SqliteCredentialStore,
  VaultCorruptError,
  VaultIoError,
  VaultKeyError,
} from "../../src/vault/index.ts";
import { newKey, rawDb, sampleInput, tempHome, tokenValues } from "./helpers.ts";

/** Asserts the error carries no token (message, JSON, or inspected with its cause chain). */
function assertNoSecret(error: unknown, secrets: string[]): void {
  const printed = [
    String((error as Error).message),
    JSON.stringify(error),
    inspect(error, { depth: 10 }),
  ];
  for (const text of printed)
    for (const value of secrets) assert.equal(text.includes(value), false, text);
}

// [column, SQL value, whether list() (which never decrypts) still works]
const DAMAGE: [string, string, boolean][] = [
  ["ciphertext", "NULL", true],
  ["nonce", "NULL", true],
  ["kid", "''", true],
  ["ciphertext", "'not base64!'", true],
  ["ciphertext", "substr(ciphertext, 1, 10)", true], // truncated below the 16-byte tag
  ["nonce", "'AAAA'", true], // 3 bytes, not 12
  ["scopes", "'{not json'", false],
  ["scopes", "'[1,2]'", false],
  ["account", "'[]'", false],
  ["client_id", "NULL", false],
  ["status", "'revoked'", false],
  ["has_access", "'yes'", false],
  ["expires_at", "'tomorrow'", false],
  ["id", "'forged-id-00'", false],
];

for (const [column, value, listable] of DAMAGE) {
  test(`[VAULT-corrupt-rows] ${column} = ${value} gives vault_record_corrupt, other rows unaffected`, async (t) => {
    const home = tempHome(t);
    const vault = openVault({ home, env: { AGENTAUTH_VAULT_KEY: newKey() } });
    t.after(() => vault.close());
    const healthy = await vault.put(sampleInput({ subject: "bob" }));
    const victim = await vault.put(sampleInput());
    const db = rawDb(vault.path);
    t.after(() => db.close());
    db.prepare(`UPDATE credentials SET ${column} = ${value} WHERE id = ?`).run(victim.id);
    const secrets = [...tokenValues(victim), ...tokenValues(healthy)];

    let reportedId: string | undefined;
    const check = (e: unknown) => {
      assert.ok(e instanceof VaultCorruptError, String(e));
      assert.equal(e.code, "vault_record_corrupt");
      assert.match(e.message, /log in again/);
      assertNoSecret(e, secrets);
      reportedId = e.recordId;
      return true;
    };
    await assert.rejects(vault.get(victim), check);
    if (column !== "id") await assert.rejects(vault.getById(victim.id), check);
    // One bad row never hides the others: list() skips it, listReport() names it with the id to delete.
    const report = await vault.listReport();
    if (listable) {
      assert.equal((await vault.list()).length, 2);
      assert.deepEqual(report.unreadable, []);
    } else {
      assert.deepEqual(
        (await vault.list()).map((s) => s.id),
        [healthy.id],
      );
      assert.deepEqual(
        report.credentials.map((s) => s.id),
        [healthy.id],
      );
      assert.equal(report.unreadable.length, 1);
      const [flagged] = report.unreadable;
      assert.equal(flagged?.code, "vault_record_corrupt");
      assert.equal(flagged?.id, column === "id" ? "forged-id-00" : victim.id);
      assert.equal(flagged?.issuer, victim.issuer);
      assert.match(flagged?.message ?? "", /agentauth vault delete/);
      assertNoSecret(flagged, secrets);
    }
    assert.deepEqual(tokenValues((await vault.get(healthy))!), tokenValues(healthy));
    // The id the error reports is enough to remove the row without decoding it (`vault revoke <id>`).
    assert.equal(await vault.deleteById(reportedId!), true);
    assert.deepEqual(
      (await vault.list()).map((s) => s.id),
      [healthy.id],
    );
    const again = sampleInput();
    await vault.put(again);
    assert.deepEqual(tokenValues((await vault.get(again))!), tokenValues(again));
  });
}

test("[VAULT-decrypt-failed] a flipped ciphertext bit gives vault_decrypt_failed", async (t) => {
  const home = tempHome(t);
  const vault = openVault({ home, env: { AGENTAUTH_VAULT_KEY: newKey() } });
  t.after(() => vault.close());
  const record = await vault.put(sampleInput());
  const db = rawDb(vault.path);
  t.after(() => db.close());
  const { ciphertext } = db.prepare("SELECT ciphertext FROM credentials").get()!;
  const bytes = Buffer.from(String(ciphertext), "base64url");
  bytes[5]! ^= 0x01;
  db.prepare("UPDATE credentials SET ciphertext = ?").run(bytes.toString("base64url"));
  await assert.rejects(vault.get(record), (e) => {
    assert.ok(e instanceof VaultKeyError);
    assert.equal(e.code, "vault_decrypt_failed");
    assertNoSecret(e, tokenValues(record));
    return true;
  });
});

test("[VAULT-provider-bound] a provider reference edited in the file (origins pointed elsewhere, or removed) no longer decrypts", async (t) => {
  const home = tempHome(t);
  const vault = openVault({ home, env: { AGENTAUTH_VAULT_KEY: newKey() } });
  t.after(() => vault.close());
  const provider = {
    name: "github",
    options: { app: "github_app", host: "https://ghe.example.com" },
  };
  const record = await vault.put(sampleInput({ provider }));
  const db = rawDb(vault.path);
  t.after(() => db.close());
  // Option order does not matter: the same reference, reordered, still opens.
  db.prepare("UPDATE credentials SET provider = ?").run(
    JSON.stringify({
      name: "github",
      options: { host: "https://ghe.example.com", app: "github_app" },
    }),
  );
  assert.deepEqual(tokenValues((await vault.get(record))!), tokenValues(record));
  for (const tampered of [
    JSON.stringify({
      ...provider,
      options: {
        ...provider.options,
        origins: '{"https://ghe.example.com":"https://evil.example"}',
      },
    }),
    JSON.stringify({ name: "gitlab", options: provider.options }),
    null,
  ]) {
    db.prepare("UPDATE credentials SET provider = ?").run(tampered);
    await assert.rejects(vault.get(record), (e) => {
      assert.ok(e instanceof VaultKeyError);
      assert.equal(e.code, "vault_decrypt_failed");
      assertNoSecret(e, tokenValues(record));
      return true;
    });
  }
});

test("[VAULT-wrong-key] reopening with a different AGENTAUTH_VAULT_KEY gives vault_key_unknown", async (t) => {
  const home = tempHome(t);
  const rightKey = newKey();
  const first = openVault({ home, env: { AGENTAUTH_VAULT_KEY: rightKey } });
  const record = await first.put(sampleInput());
  await first.close();

  const wrongKey = newKey();
  const wrong = openVault({ home, env: { AGENTAUTH_VAULT_KEY: wrongKey } });
  t.after(() => wrong.close());
  for (const read of [() => wrong.get(record), () => wrong.getById(record.id)]) {
    await assert.rejects(read(), (e) => {
      assert.ok(e instanceof VaultKeyError);
      assert.equal(e.code, "vault_key_unknown");
      assert.match(e.message, /AGENTAUTH_VAULT_KEY/);
      assertNoSecret(e, [...tokenValues(record), rightKey, wrongKey]);
      return true;
    });
  }
  assert.equal((await wrong.list()).length, 1, "listing needs no key");

  const right = openVault({ home, env: { AGENTAUTH_VAULT_KEY: rightKey } });
  t.after(() => right.close());
  assert.deepEqual(tokenValues((await right.get(record)) as CredentialRecord), tokenValues(record));
});

test("[VAULT-wrong-key] right key id, wrong key material gives vault_decrypt_failed", async (t) => {
  // Unreachable through key files (ids are derived and checked) but possible with a hand-built keyring.
  const home = tempHome(t);
  const key = Buffer.from(newKey(), "base64");
  const store = new SqliteCredentialStore({
    path: join(home, "vault.db"),
    keyring: new Keyring(key),
  });
  t.after(() => store.close());
  const record = await store.put(sampleInput());
  const db = rawDb(store.path);
  t.after(() => db.close());
  const other = new Keyring(Buffer.from(newKey(), "base64"));
  db.prepare("UPDATE credentials SET kid = ?").run(other.currentKid);
  const impostor = new SqliteCredentialStore({ path: store.path, keyring: other });
  t.after(() => impostor.close());
  await assert.rejects(impostor.get(record), { code: "vault_decrypt_failed" });
});

test("[VAULT-io-error] an unopenable vault file gives vault_io", async (t) => {
  const home = tempHome(t);
  const keyring = new Keyring(Buffer.from(newKey(), "base64"));
  const garbage = join(home, "garbage.db");
  writeFileSync(garbage, Buffer.alloc(8192, 0x5a));
  const directory = join(home, "a-directory");
  mkdirSync(directory);
  for (const path of [garbage, directory, join(home, "missing", "dir", "vault.db")]) {
    assert.throws(
      () => new SqliteCredentialStore({ path, keyring }),
      (e) => e instanceof VaultIoError && e.code === "vault_io" && e.message.includes(path),
    );
  }
});

test("[VAULT-io-error] a vault from a newer schema gives vault_schema_unsupported", async (t) => {
  const home = tempHome(t);
  const env = { AGENTAUTH_VAULT_KEY: newKey() };
  await openVault({ home, env }).close();
  const db = rawDb(join(home, "vault.db"));
  db.exec("PRAGMA user_version = 99");
  db.close();
  assert.throws(() => openVault({ home, env }), { code: "vault_schema_unsupported" });
});

test("[VAULT-io-error] using a closed store gives vault_io", async (t) => {
  const home = tempHome(t);
  const vault = openVault({ home, env: { AGENTAUTH_VAULT_KEY: newKey() } });
  await vault.close();
  await vault.close(); // idempotent
  await assert.rejects(vault.put(sampleInput()), { code: "vault_io" });
  await assert.rejects(vault.list(), VaultIoError);
});

test("[VAULT-io-error] another program's SQLite file gives vault_io, not a crash", (t) => {
  const home = tempHome(t);
  const path = join(home, "foreign.db");
  const db = rawDb(path);
  db.exec("CREATE TABLE credentials (x); CREATE TABLE leases (y); PRAGMA user_version = 1");
  db.close();
  const keyring = new Keyring(Buffer.from(newKey(), "base64"));
  assert.throws(
    () => new SqliteCredentialStore({ path, keyring }),
    (e) =>
      e instanceof VaultIoError &&
      e.code === "vault_io" &&
      /not an agentauth vault/.test(e.message),
  );
});

test("[VAULT-corrupt-base64-strict] ciphertext and nonce that decode only loosely (other alphabet, junk, padding, stray bits) are corrupt", async (t) => {
  const home = tempHome(t);
  const vault = openVault({ home, env: { AGENTAUTH_VAULT_KEY: newKey() } });
  t.after(() => vault.close());
  const record = await vault.put(sampleInput());
  const db = rawDb(vault.path);
  t.after(() => db.close());
  const original = db
    .prepare("SELECT nonce, ciphertext FROM credentials WHERE id = ?")
    .get(record.id) as {
    nonce: string;
    ciphertext: string;
  };
  const base64Digit = (c: string) =>
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".indexOf(c);
  const digit = (n: number) =>
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"[n]!;
  const withStrayBits = (text: string) => {
    // Set the lowest bit of the last character: unused when the length is not a multiple of 4.
    const last = base64Digit(text.at(-1)!);
    return text.slice(0, -1) + digit(last | 1);
  };
  const damaged: [string, string][] = [
    ["ciphertext", `${original.ciphertext.slice(0, 40)}!${original.ciphertext.slice(40)}`],
    ["ciphertext", `${original.ciphertext.slice(0, 40)} ${original.ciphertext.slice(41)}`],
    ["ciphertext", original.ciphertext.replace(/[-_]/, (c) => (c === "-" ? "+" : "/"))],
    ["ciphertext", `${original.ciphertext}=`],
    ["nonce", `${original.nonce.slice(0, 8)}=${original.nonce.slice(9)}`],
    ["nonce", `${original.nonce}A`],
  ];
  if (original.ciphertext.length % 4 !== 0)
    damaged.push(["ciphertext", withStrayBits(original.ciphertext)]);
  for (const [column, value] of damaged) {
    if (value === original[column as "nonce" | "ciphertext"]) continue;
    db.prepare(`UPDATE credentials SET ${column} = ? WHERE id = ?`).run(value, record.id);
    await assert.rejects(
      vault.get(record),
      (e: unknown) =>
        (e instanceof VaultCorruptError && e.code === "vault_record_corrupt") ||
        (e instanceof VaultKeyError && e.code === "vault_decrypt_failed"),
      `${column} = ${value.slice(0, 60)}…`,
    );
    db.prepare(`UPDATE credentials SET ${column} = ? WHERE id = ?`).run(
      original[column as "nonce" | "ciphertext"],
      record.id,
    );
  }
  assert.deepEqual(
    tokenValues((await vault.get(record))!),
    tokenValues(record),
    "restored row reads",
  );
});
