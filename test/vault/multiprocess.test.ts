/** Real OS processes sharing one vault file: crash safety, exclusive leases, atomic compare-and-swap, lock waiting. */

import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { test } from "node:test";
import { secret } from "../../src/core/secret.ts";
import { leaseOwnerId, openVault, vaultDbPath, vaultKeyFilePath } from "../../src/vault/index.ts";
import { newKey, rawDb, sampleInput, startWorker, tempHome } from "./helpers.ts";

test("[VAULT-crash-safety] kill -9 mid-write never corrupts the store or loses an acknowledged write", async (t) => {
  const home = tempHome(t);
  const env = { AGENTAUTH_VAULT_KEY: newKey() };
  for (const round of [0, 1]) {
    const writer = startWorker(t, ["crash-writer", home], env);
    // Kill at a different point each round, well into the tight loop.
    const target = 150 + round * 200 + Math.floor(Math.random() * 100);
    await writer.waitFor((line) => Number(line.committed) >= target);
    writer.child.kill("SIGKILL");
    const { signal } = await writer.exited;
    assert.equal(signal, "SIGKILL");
    const acknowledged = Math.max(...writer.lines.map((l) => Number(l.committed)));

    const db = rawDb(vaultDbPath(home)); // opening replays (or discards) the WAL left behind
    assert.equal(db.prepare("PRAGMA integrity_check").get()?.integrity_check, "ok");
    db.close();
    const vault = openVault({ home, env });
    const summaries = await vault.list();
    assert.ok(
      summaries.length >= 9,
      `expected the ten subjects (one maybe deleted), got ${summaries.length}`,
    );
    for (const summary of summaries) {
      const record = await vault.getById(summary.id); // throws if any row fails to decrypt
      assert.match(record!.tokens.accessToken!.reveal(), /^tok-\d+$/);
    }
    // Durability: the last write the child acknowledged is there (or a later one that overwrote it).
    const last = await vault.get({
      subject: `user-${acknowledged % 10}`,
      issuer: "https://as.example.com",
      resource: "",
    });
    assert.ok(last, `acknowledged write ${acknowledged} is missing`);
    assert.ok(Number(last.tokens.accessToken!.reveal().slice(4)) >= acknowledged);
    await vault.close();
  }
});

test("[VAULT-lease-multiprocess] across 3 processes, at most one holds the lease at a time", async (t) => {
  const home = tempHome(t);
  const env = { AGENTAUTH_VAULT_KEY: newKey() };
  // A holder that "crashed": it never releases, so the workers can only start once its lease expires.
  const parent = openVault({ home, env });
  t.after(() => parent.close());
  const crashedTtl = 1200;
  const crashedFrom = Date.now(); // the lease's clock reads at least this, so it expires no earlier than + ttl
  assert.equal(await parent.acquireLease("refresh", "crashed-process", crashedTtl), true);

  const workers = [0, 1, 2].map(() => startWorker(t, ["lease", home, "3000", "2000"], env));
  const results = await Promise.all(
    workers.map((w) => w.waitFor((line) => "wins" in line, 30_000)),
  );
  const holds = results.flatMap((r) =>
    (r.wins as [number, number][]).map(([start, end]) => ({ owner: r.owner, start, end })),
  );

  assert.ok(holds.length >= 20, `expected many holds, got ${holds.length}`);
  assert.ok(new Set(holds.map((h) => h.owner)).size >= 2, "at least two processes won the lease");
  assert.ok(
    Math.min(...holds.map((h) => h.start)) >= crashedFrom + crashedTtl,
    "nobody took the lease before it expired",
  );
  holds.sort((a, b) => a.start - b.start);
  for (let i = 1; i < holds.length; i++) {
    const [prev, next] = [holds[i - 1]!, holds[i]!];
    assert.ok(
      next.start >= prev.end,
      `overlap: ${JSON.stringify(prev)} and ${JSON.stringify(next)}`,
    );
  }
});

test("[VAULT-cas-multiprocess] 4 processes incrementing one counter with compareAndSwap lose no update", async (t) => {
  const home = tempHome(t);
  const env = { AGENTAUTH_VAULT_KEY: newKey() };
  const vault = openVault({ home, env });
  t.after(() => vault.close());
  const key = { subject: "counter", issuer: "https://as.example.com", resource: "" };
  await vault.put({ ...sampleInput(key), tokens: { accessToken: secret("0") } });
  const perWorker = 25;
  const startAt = String(Date.now() + 1500);
  const workers = [0, 1, 2, 3].map(() =>
    startWorker(t, ["cas-counter", home, String(perWorker), startAt], env),
  );
  const results = await Promise.all(
    workers.map((w) => w.waitFor((line) => "conflicts" in line, 60_000)),
  );
  const final = (await vault.get(key))!;
  assert.equal(final.tokens.accessToken!.reveal(), String(4 * perWorker));
  assert.equal(final.version, 1 + 4 * perWorker);
  t.diagnostic(`compare-and-swap conflicts retried: ${results.map((r) => r.conflicts).join(", ")}`);
});

test("[VAULT-key-file-race] 4 processes opening a fresh home at once agree on one key and one schema", async (t) => {
  const home = tempHome(t);
  const env = { AGENTAUTH_HOME: home }; // no AGENTAUTH_VAULT_KEY: the key file is created by whoever is first
  const workers = ["w0", "w1", "w2", "w3"].map((name) =>
    startWorker(t, ["open-and-put", home, name], env),
  );
  await Promise.all(workers.map((w) => w.waitFor((line) => "done" in line)));
  const contents = JSON.parse(readFileSync(vaultKeyFilePath(home), "utf8"));
  assert.equal(Object.keys(contents.keys).length, 1);
  const vault = openVault({ home, env: {} });
  t.after(() => vault.close());
  const summaries = await vault.list();
  assert.deepEqual(
    summaries.map((s) => s.subject),
    ["w0", "w1", "w2", "w3"],
  );
  for (const s of summaries)
    assert.equal((await vault.getById(s.id))?.tokens.accessToken?.reveal(), `tok-${s.subject}`);
});

test("[VAULT-busy-timeout] a write waits for another process's lock instead of failing", async (t) => {
  const home = tempHome(t);
  const env = { AGENTAUTH_VAULT_KEY: newKey() };
  const vault = openVault({ home, env });
  t.after(() => vault.close());
  const holder = startWorker(t, ["hold-write-lock", home, "400"], env);
  const { locked } = await holder.waitFor((line) => "locked" in line);
  const record = await vault.put(sampleInput()); // blocks on the lock (synchronously) until the holder commits
  const finished = Date.now();
  await holder.waitFor((line) => "released" in line);
  assert.equal(record.version, 1);
  // Without a busy timeout SQLite fails at once with "database is locked"; here the write waited out the hold.
  assert.ok(finished - Number(locked) >= 300, `waited only ${finished - Number(locked)} ms`);
});

test("[VAULT-lease-dead-owner] a lease held by a process killed with SIGKILL is taken at once, not after its TTL", async (t) => {
  const home = tempHome(t);
  const env = { AGENTAUTH_VAULT_KEY: newKey() };
  const vault = openVault({ home, env });
  t.after(() => vault.close());
  // A 10-minute TTL: the test can only pass through dead-owner detection, never through expiry.
  const holder = startWorker(t, ["hold-lease", home, "refresh", "600000", "refresh-intent"], env);
  const { held, owner } = await holder.waitFor((line) => "held" in line);
  assert.equal(held, true);
  const me = leaseOwnerId();
  assert.equal(await vault.acquireLease("refresh", me, 30_000), false, "a live holder keeps it");

  holder.child.kill("SIGKILL");
  assert.equal((await holder.exited).signal, "SIGKILL");
  assert.equal(
    await vault.acquireLease("refresh", me, 30_000),
    true,
    "the dead holder's lease is taken",
  );
  const lease = await vault.getLease("refresh");
  assert.equal(lease?.owner, me);
  // The dead holder's note stays, so the new holder can tell an operation was interrupted.
  assert.equal(lease?.note, "refresh-intent");
  assert.notEqual(lease?.owner, owner);
  // Exclusive still: a third contender (alive owner) does not get it.
  assert.equal(await vault.acquireLease("refresh", leaseOwnerId(), 30_000), false);
});
