/**
 * Issue 22 §6/§8: an instance's presence is a lock the database drops when the instance dies, so another instance
 * knows it is gone from the database alone. Real processes (kill -9) and a real server (pg_ctl stop -m immediate).
 */

import assert from "node:assert/strict";
import { join } from "node:path";
import { test } from "node:test";
import pg from "pg";
import { absent, gone } from "../../src/db/index.ts";
import { startWorker } from "../support/fleet.ts";
import { restartablePostgres, skipWithoutPostgres } from "../support/postgres.ts";

const PG = await restartablePostgres();
const HOLDER = join(import.meta.dirname, "fixtures", "presence-holder.ts");

async function judge(url: string, key: string, graceMs: number) {
  const client = new pg.Client({ connectionString: url });
  client.on("error", () => {});
  await client.connect();
  try {
    const [row] = (
      await client.query(
        `SELECT ${gone("$1::bigint", "$2")} AS gone, ${absent("$1::bigint")} AS absent`,
        [key, graceMs],
      )
    ).rows;
    return row as { gone: boolean; absent: boolean };
  } finally {
    await client.end();
  }
}

/** Asks until `wanted` (bounded by a number of tries, not by time). */
async function until(ask: () => Promise<boolean>, what: string): Promise<void> {
  for (let tries = 0; tries < 400; tries++) {
    if (await ask().catch(() => false)) return;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  assert.fail(`never: ${what}`);
}

test("[DB-presence-kill] a holder killed with SIGKILL is gone as soon as the server drops its session; a live one is not", async (t) => {
  if (skipWithoutPostgres(t, PG)) return;
  const url = await PG.freshDatabase();
  const env = { ...process.env, DATABASE_URL: url };
  const alive = startWorker(t, HOLDER, env);
  const doomed = startWorker(t, HOLDER, env);
  const [aliveKey, doomedKey] = await Promise.all([
    alive.waitFor<string>("key"),
    doomed.waitFor<string>("key"),
  ]);
  assert.deepEqual(await judge(url, doomedKey, 0), { gone: false, absent: false });
  doomed.kill("SIGKILL");
  await doomed.exited;
  await until(async () => (await judge(url, doomedKey, 0)).gone, "the killed holder is gone");
  assert.deepEqual(await judge(url, aliveKey, 0), { gone: false, absent: false });
  alive.kill("SIGKILL");
});

test("[DB-presence-restart] after pg_ctl stop -m immediate a live holder takes its lock again; within the grace nobody is judged gone, after it only the dead", async (t) => {
  if (skipWithoutPostgres(t, PG)) return;
  const url = await PG.freshDatabase();
  const env = { ...process.env, DATABASE_URL: url };
  const alive = startWorker(t, HOLDER, env);
  const doomed = startWorker(t, HOLDER, env);
  const [aliveKey, doomedKey] = await Promise.all([
    alive.waitFor<string>("key"),
    doomed.waitFor<string>("key"),
  ]);
  t.after(() => PG.start());
  await PG.crash();
  doomed.kill("SIGKILL");
  await doomed.exited;
  await PG.start();
  // Right after the start, the dead one's lock is missing, but a long grace keeps it from being judged gone.
  const early = await judge(url, doomedKey, 3_600_000);
  assert.equal(early.absent, true);
  assert.equal(early.gone, false, "within the grace an absent lock is not a verdict");
  assert.equal(await alive.waitFor("regained"), aliveKey, "the live holder took its own key again");
  await until(async () => !(await judge(url, aliveKey, 0)).absent, "the live holder is present");
  await until(
    async () => (await judge(url, doomedKey, 200)).gone,
    "past the grace, the dead is gone",
  );
  assert.equal((await judge(url, aliveKey, 200)).gone, false);
  alive.kill("SIGKILL");
});
