/**
 * Single-flight refresh across 4 OS processes sharing one vault (issue 11 §3), with the real embedded authorization
 * server (refresh-token rotation on), a real throwaway PostgreSQL server, and real kill -9:
 * - 1,000 concurrent callers of a due credential spread over 4 processes → one refresh_token grant, no invalid_grant
 *   (on PostgreSQL and, for comparison, on the SQLite vault);
 * - the lease holder killed while its token request is held before the server reads it → the others take over as
 *   soon as PostgreSQL drops its connection (well before the 60 s lease TTL) and every caller is served;
 * - the lease holder killed after the server rotated the refresh token but before the answer reached it → the
 *   others get invalid_grant and fail with login_required saying the earlier refresh was interrupted (the loss
 *   docs/deploy.md states).
 */

import assert from "node:assert/strict";
import { createHash, randomBytes } from "node:crypto";
import { join } from "node:path";
import { type TestContext, test } from "node:test";
import { TokenRefresher } from "../../src/oauth/index.ts";
import {
  type CredentialKey,
  type CredentialRecord,
  type CredentialStore,
  openVault,
  PostgresCredentialStore,
  SqliteCredentialStore,
} from "../../src/vault/index.ts";
import { expireAccessToken, loginForTest, TEST_RESOURCE } from "../support/credentials.ts";
import { type FleetWorker, startWorker } from "../support/fleet.ts";
import { useIdp } from "../support/idp.ts";
import { skipWithoutPostgres, testPostgres } from "../support/postgres.ts";
import { tempDir } from "../support/tmp.ts";
import { holdNextRefresh } from "../support/token-hold.ts";
import type { FleetOrders, FleetReport } from "./fixtures/refresh-fleet-worker.ts";

const PG = await testPostgres();
const idp = await useIdp();
const WORKER = join(import.meta.dirname, "fixtures", "refresh-fleet-worker.ts");
const PROCESSES = 4;
const CALLERS = 250;
// The kill scenarios: a lease TTL no takeover could wait for, so only the server dropping the holder explains one.
const LEASE_TTL_MS = 60_000;
const WAIT_TIMEOUT_MS = 120_000;
const SCENARIO_TIMEOUT = { timeout: 240_000 };

const digest = (value: string | undefined) =>
  createHash("sha256")
    .update(value ?? "")
    .digest("hex");

/** The environment the test and its workers open the vault with; the vault key is in it, never in argv. */
async function vaultEnv(backend: "postgres" | "sqlite"): Promise<NodeJS.ProcessEnv> {
  const env: NodeJS.ProcessEnv = {
    PATH: process.env.PATH,
    AGENTAUTH_HOME: tempDir(),
    AGENTAUTH_VAULT_KEY: randomBytes(32).toString("base64"),
  };
  if (backend === "postgres") env.AGENTAUTH_DATABASE_URL = await PG?.freshDatabase();
  return env;
}

async function openShared(env: NodeJS.ProcessEnv): Promise<CredentialStore> {
  const store = await openVault({ env });
  if (env.AGENTAUTH_DATABASE_URL) {
    assert.ok(store instanceof PostgresCredentialStore, "openVault chose PostgreSQL");
  } else {
    assert.ok(store instanceof SqliteCredentialStore, "openVault chose SQLite");
  }
  return store;
}

/** A real sign-in stored in the shared vault, its access token made due for refresh. */
async function dueCredential(env: NodeJS.ProcessEnv): Promise<{
  record: CredentialRecord;
  key: CredentialKey;
}> {
  const store = await openShared(env);
  try {
    const record = await expireAccessToken(
      store,
      await loginForTest(idp, store, { resource: TEST_RESOURCE }),
    );
    assert.ok(record.tokens.refreshToken, "the sign-in gave a refresh token");
    return {
      record,
      key: { subject: record.subject, issuer: record.issuer, resource: record.resource },
    };
  } finally {
    await store.close();
  }
}

/** Starts the workers, hands each its orders on stdin and waits until all are ready for the start line. */
async function startFleet(
  t: TestContext,
  env: NodeJS.ProcessEnv,
  orders: FleetOrders,
): Promise<FleetWorker[]> {
  const workers = Array.from({ length: PROCESSES }, () => startWorker(t, WORKER, env));
  for (const worker of workers) worker.send(JSON.stringify(orders));
  await Promise.all(workers.map((worker) => worker.waitFor("ready")));
  return workers;
}

/** Every worker's final report, and each must have exited on its own with code 0 (nothing crashed). */
async function reportsOf(workers: FleetWorker[]): Promise<FleetReport[]> {
  const reports = await Promise.all(
    workers.map((worker) => worker.waitFor<FleetReport>("done", WAIT_TIMEOUT_MS + 30_000)),
  );
  for (const worker of workers) {
    const { code, signal } = await worker.exited;
    assert.equal(code, 0, `worker ${worker.pid} exited ${code ?? signal}: ${worker.stderr()}`);
  }
  return reports;
}

/** The process that printed the refresh intent (it holds the lease and its token request is out). */
function leaseHolder(workers: FleetWorker[]): Promise<FleetWorker> {
  return Promise.any(workers.map((worker) => worker.waitFor("intent").then(() => worker)));
}

/** The stored refresh token was rotated and the server still accepts it: a forced refresh with it succeeds. */
async function assertStoredRefreshTokenWorks(
  env: NodeJS.ProcessEnv,
  key: CredentialKey,
  before: CredentialRecord,
): Promise<void> {
  const store = await openShared(env);
  try {
    const stored = await store.get(key);
    assert.equal(stored?.status, "active");
    assert.notEqual(
      digest(stored?.tokens.refreshToken?.reveal()),
      digest(before.tokens.refreshToken?.reveal()),
      "the vault holds the rotated refresh token",
    );
    const grants = idp.stats.byGrant.refresh_token?.success ?? 0;
    const again = await new TokenRefresher({ store }).forceRefresh(key);
    assert.ok(again.version > (stored?.version ?? 0));
    assert.equal(idp.stats.byGrant.refresh_token?.success, grants + 1);
  } finally {
    await store.close();
  }
}

async function singleFlightAcrossProcesses(t: TestContext, backend: "postgres" | "sqlite") {
  const env = await vaultEnv(backend);
  const { record, key } = await dueCredential(env);
  const workers = await startFleet(t, env, { key, count: CALLERS });
  idp.resetStats();
  const go = Date.now();
  for (const worker of workers) worker.send("go");
  const reports = await reportsOf(workers);

  assert.deepEqual(
    idp.stats.byGrant.refresh_token,
    { success: 1, error: 0 },
    "exactly one refresh reached the token endpoint",
  );
  assert.deepEqual(idp.stats.errors, [], "no invalid_grant or other refusal");
  for (const report of reports) {
    assert.deepEqual(report.errorCodes, {}, `worker ${report.pid}: ${report.errorMessages}`);
    assert.equal(report.succeeded, CALLERS);
  }
  assert.equal(
    reports.reduce((sum, r) => sum + r.succeeded, 0),
    PROCESSES * CALLERS,
  );
  const digests = new Set(reports.flatMap((r) => r.digests));
  assert.equal(digests.size, 1, "every caller in every process got the same access token");
  assert.ok(!digests.has(digest(record.tokens.accessToken?.reveal())), "a new access token");
  const holders = workers.filter((worker) => worker.lines.some((line) => "intent" in line));
  assert.equal(holders.length, 1, "one process recorded a refresh intent");
  await assertStoredRefreshTokenWorks(env, key, record);

  t.diagnostic(
    `${backend}: ${PROCESSES * CALLERS} callers served in ${Math.max(...reports.map((r) => r.settledAt)) - go} ms ` +
      `after the start line; per process (first success, last settled, ms after start): ` +
      reports
        .map((r) => `${r.pid}: ${(r.firstSuccessAt ?? Number.NaN) - go}/${r.settledAt - go}`)
        .join(", "),
  );
}

test(
  "[PG-refresh-single-flight-4-processes] 4 OS processes × 250 concurrent callers of a due credential on one PostgreSQL vault: one refresh_token grant, no invalid_grant, one new token for all, the rotated refresh token stored",
  SCENARIO_TIMEOUT,
  async (t) => {
    if (skipWithoutPostgres(t, PG)) return;
    await singleFlightAcrossProcesses(t, "postgres");
  },
);

test(
  "[VAULT-refresh-single-flight-4-processes-sqlite] the same 4 × 250 callers on one SQLite vault file: one refresh_token grant, no invalid_grant, one new token for all, the rotated refresh token stored",
  SCENARIO_TIMEOUT,
  async (t) => {
    await singleFlightAcrossProcesses(t, "sqlite");
  },
);

/** Starts the fleet with a hold armed, waits until the lease holder's request is held, kills it with SIGKILL. */
async function killHolderMidRefresh(
  t: TestContext,
  env: NodeJS.ProcessEnv,
  key: CredentialKey,
  mode: "before-grant" | "after-grant",
) {
  const workers = await startFleet(t, env, {
    key,
    count: CALLERS,
    leaseTtlMs: LEASE_TTL_MS,
    waitTimeoutMs: WAIT_TIMEOUT_MS,
  });
  idp.resetStats();
  const hold = holdNextRefresh(idp, mode);
  t.after(() => hold.disarm());
  for (const worker of workers) worker.send("go");
  await withTimeout(hold.held, 60_000, "no token request reached the server");
  const holder = await withTimeout(leaseHolder(workers), 60_000, "no process took the lease");
  const killedAt = Date.now();
  holder.kill("SIGKILL");
  assert.equal((await holder.exited).signal, "SIGKILL");
  await withTimeout(hold.released, 60_000, "the held request's connection did not close");
  const others = workers.filter((worker) => worker !== holder);
  return { killedAt, holder, others, reports: await reportsOf(others) };
}

/** Scenario 3a: the holder dies before the server read its request; nothing is lost. */
async function killHolderBeforeGrant(t: TestContext, backend: "postgres" | "sqlite") {
  const env = await vaultEnv(backend);
  const { record, key } = await dueCredential(env);
  const { killedAt, others, reports } = await killHolderMidRefresh(t, env, key, "before-grant");

  for (const report of reports) {
    assert.deepEqual(report.errorCodes, {}, `worker ${report.pid}: ${report.errorMessages}`);
    assert.equal(report.succeeded, CALLERS);
  }
  const digests = new Set(reports.flatMap((r) => r.digests));
  assert.equal(digests.size, 1, "the remaining callers all got the same access token");
  assert.ok(!digests.has(digest(record.tokens.accessToken?.reveal())));
  assert.deepEqual(
    idp.stats.byGrant.refresh_token,
    { success: 1, error: 0 },
    "the killed holder's request never reached the grant; its successor's did, once",
  );
  assert.deepEqual(idp.stats.errors, []);
  const successors = others.filter((worker) => worker.lines.some((line) => "intent" in line));
  assert.equal(successors.length, 1, "one surviving process took over the refresh");
  const firstSuccess = Math.min(
    ...reports.map((r) => r.firstSuccessAt ?? Number.POSITIVE_INFINITY),
  );
  const takeoverMs = firstSuccess - killedAt;
  assert.ok(
    takeoverMs < LEASE_TTL_MS,
    `the takeover (${takeoverMs} ms after the kill) did not wait for the lease TTL`,
  );
  const intentAt = successors[0]?.lines.find((line) => "intent" in line)?.intent as number;
  t.diagnostic(
    `${backend}: kill -9 of the lease holder → successor holds the lease and sends its refresh: ` +
      `${intentAt - killedAt} ms; → first caller served: ${takeoverMs} ms`,
  );
  await assertStoredRefreshTokenWorks(env, key, record);
}

/** Scenario 3b: the holder dies after the server rotated the refresh token; the documented loss. */
async function killHolderAfterRotation(t: TestContext, backend: "postgres" | "sqlite") {
  const env = await vaultEnv(backend);
  const { record, key } = await dueCredential(env);
  const { killedAt, reports } = await killHolderMidRefresh(t, env, key, "after-grant");

  assert.deepEqual(
    idp.stats.byGrant.refresh_token,
    { success: 1, error: 1 },
    "the holder's refresh rotated the token; its successor's one attempt was refused",
  );
  assert.deepEqual(idp.stats.errors, [{ grantType: "refresh_token", error: "invalid_grant" }]);
  for (const report of reports) {
    assert.equal(report.succeeded, 0);
    assert.deepEqual(report.errorCodes, { login_required: CALLERS }, String(report.errorMessages));
  }
  const messages = [...new Set(reports.flatMap((r) => r.errorMessages))];
  assert.ok(
    messages.some((m) => /a refresh started at .* was interrupted/.test(m)),
    `the successor's callers are told the earlier refresh was interrupted: ${messages.join(" | ")}`,
  );
  for (const message of messages) {
    assert.match(message, /sign in again/i);
    for (const value of [record.tokens.refreshToken, record.tokens.accessToken])
      assert.ok(!message.includes(value?.reveal() ?? "\u0000"), "no token in a message");
  }
  const store = await openShared(env);
  try {
    assert.equal((await store.get(key))?.status, "login_required");
  } finally {
    await store.close();
  }
  const lastSettled = Math.max(...reports.map((r) => r.settledAt));
  t.diagnostic(
    `${backend}: kill -9 after rotation → all remaining callers answered ${lastSettled - killedAt} ms later; messages: ` +
      messages.join(" | "),
  );
}

test(
  "[PG-refresh-kill-holder] the lease holder killed -9 while its refresh request is held unread: the others take the lease when PostgreSQL drops its connection, well before the 60 s lease TTL, and all 750 remaining callers get one new token",
  SCENARIO_TIMEOUT,
  async (t) => {
    if (skipWithoutPostgres(t, PG)) return;
    await killHolderBeforeGrant(t, "postgres");
  },
);

test(
  "[VAULT-refresh-kill-holder-sqlite] the same kill on one SQLite vault file: the others take the lease on seeing the holder's pid gone, well before the 60 s lease TTL, and all 750 remaining callers get one new token",
  SCENARIO_TIMEOUT,
  async (t) => {
    await killHolderBeforeGrant(t, "sqlite");
  },
);

test(
  "[PG-refresh-kill-after-rotation] the lease holder killed -9 after the server rotated the refresh token and before the answer reached it: the others get invalid_grant once and fail with login_required naming the interrupted refresh; nothing crashes",
  SCENARIO_TIMEOUT,
  async (t) => {
    if (skipWithoutPostgres(t, PG)) return;
    await killHolderAfterRotation(t, "postgres");
  },
);

test(
  "[VAULT-refresh-kill-after-rotation-sqlite] the same kill after rotation on one SQLite vault file: invalid_grant once, login_required naming the interrupted refresh; nothing crashes",
  SCENARIO_TIMEOUT,
  async (t) => {
    await killHolderAfterRotation(t, "sqlite");
  },
);

function withTimeout<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} within ${ms} ms`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}
