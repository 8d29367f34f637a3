/**
 * Refresh under kill -9 and races, with real processes, the real SQLite vault and the real embedded server: a dead
 * lease holder is replaced at once, an interrupted refresh is explained, and invalid_grant re-reads the store.
 */

import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { join } from "node:path";
import { type TestContext, test } from "node:test";
import {
  discoverAuthorizationServer,
  LoginRequiredError,
  revokeTokens,
  TokenRefresher,
} from "../../src/oauth/index.ts";
import { type CredentialRecord, openVault } from "../../src/vault/index.ts";
import { expireAccessToken, loginForTest, TEST_RESOURCE } from "../support/credentials.ts";
import { useIdp } from "../support/idp.ts";
import { tempDir } from "../support/tmp.ts";
import { HookedStore } from "./fixtures/hooked-store.ts";

const idp = await useIdp();
const WORKER = join(import.meta.dirname, "fixtures", "refresh-killed-worker.ts");

/** Starts the worker, waits until it reports it stopped where asked, kills it with SIGKILL and waits for its end. */
async function killMidRefresh(
  t: TestContext,
  home: string,
  record: CredentialRecord,
  stopAt: "intent" | "commit",
): Promise<void> {
  const child = spawn(process.execPath, ["--no-warnings", WORKER], {
    env: {
      PATH: process.env.PATH,
      AGENTAUTH_HOME: home,
      SUBJECT: record.subject,
      ISSUER: record.issuer,
      RESOURCE: record.resource,
      STOP_AT: stopAt,
    },
    stdio: ["ignore", "pipe", "pipe"],
  });
  t.after(() => {
    if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
  });
  let out = "";
  let err = "";
  child.stderr.on("data", (d) => {
    err += d;
  });
  const exited = new Promise<NodeJS.Signals | null>((resolve) =>
    child.on("close", (_code, signal) => resolve(signal)),
  );
  await new Promise<void>((resolve, reject) => {
    child.stdout.on("data", (d) => {
      out += d;
      if (out.includes('"stopped"')) resolve();
    });
    exited.then(() => reject(new Error(`worker ended early: ${out} ${err}`)));
  });
  child.kill("SIGKILL");
  assert.equal(await exited, "SIGKILL");
}

async function dueCredential(home: string) {
  const store = openVault({ env: { AGENTAUTH_HOME: home } });
  const record = await expireAccessToken(
    store,
    await loginForTest(idp, store, { resource: TEST_RESOURCE }),
  );
  return {
    store,
    record,
    key: { subject: record.subject, issuer: record.issuer, resource: record.resource },
  };
}

test("[REFRESH-dead-lease-owner] a process killed -9 while holding the refresh lease does not block the next refresher until the TTL", async (t) => {
  const home = tempDir();
  const { store, record, key } = await dueCredential(home);
  t.after(() => store.close());
  await killMidRefresh(t, home, record, "intent");

  // A 10-minute lease TTL: only dead-owner detection can let this refresh through before the wait times out.
  const refresher = new TokenRefresher({ store, leaseTtlMs: 600_000, waitTimeoutMs: 20_000 });
  idp.resetStats();
  const fresh = await refresher.getCredential(key);
  assert.ok(fresh.version > record.version);
  assert.notEqual(fresh.tokens.accessToken?.reveal(), record.tokens.accessToken?.reveal());
  assert.deepEqual(idp.stats.byGrant.refresh_token, { success: 1, error: 0 });
});

test("[REFRESH-interrupted-after-rotation] a kill after the server rotated the refresh token and before the commit is named in the login_required error", async (t) => {
  const home = tempDir();
  const { store, record, key } = await dueCredential(home);
  t.after(() => store.close());
  await killMidRefresh(t, home, record, "commit");

  const refresher = new TokenRefresher({ store, leaseTtlMs: 600_000, waitTimeoutMs: 20_000 });
  const failure = await refresher.getCredential(key).then(
    () => undefined,
    (error: unknown) => error,
  );
  // What remains (docs/architecture.md): the rotated token died with the process; only a new sign-in helps.
  assert.ok(failure instanceof LoginRequiredError, String(failure));
  assert.equal(failure.code, "login_required");
  assert.match(failure.message, /interrupted/);
  assert.match(failure.message, /sign in again/i);
  for (const value of [record.tokens.refreshToken?.reveal(), record.tokens.accessToken?.reveal()])
    assert.ok(!failure.message.includes(value ?? "\u0000"), "no token in the message");
  assert.equal((await store.get(key))?.status, "login_required");
});

test("[REFRESH-invalid-grant-reread] invalid_grant for a refresh token another writer already replaced returns the stored credential instead of login_required", async (t) => {
  const home = tempDir();
  const { store: sqlite, record, key } = await dueCredential(home);
  t.after(() => sqlite.close());
  const store = new HookedStore(sqlite);
  // While our request is about to leave: the person signs in again (a new credential is stored) and the old
  // refresh token is revoked, so the server answers our request with a real invalid_grant.
  let relogged: CredentialRecord | undefined;
  store.hooks.afterIntent = async () => {
    relogged = await loginForTest(idp, sqlite, { resource: TEST_RESOURCE });
    const as = await discoverAuthorizationServer(record.issuer);
    await revokeTokens({
      as,
      client: { clientId: record.clientId },
      refreshToken: record.tokens.refreshToken,
    });
  };
  const refresher = new TokenRefresher({ store });
  idp.resetStats();
  const result = await refresher.getCredential(key);
  assert.equal(
    idp.stats.byGrant.refresh_token?.error,
    1,
    "the server did refuse our refresh token",
  );
  assert.ok(relogged);
  assert.equal(result.version, relogged.version);
  assert.equal(result.tokens.accessToken?.reveal(), relogged.tokens.accessToken?.reveal());
  assert.equal((await sqlite.get(key))?.status, "active");
});
