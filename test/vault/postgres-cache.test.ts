/**
 * The PostgreSQL store's record cache (src/vault/postgres/cache*.ts) across real processes: reads come from memory,
 * and no read that starts after a change returned at another instance shows what the change replaced. Faults (the
 * listening connection killed, the server restarted, an instance frozen) are in postgres-cache-faults.test.ts.
 */

import assert from "node:assert/strict";
import { join } from "node:path";
import { type TestContext, test } from "node:test";
import { secret } from "../../src/core/secret.ts";
import {
  type CredentialInput,
  openVault,
  type PostgresCredentialStore,
} from "../../src/vault/index.ts";
import { skipWithoutPostgres, testPostgres } from "../support/postgres.ts";
import { cacheWorker, staleReads, type WriterOp } from "./cache-check.ts";
import { newKey, sampleInput, tempHome } from "./helpers.ts";

const PG = await testPostgres();

function credential(i: number): CredentialInput {
  return {
    subject: "alice",
    issuer: "https://as.example.com",
    resource: "",
    clientId: "cache-test",
    tokens: { accessToken: secret(`at-${i}`), refreshToken: secret(`rt-${i}`) },
    scopes: ["read"],
    account: {},
    status: "active",
  };
}

async function scenario(t: TestContext) {
  if (skipWithoutPostgres(t, PG)) return undefined;
  const url = await PG.freshDatabase();
  const env = { AGENTAUTH_DATABASE_URL: url, AGENTAUTH_VAULT_KEY: newKey() };
  // Only writes: its cache never starts (that takes a read), so it registers nothing.
  const seed = openVault({ env });
  t.after(() => seed.close());
  await seed.put(credential(0));
  return { url, env, seed, dir: tempHome(t) };
}

test("[VAULT-pg-cache-no-stale-read] revokes and rotations at instance A (a process): instance B (another process), reading in a loop from its cache, never shows a replaced record once A's call returned", async (t) => {
  const s = await scenario(t);
  if (!s) return;
  const file = join(s.dir, "reads.bin");
  const reader = cacheWorker(t, ["reader", file], s.env);
  const ready = await reader.waitFor((l) => "ready" in l);
  assert.equal(ready.serving, true, `B's cache never served: ${reader.stderr()}`);
  const writer = cacheWorker(t, ["writer", "60", "8"], s.env);
  await writer.waitFor((l) => "ready" in l);
  writer.send("go");
  await writer.waitFor((l) => "done" in l);
  reader.send("stop");
  const summary = await reader.waitFor((l) => "reads" in l);
  const ops = writer.lines
    .filter((l) => "op" in l)
    .map((l) => ({ op: Number(l.op), kind: l.kind, at: Number(l.at) }) as WriterOp);
  assert.equal(ops.length, 60);
  const { stale, reads, seen } = staleReads(ops, file);
  const cache = summary.cache as { hits: number; misses: number };
  t.diagnostic(
    `${reads} reads by B, ${cache.hits} from its cache, ${cache.misses} from the database; ${seen.size} states seen`,
  );
  assert.deepEqual(stale.slice(0, 5), [], `${stale.length} stale reads`);
  assert.ok(cache.hits > cache.misses, "B read mostly from its cache");
  // B did follow A: it saw most of A's 50 states (not all: one that lasted a moment may fall between two reads), and
  // the last one, a revoke (-1), which it read until told to stop.
  assert.ok(seen.has(-1) && seen.size > 25, `states seen: ${[...seen].sort((a, b) => a - b)}`);
});

test("[VAULT-pg-cache-own-writes] a store reads its own writes at once, from a cache that keeps serving", async (t) => {
  if (skipWithoutPostgres(t, PG)) return;
  const url = await PG.freshDatabase();
  const env = { AGENTAUTH_DATABASE_URL: url, AGENTAUTH_VAULT_KEY: newKey() };
  const vault = openVault({ env }) as PostgresCredentialStore;
  t.after(() => vault.close());
  const input = sampleInput();
  await vault.put(input);
  for (let i = 0; i < 200 && !vault.cacheStatus?.serving; i++) {
    await vault.get(input);
    await new Promise((r) => setTimeout(r, 10));
  }
  assert.equal(vault.cacheStatus?.serving, true);
  for (let i = 0; i < 20; i++) {
    const current = await vault.get(input);
    assert.ok(current);
    const next = { ...input, tokens: { ...input.tokens, accessToken: secret(`own-${i}`) } };
    assert.ok(await vault.compareAndSwap(current.version, next));
    assert.equal((await vault.get(input))?.tokens.accessToken?.reveal(), `own-${i}`);
    assert.equal((await vault.getById(current.id))?.tokens.accessToken?.reveal(), `own-${i}`);
  }
  assert.ok(await vault.delete(input));
  assert.equal(await vault.get(input), undefined);
  assert.ok((vault.cacheStatus?.hits ?? 0) > 0);
});
