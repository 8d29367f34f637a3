/**
 * `agentauth vault reencrypt`, the third step of a key rotation with no downtime (docs/deploy.md): run with the new
 * key current and the old one previous, it re-seals every row, after which the new key alone reads everything. On
 * the SQLite vault and on PostgreSQL, through the real CLI process.
 */

import assert from "node:assert/strict";
import { type TestContext, test } from "node:test";
import { openVault } from "../../src/vault/index.ts";
import { runCli } from "../support/cli.ts";
import { skipWithoutPostgres, testPostgres } from "../support/postgres.ts";
import { newKey, sampleInput, tempHome } from "./helpers.ts";

const PG = await testPostgres();

async function rotation(t: TestContext, databaseUrl: string | undefined): Promise<void> {
  const home = tempHome(t);
  const [oldKey, newKey_] = [newKey(), newKey()];
  const where = databaseUrl ? { AGENTAUTH_DATABASE_URL: databaseUrl } : {};
  const before = openVault({ home, env: { AGENTAUTH_VAULT_KEY: oldKey, ...where } });
  const alice = sampleInput({ subject: "alice" });
  const a = await before.put(alice);
  const b = await before.put(sampleInput({ subject: "bob" }));
  await before.close();

  const env = { AGENTAUTH_HOME: home, ...where };
  const run = await runCli(["vault", "reencrypt", "--json"], {
    ...env,
    AGENTAUTH_VAULT_KEY: newKey_,
    AGENTAUTH_VAULT_PREVIOUS_KEYS: oldKey,
  });
  assert.equal(run.code, 0, run.stderr);
  const outcome = JSON.parse(run.stdout) as { rewritten: number; kid: string };
  assert.equal(outcome.rewritten, 2);
  assert.ok(!run.stdout.includes(newKey_) && !run.stderr.includes(oldKey));

  const again = await runCli(["vault", "reencrypt"], {
    ...env,
    AGENTAUTH_VAULT_KEY: newKey_,
    AGENTAUTH_VAULT_PREVIOUS_KEYS: oldKey,
  });
  assert.equal(again.code, 0, again.stderr);
  assert.match(again.stdout, /already sealed under key .*; nothing to do/);

  // The old key can go: the new one alone opens every row.
  const after = openVault({ home, env: { AGENTAUTH_VAULT_KEY: newKey_, ...where } });
  t.after(() => after.close());
  assert.equal(
    (await after.getById(a.id))?.tokens.accessToken?.reveal(),
    alice.tokens.accessToken?.reveal(),
  );
  assert.ok(await after.getById(b.id));
  assert.equal(after.currentKid, outcome.kid);
}

test("[VAULT-cli-reencrypt] vault reencrypt re-seals every row under the new key on the SQLite vault; the old key can then go", async (t) => {
  await rotation(t, undefined);
});

test("[PG-vault-cli-reencrypt] vault reencrypt does the same on PostgreSQL", async (t) => {
  if (skipWithoutPostgres(t, PG)) return;
  await rotation(t, await PG.freshDatabase());
});

test("[VAULT-cli-reencrypt-usage] vault reencrypt takes no arguments and has its own --help; without the old key it fails typed", async (t) => {
  const home = tempHome(t);
  const extra = await runCli(["vault", "reencrypt", "abc", "--json"], { AGENTAUTH_HOME: home });
  assert.equal(extra.code, 2);
  const help = await runCli(["vault", "reencrypt", "--help"], { AGENTAUTH_HOME: home });
  assert.equal(help.code, 0);
  assert.match(help.stdout, /docs\/deploy\.md/);
  const key = newKey();
  const vault = openVault({ home, env: { AGENTAUTH_VAULT_KEY: key } });
  await vault.put(sampleInput());
  await vault.close();
  const lost = await runCli(["vault", "reencrypt", "--json"], {
    AGENTAUTH_HOME: home,
    AGENTAUTH_VAULT_KEY: newKey(),
  });
  assert.equal(lost.code, 1, lost.stdout + lost.stderr);
  assert.equal(JSON.parse(lost.stdout).error.code, "vault_key_unknown");
  assert.ok(!lost.stdout.includes(key));
});
