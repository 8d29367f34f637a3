/**
 * The PostgreSQL record cache under faults, with real processes and a real server: the reader's listening connection
 * killed with pg_terminate_backend, the server restarted with -m immediate, the reader frozen (SIGSTOP) past its
 * registration. Whatever happens, no read that starts after a change returned at the writer shows what it replaced;
 * while the cache cannot vouch for its rows, reads go to the database (and fail while it is down, never stale).
 */

import assert from "node:assert/strict";
import { join } from "node:path";
import { type TestContext, test } from "node:test";
import { setTimeout as sleep } from "node:timers/promises";
import pg from "pg";
import { secret } from "../../src/core/secret.ts";
import {
  type CredentialInput,
  Keyring,
  openVault,
  PostgresCredentialStore,
} from "../../src/vault/index.ts";
import { skipWithoutPostgres, testPostgres } from "../support/postgres.ts";
import { type CacheWorker, cacheWorker, staleReads, type WriterOp } from "./cache-check.ts";
import { newKey, tempHome } from "./helpers.ts";

// Commits that returned must survive the restarts: synchronous_commit on (crashSafe).
const PG = await testPostgres({ crashSafe: true });

function credential(i: number, status: "active" | "login_required" = "active"): CredentialInput {
  return {
    subject: "alice",
    issuer: "https://as.example.com",
    resource: "",
    clientId: "cache-test",
    tokens: { accessToken: secret(`at-${i}`), refreshToken: secret(`rt-${i}`) },
    scopes: ["read"],
    account: {},
    status,
  };
}

/** An admin connection that survives the server's restarts (reconnects per statement). */
async function admin(url: string, sql: string, params: unknown[] = []) {
  for (let attempt = 0; ; attempt++) {
    const client = new pg.Client({ connectionString: url });
    client.on("error", () => {});
    try {
      await client.connect();
      return (await client.query(sql, params)).rows;
    } catch (error) {
      if (attempt > 100) throw error;
      await sleep(100);
    } finally {
      await client.end().catch(() => {});
    }
  }
}

/** Listening connections of registered caches (their backends), to kill. */
const listenerPids = (url: string) =>
  admin(url, "SELECT backend_pid FROM vault_cache_instances").then((rows) =>
    rows.map((r) => Number(r.backend_pid)),
  );

/**
 * A writer process changing the credential `ops` times while a reader process reads it in a loop, and `fault`
 * applied repeatedly meanwhile; then the reader's log is checked against the writer's.
 */
async function underFault(
  t: TestContext,
  ops: number,
  fault: (ctx: { url: string; reader: CacheWorker }) => Promise<void>,
  maxPauseMs = 15,
) {
  if (skipWithoutPostgres(t, PG)) return undefined;
  const url = await PG.freshDatabase();
  const env = { AGENTAUTH_DATABASE_URL: url, AGENTAUTH_VAULT_KEY: newKey() };
  const seed = openVault({ env });
  await seed.put(credential(0));
  await seed.close();
  const file = join(tempHome(t), "reads.bin");
  const reader = cacheWorker(t, ["reader", file], env);
  assert.equal((await reader.waitFor((l) => "ready" in l)).serving, true, reader.stderr());
  const writer = cacheWorker(t, ["writer", String(ops), String(maxPauseMs)], env);
  await writer.waitFor((l) => "ready" in l);
  writer.send("go");
  let done = false;
  const finished = writer
    .waitFor((l) => "done" in l)
    .then((l) => {
      done = true;
      return l;
    });
  let faults = 0;
  while (!done) {
    await sleep(250);
    if (done) break;
    await fault({ url, reader });
    faults++;
  }
  const writerDone = await finished;
  // The faults are over: the reader's cache serves again (asked until it says so, with a bound on the tries).
  const asked = new Set<Record<string, unknown>>();
  let servingAgain = false;
  for (let i = 0; i < 500 && !servingAgain; i++) {
    reader.send("status");
    const line = await reader.waitFor((l) => "status" in l && !asked.has(l));
    asked.add(line);
    servingAgain = (line.status as { serving?: boolean } | undefined)?.serving === true;
    if (!servingAgain) await sleep(20);
  }
  reader.send("stop");
  const summary = await reader.waitFor((l) => "reads" in l);
  const changes = writer.lines
    .filter((l) => "op" in l)
    .map((l) => ({ op: Number(l.op), kind: l.kind, at: Number(l.at) }) as WriterOp);
  assert.equal(changes.length, ops);
  const { stale, reads, seen } = staleReads(changes, file);
  const cache = summary.cache as { hits: number; misses: number; restarts: number };
  t.diagnostic(
    `${faults} faults; B: ${reads} reads (${cache.hits} from its cache, ${cache.misses} from the database, ` +
      `${summary.errors} failed), ${cache.restarts} listener restarts, ${seen.size} states seen; A retried ` +
      `${writerDone.retries} times`,
  );
  assert.deepEqual(stale.slice(0, 5), [], `${stale.length} stale reads`);
  assert.ok(servingAgain, "the reader's cache serves again once the faults are over");
  return { faults, cache, errors: Number(summary.errors), url, env };
}

test("[VAULT-pg-cache-fallback-listener-killed] the reader's listening connection ended with pg_terminate_backend again and again: no stale read, it starts over", async (t) => {
  const result = await underFault(t, 60, async ({ url }) => {
    await admin(url, "SELECT pg_terminate_backend(pid) FROM unnest($1::int[]) AS pid", [
      await listenerPids(url),
    ]);
  });
  if (!result) return;
  assert.ok(result.faults > 0);
  assert.ok(result.cache.restarts > 0, "the reader noticed and listened again");
  assert.ok(result.cache.hits > 0, "and served from its cache between the kills");
});

test("[VAULT-pg-cache-fallback-restart] PostgreSQL restarted with -m immediate during the run: no stale read; reads fail while it is down, then the cache serves again", async (t) => {
  if (!PG?.restart) {
    t.skip("needs the throwaway server (restart), not AGENTAUTH_TEST_DATABASE_URL");
    return;
  }
  let restarts = 0;
  const result = await underFault(t, 40, async () => {
    if (restarts >= 2) return;
    restarts++;
    await PG.restart?.("immediate");
  });
  if (!result) return;
  assert.ok(restarts > 0);
  assert.ok(result.cache.restarts > 0, "the reader's listener started over after the crash");
  assert.ok(
    result.errors > 0,
    "reads failed while the server was down (none was answered from memory)",
  );
});

test("[VAULT-pg-cache-frozen-instance] a reader frozen (SIGSTOP) past its registration: the writer goes on without it, and once resumed it serves nothing it held", async (t) => {
  let frozen = 0;
  // Slow enough changes that the writer is still going well after the reader resumes.
  const result = await underFault(
    t,
    100,
    async ({ reader }) => {
      if (frozen >= 1) return;
      frozen++;
      reader.child.kill("SIGSTOP");
      // Longer than a registration lives (3 s): writes meanwhile stop waiting for it when it expires.
      await sleep(4000);
      reader.child.kill("SIGCONT");
    },
    60,
  );
  if (!result) return;
  assert.equal(frozen, 1);
  assert.ok(result.cache.restarts > 0, "its registration had lapsed: it started over");
});

test("[VAULT-pg-cache-fallback-missed-change] a change made while the listener is down (its notification lost) is read once the cache serves again", async (t) => {
  if (skipWithoutPostgres(t, PG)) return;
  const url = await PG.freshDatabase();
  const keyring = new Keyring(Buffer.from(newKey(), "base64"));
  const store = new PostgresCredentialStore({ url, keyring });
  t.after(() => store.close());
  const serving = async () => {
    for (let i = 0; i < 500 && !store.cacheStatus?.serving; i++) {
      await store.get(credential(0)).catch(() => undefined);
      await sleep(10);
    }
    assert.equal(store.cacheStatus?.serving, true);
  };
  await store.put(credential(0));
  let expected: "active" | "login_required" = "active";
  for (const mode of ["terminate", "restart"] as const) {
    if (mode === "restart" && !PG?.restart) continue;
    await serving();
    assert.equal((await store.get(credential(0)))?.status, expected, "kept in the cache");
    const hitsBefore = store.cacheStatus?.hits ?? 0;
    assert.equal((await store.get(credential(0)))?.status, expected);
    assert.ok((store.cacheStatus?.hits ?? 0) > hitsBefore, "served from memory");
    if (mode === "terminate")
      await admin(url, "SELECT pg_terminate_backend(pid) FROM unnest($1::int[]) AS pid", [
        await listenerPids(url),
      ]);
    else await PG?.restart?.("immediate");
    // By hand, so no barrier waits for anyone: only the notification (lost, or heard by a new listener) tells.
    expected = expected === "active" ? "login_required" : "active";
    await admin(
      url,
      "UPDATE vault_credentials SET status = $1, version = version + 1 WHERE subject = 'alice'",
      [expected],
    );
    await serving();
    assert.equal(
      (await store.get(credential(0)))?.status,
      expected,
      `after ${mode}: the cache served a row from before the change`,
    );
  }
  assert.ok((store.cacheStatus?.restarts ?? 0) >= 1);
});
