/**
 * Leases and compare-and-swap on PostgreSQL across real OS processes (test/vault/fixtures/vault-worker.ts, which
 * opens the vault through openVault and so follows AGENTAUTH_DATABASE_URL): a lease held by a process killed with
 * SIGKILL is released by the server when its connection drops, not by the TTL; a live holder stuck past its TTL is
 * taken over by ending its connection; no update is lost to concurrent compare-and-swap.
 */

import assert from "node:assert/strict";
import { test } from "node:test";
import { setTimeout as sleep } from "node:timers/promises";
import pg from "pg";
import { secret } from "../../src/core/secret.ts";
import { leaseOwnerId, openVault } from "../../src/vault/index.ts";
import { skipWithoutPostgres, testPostgres } from "../support/postgres.ts";
import { newKey, sampleInput, startWorker } from "./helpers.ts";

const PG = await testPostgres();

async function scenario(t: import("node:test").TestContext) {
  if (skipWithoutPostgres(t, PG)) return undefined;
  const url = await PG.freshDatabase();
  const env = { AGENTAUTH_DATABASE_URL: url, AGENTAUTH_VAULT_KEY: newKey() };
  const vault = openVault({ env });
  t.after(() => vault.close());
  return { url, env, vault };
}

/** Polls like the TokenRefresher does (every 25 ms) until the lease is ours or `limitMs` passed. */
async function acquireWithin(
  vault: ReturnType<typeof openVault>,
  owner: string,
  limitMs: number,
): Promise<number | undefined> {
  const started = Date.now();
  while (Date.now() - started < limitMs) {
    if (await vault.acquireLease("refresh", owner, 30_000)) return Date.now() - started;
    await sleep(25);
  }
  return undefined;
}

test("[PG-vault-lease-dead-holder] a lease held by a process killed with SIGKILL is released by the server, well before its 60 s TTL", async (t) => {
  const s = await scenario(t);
  if (!s) return;
  const holder = startWorker(
    t,
    ["hold-lease", "/nonexistent", "refresh", "60000", "refresh-intent"],
    s.env,
  );
  const { held, owner } = await holder.waitFor((line) => "held" in line);
  assert.equal(held, true);
  const me = leaseOwnerId();
  assert.equal(await s.vault.acquireLease("refresh", me, 30_000), false, "a live holder keeps it");
  assert.equal((await s.vault.getLease("refresh"))?.owner, owner);

  holder.child.kill("SIGKILL");
  assert.equal((await holder.exited).signal, "SIGKILL");
  // The server notices the dropped connection and releases the advisory lock; 10 s is far inside the 60 s TTL,
  // and the row still says the dead holder's lease runs for a minute, so expiry cannot be what let us in.
  const waited = await acquireWithin(s.vault, me, 10_000);
  assert.notEqual(waited, undefined, "the dead holder's lease was not released by the server");
  t.diagnostic(`lease taken ${waited} ms after the holder was killed`);
  const lease = await s.vault.getLease("refresh");
  assert.equal(lease?.owner, me);
  assert.equal(
    lease?.note,
    "refresh-intent",
    "the dead holder's note survives for the next holder",
  );
  // Exclusive still: another contender on another store does not get it while we hold it.
  const other = openVault({ env: s.env });
  t.after(() => other.close());
  assert.equal(await other.acquireLease("refresh", "someone-else", 30_000), false);
  await s.vault.releaseLease("refresh", me);
  assert.equal(await s.vault.getLease("refresh"), undefined, "a release removes the row");
  assert.equal(await other.acquireLease("refresh", "someone-else", 30_000), true);
});

test("[PG-vault-lease-hung-holder] a live holder past its TTL is taken over by ending its connection; before the TTL it is not", async (t) => {
  const s = await scenario(t);
  if (!s) return;
  const holder = startWorker(
    t,
    ["hold-lease", "/nonexistent", "refresh", "60000", "hung-intent"],
    s.env,
  );
  assert.equal((await holder.waitFor((line) => "held" in line)).held, true);
  const inTime = openVault({ env: s.env });
  t.after(() => inTime.close());
  assert.equal(await inTime.acquireLease("refresh", "contender", 30_000), false, "inside the TTL");

  // Two minutes pass by the database's clock, the one lease expiry is judged by ([PG-vault-lease-db-clock]): the
  // holder's 60 s lease has run out while it hangs. (Moved on the row instead of waiting for a minute.)
  const admin = new pg.Client({ connectionString: s.url });
  await admin.connect();
  t.after(() => admin.end());
  await admin.query(
    "UPDATE vault_leases SET expires_at = expires_at - 120000 WHERE name = 'refresh'",
  );
  assert.equal(await inTime.acquireLease("refresh", "contender", 30_000), true);
  const lease = await inTime.getLease("refresh");
  assert.equal(lease?.owner, "contender");
  assert.equal(lease?.note, "hung-intent");
  assert.equal(holder.child.exitCode, null, "the hung process itself is left running");
  // Its session is gone: nothing the hung holder could still do holds the lock against us.
  const locks = await admin.query(
    "SELECT count(*)::int AS n FROM pg_locks WHERE locktype = 'advisory' AND granted",
  );
  assert.equal(locks.rows[0].n, 1, "exactly one advisory lock: the new holder's");
});

test("[PG-vault-lease-db-clock] an instance whose clock runs two minutes ahead does not take a live holder's lease: expiry is written and compared by the database's clock", async (t) => {
  const s = await scenario(t);
  if (!s) return;
  const holder = startWorker(t, ["hold-lease", "/nonexistent", "refresh", "60000"], s.env);
  const { held, owner } = await holder.waitFor((line) => "held" in line);
  assert.equal(held, true);
  // A machine with a clock 120 s ahead: by its own clock the holder's 60 s lease ran out long ago.
  const skewed = startWorker(
    t,
    ["try-lease-skewed", "/nonexistent", "refresh", "30000", "120000"],
    s.env,
  );
  const answer = await skewed.waitFor((line) => "got" in line);
  assert.equal(answer.got, false, "the skewed instance took a live holder's lease");
  assert.equal((await skewed.exited).code, 0);
  assert.equal((await s.vault.getLease("refresh"))?.owner, owner, "the holder still holds it");
  assert.equal(holder.child.exitCode, null, "the holder is alive");
  const admin = new pg.Client({ connectionString: s.url });
  await admin.connect();
  t.after(() => admin.end());
  const locks = await admin.query(
    "SELECT count(*)::int AS n FROM pg_locks WHERE locktype = 'advisory' AND granted",
  );
  assert.equal(locks.rows[0].n, 1, "the holder's session was not terminated");
  // The expiry on the row is the database's time + TTL, whatever the writer's clock said.
  const row = await admin.query(
    "SELECT expires_at - (extract(epoch from clock_timestamp()) * 1000)::bigint AS left_ms FROM vault_leases",
  );
  const left = Number(row.rows[0].left_ms);
  assert.ok(left > 0 && left <= 60_000, `the lease has ${left} ms left by the database's clock`);
});

test("[PG-vault-lease-multiprocess] across 3 processes, at most one holds the lease at a time", async (t) => {
  const s = await scenario(t);
  if (!s) return;
  const workers = [0, 1, 2].map(() =>
    startWorker(t, ["lease", "/nonexistent", "3000", "2000"], s.env),
  );
  const results = await Promise.all(
    workers.map((w) => w.waitFor((line) => "wins" in line, 30_000)),
  );
  const holds = results.flatMap((r) =>
    (r.wins as [number, number][]).map(([start, end]) => ({ owner: r.owner, start, end })),
  );
  assert.ok(holds.length >= 10, `expected many holds, got ${holds.length}`);
  assert.ok(new Set(holds.map((h) => h.owner)).size >= 2, "at least two processes won the lease");
  holds.sort((a, b) => a.start - b.start);
  for (let i = 1; i < holds.length; i++) {
    const [prev, next] = [holds[i - 1]!, holds[i]!];
    assert.ok(
      next.start >= prev.end,
      `overlap: ${JSON.stringify(prev)} and ${JSON.stringify(next)}`,
    );
  }
  t.diagnostic(`${holds.length} holds`);
});

test("[PG-vault-cas-multiprocess] 4 processes incrementing one counter with compareAndSwap lose no update", async (t) => {
  const s = await scenario(t);
  if (!s) return;
  const key = { subject: "counter", issuer: "https://as.example.com", resource: "" };
  await s.vault.put({ ...sampleInput(key), tokens: { accessToken: secret("0") } });
  const perWorker = 25;
  const startAt = String(Date.now() + 1500);
  const workers = [0, 1, 2, 3].map(() =>
    startWorker(t, ["cas-counter", "/nonexistent", String(perWorker), startAt], s.env),
  );
  const results = await Promise.all(
    workers.map((w) => w.waitFor((line) => "conflicts" in line, 60_000)),
  );
  const final = (await s.vault.get(key))!;
  assert.equal(final.tokens.accessToken!.reveal(), String(4 * perWorker));
  assert.equal(final.version, 1 + 4 * perWorker);
  t.diagnostic(`compare-and-swap conflicts retried: ${results.map((r) => r.conflicts).join(", ")}`);
});

test("[PG-vault-lease-close-during-acquire] closing a store while it is taking a lease neither hangs nor leaves the lock held", async (t) => {
  if (skipWithoutPostgres(t, PG)) return;
  const url = await PG.freshDatabase();
  const env = { AGENTAUTH_VAULT_KEY: newKey() };
  // close() lands at several points of the acquire (before its session, during try-lock, during the row write).
  for (const delayMs of [0, 1, 2, 3, 5, 8, 12, 20]) {
    const first = openVault({ databaseUrl: url, env });
    await first.list(); // opened and migrated, so the acquire below goes straight to the lock
    const taking = first.acquireLease("refresh:x", "a", 60_000).catch(() => false);
    await sleep(delayMs);
    const outcome = await Promise.race([
      first.close().then(() => "closed"),
      sleep(15_000).then(() => "hung"),
    ]);
    assert.equal(outcome, "closed", `close() ${delayMs} ms into an acquire returned`);
    await taking;
    const second = openVault({ databaseUrl: url, env });
    try {
      assert.equal(
        await second.acquireLease("refresh:x", "b", 60_000),
        true,
        `the store closed ${delayMs} ms into an acquire released its lock`,
      );
      await second.releaseLease("refresh:x", "b");
    } finally {
      await second.close();
    }
  }
});
