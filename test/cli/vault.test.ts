import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { existsSync, readdirSync, statSync } from "node:fs";
import { join } from "node:path";
import { DatabaseSync } from "node:sqlite";
import { test } from "node:test";
import { secret } from "../../src/core/secret.ts";
import { startIdp } from "../../src/idp/index.ts";
import { discoverAuthorizationServer, introspectToken } from "../../src/oauth/index.ts";
import { type CredentialSummary, credentialId, openVault } from "../../src/vault/index.ts";
import { cliDeviceLogin, readStoredTokens, runCli, vaultIdOf } from "../support/cli.ts";
import { CONFIDENTIAL_CLIENT, useIdp } from "../support/idp.ts";
import { tempDir } from "../support/tmp.ts";

const idp = await useIdp({
  clients: [
    {
      ...CONFIDENTIAL_CLIENT,
      grant_types: [...CONFIDENTIAL_CLIENT.grant_types],
      redirect_uris: [...CONFIDENTIAL_CLIENT.redirect_uris],
    },
  ],
});

/** What the server thinks of a token, asked by the confidential test client (which may introspect any token). */
async function isActive(
  issuer: string,
  token: string,
  hint: "access_token" | "refresh_token",
): Promise<boolean> {
  const as = await discoverAuthorizationServer(issuer);
  const client = {
    clientId: CONFIDENTIAL_CLIENT.client_id,
    clientSecret: secret(CONFIDENTIAL_CLIENT.client_secret),
  };
  const response = await introspectToken({ as, client, token: secret(token), tokenTypeHint: hint });
  return response.active;
}

/** Logs in through the CLI into a fresh home; returns the env, the vault id and the raw tokens. */
async function loggedIn(issuer: string) {
  const env = { AGENTAUTH_HOME: tempDir() };
  const login = await cliDeviceLogin(issuer, env);
  assert.equal(login.code, 0, login.stderr);
  const id = vaultIdOf(login.stdout);
  const tokens = await readStoredTokens(env.AGENTAUTH_HOME, id);
  const refreshToken = tokens.refreshToken?.reveal();
  const accessToken = tokens.accessToken?.reveal();
  assert.ok(refreshToken && accessToken);
  return { env, id, refreshToken, accessToken };
}

async function listIds(env: NodeJS.ProcessEnv): Promise<string[]> {
  const result = await runCli(["vault", "list", "--json"], env);
  assert.equal(result.code, 0, result.stderr);
  return (JSON.parse(result.stdout) as CredentialSummary[]).map((row) => row.id);
}

test("[CLI-vault-revoke] vault revoke <id> revokes at the server and deletes the record", {
  timeout: 60_000,
}, async () => {
  const { env, id, refreshToken, accessToken } = await loggedIn(idp.issuer);
  assert.equal(
    await isActive(idp.issuer, refreshToken, "refresh_token"),
    true,
    "active before revocation",
  );
  assert.equal(
    await isActive(idp.issuer, accessToken, "access_token"),
    true,
    "active before revocation",
  );

  const result = await runCli(["vault", "revoke", id], env);
  assert.equal(result.code, 0, result.stderr);
  assert.equal(result.stdout, `Revoked ${id} at ${idp.issuer} and deleted it.\n`);
  assert.deepEqual(await listIds(env), []);
  assert.equal(await isActive(idp.issuer, refreshToken, "refresh_token"), false);
  assert.equal(await isActive(idp.issuer, accessToken, "access_token"), false);
  for (const token of [refreshToken, accessToken]) {
    assert.ok(!result.stdout.includes(token) && !result.stderr.includes(token), "no token printed");
  }
});

test("[CLI-vault-revoke] vault revoke of an unknown id exits 1", async () => {
  const result = await runCli(["vault", "revoke", "nope"], { AGENTAUTH_HOME: tempDir() });
  assert.equal(result.code, 1);
  assert.equal(result.stdout, "");
  assert.equal(
    result.stderr,
    "agentauth: no credential with id nope; run 'agentauth vault list' to see the ids.\n",
  );
});

test("[CLI-vault-revoke] vault delete <id> forgets the record without revoking it", {
  timeout: 60_000,
}, async () => {
  const { env, id, refreshToken } = await loggedIn(idp.issuer);
  const result = await runCli(["vault", "delete", id], env);
  assert.equal(result.code, 0, result.stderr);
  assert.equal(result.stdout, `Deleted ${id} (not revoked at ${idp.issuer}).\n`);
  assert.deepEqual(await listIds(env), []);
  assert.equal(
    await isActive(idp.issuer, refreshToken, "refresh_token"),
    true,
    "still valid at the server",
  );
  const again = await runCli(["vault", "delete", id], env);
  assert.equal(again.code, 1, "deleting twice finds nothing");
});

test("[CLI-vault-revoke-unreachable] with the server down, revoke exits 1, keeps the record and suggests vault delete", {
  timeout: 60_000,
}, async (t) => {
  const down = await startIdp({ autoApproveAs: "alice", deviceIntervalSeconds: 1 });
  t.after(() => down.close());
  const { env, id, refreshToken, accessToken } = await loggedIn(down.issuer);
  await down.close();

  const result = await runCli(["vault", "revoke", id], env);
  assert.equal(result.code, 1);
  assert.equal(result.stdout, "");
  assert.match(result.stderr, new RegExp(`could not revoke ${id} at ${down.issuer}`));
  assert.ok(result.stderr.includes(`run 'agentauth vault delete ${id}'`), result.stderr);
  assert.doesNotMatch(result.stderr, /^\s+at /m);
  assert.ok(!result.stderr.includes(refreshToken) && !result.stderr.includes(accessToken));
  assert.deepEqual(await listIds(env), [id], "the record is kept for a later retry");

  const forget = await runCli(["vault", "delete", id], env);
  assert.equal(forget.code, 0, forget.stderr);
  assert.deepEqual(await listIds(env), []);
});

test("[CLI-vault-revoke] an id beginning with '-' (base64url) is read as the id, not as a flag", async () => {
  const env = { AGENTAUTH_HOME: tempDir() };
  const issuer = "http://127.0.0.1:9";
  let subject = "";
  for (let i = 0; !credentialId({ subject, issuer, resource: "" }).startsWith("-"); i++)
    subject = `user-${i}`;
  const vault = openVault({ env });
  const { id } = await vault.put({
    subject,
    issuer,
    resource: "",
    clientId: "agentauth-cli",
    tokens: { accessToken: secret("at-dash-id") },
    scopes: [],
    account: {},
    status: "active",
  });
  await vault.close();
  assert.ok(id.startsWith("-"));

  const result = await runCli(["vault", "delete", id], env);
  assert.equal(result.code, 0, result.stderr);
  assert.deepEqual(await listIds(env), []);
  const flag = await runCli(["vault", "delete", "--bogus"], env);
  assert.equal(flag.code, 2, "real unknown flags are still usage errors");
});

/** A home with two stored credentials written by the library; returns their ids. */
async function twoCredentials(
  env: NodeJS.ProcessEnv,
): Promise<{ healthy: string; victim: string }> {
  const vault = openVault({ env });
  const base = {
    issuer: "http://127.0.0.1:9",
    resource: "",
    clientId: "agentauth-cli",
    scopes: ["read"],
    account: {},
    status: "active" as const,
  };
  const healthy = await vault.put({
    ...base,
    subject: "bob",
    tokens: { accessToken: secret("at-bob-SECRET") },
  });
  const victim = await vault.put({
    ...base,
    subject: "carol",
    tokens: { accessToken: secret("at-carol-SECRET") },
  });
  await vault.close();
  return { healthy: healthy.id, victim: victim.id };
}

function damage(env: NodeJS.ProcessEnv, id: string, sql: string): void {
  const db = new DatabaseSync(join(env.AGENTAUTH_HOME ?? "", "vault.db"));
  db.prepare(`UPDATE credentials SET ${sql} WHERE id = ?`).run(id);
  db.close();
}

test("[CLI-vault-list-corrupt] one row with a corrupt display column is flagged; every other row is still listed", async () => {
  const env = { AGENTAUTH_HOME: tempDir() };
  const { healthy, victim } = await twoCredentials(env);
  damage(env, victim, "scopes = '{not json'");

  const table = await runCli(["vault", "list"], env);
  assert.equal(table.code, 0, table.stderr);
  assert.match(table.stdout, new RegExp(`^${healthy.replace(/[-_]/g, "\\$&")}\\s+bob`, "m"));
  assert.ok(table.stdout.includes(victim), table.stdout);
  assert.ok(
    table.stdout.includes(`agentauth vault delete ${victim}`) ||
      table.stderr.includes(`agentauth vault delete ${victim}`),
    `${table.stdout}${table.stderr}`,
  );

  const json = await runCli(["vault", "list", "--json"], env);
  assert.equal(json.code, 0, json.stderr);
  const rows = JSON.parse(json.stdout) as (CredentialSummary & { unreadable?: { code: string } })[];
  assert.deepEqual(
    rows.map((r) => [r.id, r.unreadable?.code]),
    [
      [healthy, undefined],
      [victim, "vault_record_corrupt"],
    ],
  );
  for (const out of [table, json]) assert.ok(!`${out.stdout}${out.stderr}`.includes("SECRET"));
});

test("[CLI-vault-delete-undecryptable] vault delete and vault revoke remove a row that cannot be decrypted, and say it was not revoked", async () => {
  for (const sub of ["delete", "revoke"]) {
    const env = { AGENTAUTH_HOME: tempDir() };
    const { healthy, victim } = await twoCredentials(env);
    // Flip the ciphertext: the GCM tag no longer verifies (vault_decrypt_failed), as with a wrong key.
    damage(env, victim, "ciphertext = 'A' || substr(ciphertext, 2)");
    const result = await runCli(["vault", sub, victim], env);
    assert.equal(result.code, 0, `${sub}: ${result.stderr}`);
    assert.match(result.stdout, new RegExp(`Deleted ${victim.replace(/[-_]/g, "\\$&")}`));
    assert.match(result.stdout, /not revoked/);
    if (sub === "revoke") assert.match(result.stdout, /cannot be (read|decrypted)/);
    assert.deepEqual(await listIds(env), [healthy], `${sub} removed only the bad row`);
    assert.ok(!`${result.stdout}${result.stderr}`.includes("SECRET"));
  }
});

test("[CLI-vault-readonly] vault list with a missing AGENTAUTH_HOME creates no folder, database or key", async () => {
  const home = join(tempDir(), "not-yet");
  const env = { AGENTAUTH_HOME: home };
  const table = await runCli(["vault", "list"], env);
  assert.equal(table.code, 0, table.stderr);
  assert.match(table.stdout, /empty|does not exist yet/);
  assert.ok(table.stdout.includes(home), "names where the vault would be");
  const json = await runCli(["vault", "list", "--json"], env);
  assert.equal(json.code, 0, json.stderr);
  assert.deepEqual(JSON.parse(json.stdout), []);
  for (const sub of ["delete", "revoke"]) {
    const missing = await runCli(["vault", sub, "abcdefghijk"], env);
    assert.equal(missing.code, 1);
    assert.match(missing.stderr, /no credential with id abcdefghijk/);
  }
  assert.equal(existsSync(home), false, "nothing was created");
});

test("[CLI-vault-readonly] vault list on an existing vault changes no file (no key created, database opened read-only)", async () => {
  const home = tempDir();
  // Written with an environment key, listed without one: listing needs no key, so none may be created.
  await twoCredentials({
    AGENTAUTH_HOME: home,
    AGENTAUTH_VAULT_KEY: randomBytes(32).toString("base64"),
  });
  // SQLite's -wal/-shm companions may appear (a read-only connection cannot remove them); they hold no data.
  const files = () =>
    readdirSync(home)
      .filter((f) => !/-(wal|shm)$/.test(f))
      .sort();
  const before = files();
  const stamp = statSync(join(home, "vault.db")).mtimeMs;
  const table = await runCli(["vault", "list"], { AGENTAUTH_HOME: home });
  assert.equal(table.code, 0, table.stderr);
  assert.deepEqual(files(), before, "no vault.key, no new file");
  assert.equal(statSync(join(home, "vault.db")).mtimeMs, stamp);
});

test("[CLI-vault-revoke-wrong-key] revoke of a row sealed with a key this environment lacks keeps it and says how to fix", async () => {
  const home = tempDir();
  const written = { AGENTAUTH_HOME: home, AGENTAUTH_VAULT_KEY: randomBytes(32).toString("base64") };
  const { healthy, victim } = await twoCredentials(written);
  const other = { AGENTAUTH_HOME: home, AGENTAUTH_VAULT_KEY: randomBytes(32).toString("base64") };
  const result = await runCli(["vault", "revoke", victim], other);
  assert.equal(result.code, 1, result.stdout);
  assert.match(result.stderr, /AGENTAUTH_VAULT_KEY/);
  assert.ok(result.stderr.includes(`agentauth vault delete ${victim}`), result.stderr);
  assert.deepEqual(
    (await listIds(written)).sort(),
    [healthy, victim].sort(),
    "nothing was deleted",
  );
  const forget = await runCli(["vault", "delete", victim], other);
  assert.equal(forget.code, 0, forget.stderr);
  assert.deepEqual(await listIds(written), [healthy]);
});
