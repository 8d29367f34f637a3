/**
 * The PostgreSQL vault beyond the shared contract: nothing secret at rest, damaged rows named and skipped,
 * persistence, instances starting together, key rotation with no downtime, and errors that never carry the
 * database password.
 */

import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { type TestContext, test } from "node:test";
import { inspect } from "node:util";
import pg from "pg";
import { secret } from "../../src/core/secret.ts";
import { DatabaseError, redactDatabaseUrl } from "../../src/db/index.ts";
import {
  Keyring,
  openVault,
  PostgresCredentialStore,
  VaultCorruptError,
  VaultKeyError,
} from "../../src/vault/index.ts";
import { VAULT_MIGRATIONS } from "../../src/vault/postgres/schema.ts";
import { closedPort } from "../support/closed-port.ts";
import { skipWithoutPostgres, testPostgres } from "../support/postgres.ts";
import { newKey, sampleInput, tempHome, token, tokenValues } from "./helpers.ts";

const PG = await testPostgres();

/** The current key of a home's vault.key file, as AGENTAUTH_VAULT_KEY text. */
function keyFileKey(home: string): string {
  const file = JSON.parse(readFileSync(join(home, "vault.key"), "utf8")) as {
    current: string;
    keys: Record<string, string>;
  };
  return file.keys[file.current] as string;
}

const keyBytes = () => Buffer.from(newKey(), "base64");

async function fresh(t: TestContext) {
  if (skipWithoutPostgres(t, PG)) return undefined;
  const url = await PG.freshDatabase();
  const admin = new pg.Client({ connectionString: url });
  await admin.connect();
  t.after(() => admin.end());
  const open = (keyring: Keyring | (() => Keyring)) => {
    const store = new PostgresCredentialStore({ url, keyring });
    t.after(() => store.close());
    return store;
  };
  return { url, admin, open };
}

test("[PG-vault-at-rest] no token, client secret or lease note secret appears anywhere in the database", async (t) => {
  const s = await fresh(t);
  if (!s) return;
  const store = s.open(new Keyring(keyBytes()));
  const clientSecret = token("cs");
  const inputs = [
    sampleInput({ subject: "alice" }),
    sampleInput({
      subject: "bob",
      tokens: { ...sampleInput().tokens, clientSecret: secret(clientSecret) },
    }),
  ];
  for (const input of inputs) await store.put(input);
  await store.acquireLease("refresh:x", "me", 30_000);
  await store.setLeaseNote("refresh:x", "me", "intent");
  const tables = await s.admin.query(
    "SELECT table_name FROM information_schema.tables WHERE table_schema = 'public'",
  );
  assert.ok(tables.rows.length >= 3, "credentials, leases and the schema table");
  let everything = "";
  for (const { table_name } of tables.rows) {
    const rows = await s.admin.query(`SELECT t::text AS line FROM "${table_name}" t`);
    everything += rows.rows.map((r) => r.line).join("\n");
  }
  assert.ok(everything.includes("alice@example.com"), "the search does see the rows");
  for (const value of [...inputs.flatMap(tokenValues), clientSecret]) {
    assert.equal(everything.includes(value), false, "a secret is stored in the clear");
  }
  assert.equal((await store.get(inputs[1]!))?.tokens.clientSecret?.reveal(), clientSecret);
});

test("[PG-vault-corrupt-rows] a damaged row is vault_record_corrupt, named in listReport, and the others still list", async (t) => {
  const s = await fresh(t);
  if (!s) return;
  const store = s.open(new Keyring(keyBytes()));
  const damage: [string, string][] = [
    ["scopes", "UPDATE vault_credentials SET scopes = 'not json' WHERE subject = $1"],
    ["status", "UPDATE vault_credentials SET status = 'weird' WHERE subject = $1"],
    ["has_access", "UPDATE vault_credentials SET has_access = 7 WHERE subject = $1"],
    ["id", "UPDATE vault_credentials SET id = 'moved' WHERE subject = $1"],
    ["account", "UPDATE vault_credentials SET account = '[1]' WHERE subject = $1"],
    ["client_id", "UPDATE vault_credentials SET client_id = NULL WHERE subject = $1"],
    // Beyond 2^53: a number JavaScript cannot hold exactly, so compare-and-swap on it could not be trusted.
    ["version", "UPDATE vault_credentials SET version = 9007199254740993 WHERE subject = $1"],
  ];
  await store.put(sampleInput({ subject: "healthy" }));
  for (const [column, sql] of damage) {
    await store.put(sampleInput({ subject: `bad-${column}` }));
    await s.admin.query(sql, [`bad-${column}`]);
  }
  const report = await store.listReport();
  assert.deepEqual(
    report.credentials.map((c) => c.subject),
    ["healthy"],
  );
  assert.equal(report.unreadable.length, damage.length);
  for (const entry of report.unreadable) {
    assert.equal(entry.code, "vault_record_corrupt");
    assert.match(entry.message, /agentauth vault delete/);
  }
  assert.deepEqual(
    (await store.list()).map((c) => c.subject),
    ["healthy"],
  );
  const badScopes = report.unreadable.find((u) => u.subject === "bad-scopes")!;
  await assert.rejects(store.getById(badScopes.id), VaultCorruptError);
  // Damaged sealed tokens: the summary reads, the record does not.
  await s.admin.query("UPDATE vault_credentials SET ciphertext = '' WHERE subject = 'healthy'");
  await assert.rejects(store.get(sampleInput({ subject: "healthy" })), {
    code: "vault_record_corrupt",
  });
  assert.equal(await store.deleteById(badScopes.id), true, "a damaged row can still be deleted");
});

test("[PG-vault-persistence] records survive closing and reopening; openVault picks PostgreSQL from AGENTAUTH_DATABASE_URL", async (t) => {
  if (skipWithoutPostgres(t, PG)) return;
  const url = await PG.freshDatabase();
  const env = { AGENTAUTH_DATABASE_URL: url, AGENTAUTH_VAULT_KEY: newKey() };
  const input = sampleInput();
  const first = openVault({ env });
  assert.ok(first instanceof PostgresCredentialStore);
  const written = await first.put(input);
  await first.close();
  await assert.rejects(first.get(input), { code: "database_failed" }, "a closed store says so");
  const second = openVault({
    env: { AGENTAUTH_VAULT_KEY: env.AGENTAUTH_VAULT_KEY },
    databaseUrl: url,
  });
  t.after(() => second.close());
  assert.deepEqual(await second.get(input), written);
  assert.deepEqual(tokenValues((await second.getById(written.id))!), tokenValues(input));
  assert.equal(second.location, redactDatabaseUrl(url));
  assert.equal(second.path, second.location);
});

test("[PG-vault-concurrent-open] 8 stores opening one fresh database at once apply the schema once and all work", async (t) => {
  const s = await fresh(t);
  if (!s) return;
  const keyring = new Keyring(keyBytes());
  const stores = Array.from({ length: 8 }, () => s.open(keyring));
  await Promise.all(stores.map((store, i) => store.put(sampleInput({ subject: `s${i}` }))));
  const applied = await s.admin.query(
    "SELECT version FROM agentauth_schema WHERE component = 'vault' ORDER BY version",
  );
  assert.deepEqual(
    applied.rows.map((r) => r.version),
    VAULT_MIGRATIONS.map((m) => m.version),
  );
  assert.equal((await stores[0]!.list()).length, 8);
});

test("[PG-vault-hostile-input] key columns with quotes, NULs-free unicode and SQL fragments round-trip as data", async (t) => {
  const s = await fresh(t);
  if (!s) return;
  const store = s.open(new Keyring(keyBytes()));
  const subject = "x'); DROP TABLE vault_credentials; --";
  const issuer = "https://as.example/ünïcode?q=$1";
  await store.put(sampleInput({ subject, issuer }));
  assert.equal((await store.get(sampleInput({ subject, issuer })))?.subject, subject);
  assert.equal((await store.list({ subject: "%" })).length, 0, "filters are values, not patterns");
  assert.equal((await store.list({ subject })).length, 1);
});

test("[PG-vault-key-rotation] rotating the key with no downtime: both key sets read everything, then only the new key is needed", async (t) => {
  const s = await fresh(t);
  if (!s) return;
  const [oldKey, newKeyBytes] = [keyBytes(), keyBytes()];
  const before = s.open(new Keyring(oldKey)); // an instance not yet told about the new key
  await before.put(sampleInput({ subject: "r1" }));
  // Step 1: every instance learns the new key while still writing with the old one.
  const a = s.open(new Keyring(oldKey, [newKeyBytes]));
  // Step 2: instances switch to writing with the new key, keeping the old one to read.
  const b = s.open(new Keyring(newKeyBytes, [oldKey]));
  await a.put(sampleInput({ subject: "r2" }));
  await b.put(sampleInput({ subject: "r3" }));
  const subjects = ["r1", "r2", "r3"];
  for (const store of [a, b]) {
    for (const subject of subjects)
      assert.equal((await store.get(sampleInput({ subject })))?.subject, subject);
  }
  // Why step 1 comes first: an instance with only the old key cannot read what step 2 writes.
  await assert.rejects(before.get(sampleInput({ subject: "r3" })), { code: "vault_key_unknown" });
  // Step 3: re-seal what is left under the old key.
  assert.deepEqual(await b.reencrypt(), { rewritten: 2 });
  const kids = await s.admin.query("SELECT DISTINCT kid FROM vault_credentials");
  assert.deepEqual(
    kids.rows.map((r) => r.kid),
    [b.currentKid],
  );
  // Step 4: the old key can go.
  const after = s.open(new Keyring(newKeyBytes));
  for (const subject of subjects)
    assert.equal((await after.get(sampleInput({ subject })))?.subject, subject);
  assert.deepEqual(await b.reencrypt(), { rewritten: 0 });
});

test("[PG-vault-errors-no-password] unreachable server, missing database and malformed URLs give typed errors without the password", async (t) => {
  if (skipWithoutPostgres(t, PG)) return;
  const password = `pw-SECRET-${Date.now()}`;
  const keyring = new Keyring(keyBytes());
  const port = await closedPort();
  const missing = new URL(PG.adminUrl);
  missing.pathname = "/no_such_database";
  missing.username ||= "postgres";
  missing.password = password;
  const cases: [string, string, string[]][] = [
    [
      "unreachable",
      `postgres://agentauth:${password}@127.0.0.1:${port}/agentauth`,
      ["database_unavailable"],
    ],
    ["missing database", missing.toString(), ["database_unavailable", "database_failed"]],
    ["unparseable", `postgres://agentauth:${password}@[::1/agentauth`, ["database_url_invalid"]],
  ];
  for (const [what, url, codes] of cases) {
    const store = new PostgresCredentialStore({ url, keyring });
    t.after(() => store.close());
    const error = await store.list().then(
      () => assert.fail(`${what}: listing succeeded`),
      (e: unknown) => e,
    );
    assert.ok(error instanceof DatabaseError, `${what}: ${inspect(error)}`);
    assert.ok(codes.includes(error.code), `${what}: ${error.code}`);
    for (const text of [error.message, JSON.stringify(error), inspect(error, { depth: 5 })]) {
      assert.equal(text.includes(password), false, `${what}: the password leaked`);
    }
    t.diagnostic(`${what}: ${error.code}: ${error.message}`);
  }
  assert.throws(
    () => new PostgresCredentialStore({ url: `mysql://u:${password}@h/db`, keyring }),
    (e: unknown) =>
      e instanceof DatabaseError &&
      e.code === "database_url_invalid" &&
      !e.message.includes(password),
  );
});

test("[PG-vault-key-mismatch] a second machine that made a key of its own cannot write into a shared vault sealed with another key: a typed error says to share AGENTAUTH_VAULT_KEY", async (t) => {
  if (skipWithoutPostgres(t, PG)) return;
  const url = await PG.freshDatabase();
  // Two machines: each has its own AGENTAUTH_HOME, neither sets AGENTAUTH_VAULT_KEY, so each creates vault.key.
  const homeA = tempHome(t);
  const machineA = openVault({ databaseUrl: url, home: homeA, env: {} });
  t.after(() => machineA.close());
  const alice = await machineA.put(sampleInput({ subject: "alice" }));
  const machineB = openVault({ databaseUrl: url, home: tempHome(t), env: {} });
  t.after(() => machineB.close());
  const error = await machineB.put(sampleInput({ subject: "bob" })).catch((e) => e);
  assert.ok(error instanceof VaultKeyError, String(error));
  assert.equal(error.code, "vault_key_mismatch");
  assert.match(error.message, /AGENTAUTH_VAULT_KEY/);
  assert.equal((await machineA.list()).length, 1, "nothing was written under B's key");
  assert.ok(await machineA.getById(alice.id));
  // With the shared key, B writes and A reads what it wrote.
  const shared = openVault({
    databaseUrl: url,
    home: tempHome(t),
    env: { AGENTAUTH_VAULT_KEY: keyFileKey(homeA) },
  });
  t.after(() => shared.close());
  const bob = await shared.put(sampleInput({ subject: "bob" }));
  assert.ok(await machineA.getById(bob.id));
});
