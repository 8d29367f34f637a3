/**
 * The throwaway PostgreSQL server shared by the tests and the PostgreSQL bench (test/support/postgres-server.ts):
 * the bench compares against SQLite with synchronous=FULL, so its server must really flush (durable), while the
 * tests keep the fast default; stop() ends the server.
 */

import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { join } from "node:path";
import { test } from "node:test";
import pg from "pg";
import { missingPostgresNotice } from "../support/postgres.ts";
import { postgresBinDir, startPostgresServer } from "../support/postgres-server.ts";

const bin = postgresBinDir();
const REQUIRED = process.env.AGENTAUTH_REQUIRE_POSTGRES === "1";

async function settings(url: string): Promise<Record<string, string>> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const { rows } = await client.query(
      "SELECT name, setting FROM pg_settings WHERE name IN ('fsync', 'synchronous_commit', 'full_page_writes')",
    );
    return Object.fromEntries(rows.map((r) => [String(r.name), String(r.setting)]));
  } finally {
    await client.end();
  }
}

const alive = (pid: number | undefined) => {
  try {
    process.kill(pid as number, 0);
    return true;
  } catch {
    return false;
  }
};

for (const durable of [false, true]) {
  test(`[PG-test-server-durability] a ${durable ? "durable (bench)" : "default (tests)"} server runs with fsync ${durable ? "on" : "off"}; stop() ends it, twice is safe`, async (t) => {
    if (!bin) {
      assert.ok(!REQUIRED, "AGENTAUTH_REQUIRE_POSTGRES=1 but no PostgreSQL binaries");
      t.skip(missingPostgresNotice());
      return;
    }
    const server = await startPostgresServer(bin, { durable });
    t.after(() => server.stop());
    const expected = durable ? "on" : "off";
    assert.deepEqual(await settings(server.adminUrl), {
      fsync: expected,
      synchronous_commit: expected,
      full_page_writes: expected,
    });
    assert.ok(alive(server.pid));
    await server.stop();
    await server.stop();
    assert.ok(!alive(server.pid), "the server process is gone after stop()");
  });
}

test("[PG-test-server-orphan] a server whose test process is killed with SIGKILL does not outlive it", async (t) => {
  if (!bin) {
    assert.ok(!REQUIRED, "AGENTAUTH_REQUIRE_POSTGRES=1 but no PostgreSQL binaries");
    t.skip(missingPostgresNotice());
    return;
  }
  const child = spawn(
    process.execPath,
    [join(import.meta.dirname, "fixtures", "start-server-then-hang.ts")],
    { stdio: ["ignore", "pipe", "inherit"] },
  );
  t.after(() => child.kill("SIGKILL"));
  const line = await new Promise<string>((resolve, reject) => {
    let buffered = "";
    child.stdout.on("data", (chunk: Buffer) => {
      buffered += chunk.toString();
      if (buffered.includes("\n")) resolve(buffered.split("\n")[0] as string);
    });
    child.once("exit", () => reject(new Error("the fixture exited before starting a server")));
  });
  const { pid } = JSON.parse(line) as { pid: number };
  t.after(() => {
    if (alive(pid)) process.kill(pid, "SIGKILL");
  });
  assert.ok(alive(pid));
  child.kill("SIGKILL");
  // Structural bound, not a timing claim: the watchdog acts on the pipe's end; 30 s is far beyond that.
  const deadline = Date.now() + 30_000;
  while (alive(pid) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
  assert.ok(!alive(pid), "the PostgreSQL server outlived the process that started it");
});

test("[PG-test-server-restart] restart('immediate') kills the server as pg_ctl -m immediate does and brings it back on the same port with its data", async (t) => {
  if (!bin) {
    assert.ok(!REQUIRED, "AGENTAUTH_REQUIRE_POSTGRES=1 but no PostgreSQL binaries");
    t.skip(missingPostgresNotice());
    return;
  }
  // crashSafe: with the tests' default (synchronous_commit off) the kill may take the last commits with it.
  const server = await startPostgresServer(bin, { crashSafe: true });
  t.after(() => server.stop());
  const client = new pg.Client({ connectionString: server.adminUrl });
  await client.connect();
  const dropped = new Promise<void>((resolve) => client.on("error", () => resolve()));
  await client.query("CREATE TABLE kept (n int); INSERT INTO kept VALUES (42)");
  const before = server.pid;
  await server.restart("immediate");
  await dropped; // the open connection was cut, as every client's is in a crash
  await client.end().catch(() => {});
  assert.ok(!alive(before), "the old postmaster is gone");
  assert.notEqual(server.pid, before);
  const again = new pg.Client({ connectionString: server.adminUrl });
  await again.connect();
  try {
    const { rows } = await again.query("SELECT n FROM kept");
    assert.deepEqual(rows, [{ n: 42 }]);
  } finally {
    await again.end();
  }
});
