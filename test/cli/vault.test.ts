import assert from "node:assert/strict";
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
  assert.equal(result.stderr, "agentauth: no credential with id nope\n");
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
