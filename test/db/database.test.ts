import assert from "node:assert/strict";
import { test } from "node:test";
import pg from "pg";
import {
  advisoryKey,
  DatabaseError,
  type Migration,
  openDatabase,
  redactDatabaseUrl,
} from "../../src/db/index.ts";
import { skipWithoutPostgres, testPostgres } from "../support/postgres.ts";

const PG = await testPostgres();

const V1: Migration[] = [
  {
    version: 1,
    description: "a table",
    sql: "CREATE TABLE things (id text PRIMARY KEY, n integer)",
  },
];
const V2: Migration[] = [
  ...V1,
  { version: 2, description: "a column", sql: "ALTER TABLE things ADD COLUMN note text" },
];

test("[DB-url-redaction] a database URL is shown without its password or query, and junk is not echoed", () => {
  assert.equal(
    redactDatabaseUrl("postgres://alice:s3cret@db.example:5432/agentauth?sslpassword=x&password=y"),
    "postgres://alice@db.example:5432/agentauth",
  );
  assert.equal(redactDatabaseUrl("postgresql://db/x"), "postgresql://db/x");
  assert.equal(redactDatabaseUrl("::not a url s3cret"), "(an unparseable PostgreSQL URL)");
});

test("[DB-url-invalid] a URL that is not PostgreSQL's is refused with database_url_invalid, without echoing it", async () => {
  for (const url of ["mysql://u:s3cret@h/db", "", "s3cret", "postgres://u:s3cret@[::1/db"]) {
    const error = await openDatabase(url, { component: "t", migrations: V1 }).catch((e) => e);
    assert.ok(error instanceof DatabaseError, String(error));
    assert.equal(error.code, "database_url_invalid");
    assert.ok(!error.message.includes("s3cret"), error.message);
  }
});

test("[DB-unavailable] an unreachable server is database_unavailable naming the host, never the password", async () => {
  const error = await openDatabase("postgres://u:s3cret@127.0.0.1:1/db", {
    component: "t",
    migrations: V1,
    connectTimeoutMs: 2_000,
  }).catch((e) => e);
  assert.ok(error instanceof DatabaseError, String(error));
  assert.equal(error.code, "database_unavailable");
  assert.match(error.message, /127\.0\.0\.1:1/);
  assert.ok(!error.message.includes("s3cret"));
  assert.ok(!JSON.stringify(error).includes("s3cret"));
});

test("[DB-migrations-concurrent] 8 instances opening one database at once apply each migration exactly once", async (t) => {
  if (skipWithoutPostgres(t, PG)) return;
  const server = PG;
  const url = await server.freshDatabase();
  const dbs = await Promise.all(
    Array.from({ length: 8 }, () => openDatabase(url, { component: "t", migrations: V2 })),
  );
  try {
    const rows = await dbs[0]!.query(
      "SELECT version FROM agentauth_schema WHERE component = 't' ORDER BY version",
    );
    assert.deepEqual(
      rows.map((r) => r.version),
      [1, 2],
    );
    await dbs[3]!.query("INSERT INTO things (id, n, note) VALUES ('a', 1, 'x')");
    assert.equal((await dbs[5]!.query("SELECT count(*)::int AS n FROM things"))[0]!.n, 1);
  } finally {
    await Promise.all(dbs.map((db) => db.close()));
  }
});

test("[DB-migrations-upgrade] a database at version 1 is brought to 2 in place; a newer schema is refused", async (t) => {
  if (skipWithoutPostgres(t, PG)) return;
  const server = PG;
  const url = await server.freshDatabase();
  const old = await openDatabase(url, { component: "t", migrations: V1 });
  await old.query("INSERT INTO things (id, n) VALUES ('kept', 7)");
  await old.close();
  const upgraded = await openDatabase(url, { component: "t", migrations: V2 });
  assert.deepEqual(await upgraded.query("SELECT id, n, note FROM things"), [
    { id: "kept", n: 7, note: null },
  ]);
  await upgraded.close();
  const error = await openDatabase(url, { component: "t", migrations: V1 }).catch((e) => e);
  assert.ok(error instanceof DatabaseError);
  assert.equal(error.code, "database_schema_unsupported");
  assert.match(error.message, /Upgrade agentauth/);
  // Another component's schema is independent.
  const other = await openDatabase(url, {
    component: "other",
    migrations: V1.map((m) => ({ ...m, sql: "CREATE TABLE others (id text)" })),
  });
  await other.close();
});

test("[DB-transaction] a transaction commits together or not at all; the caller's error passes through", async (t) => {
  if (skipWithoutPostgres(t, PG)) return;
  const server = PG;
  const db = await openDatabase(await server.freshDatabase(), { component: "t", migrations: V1 });
  try {
    class Mine extends Error {}
    const error = await db
      .transaction(async (tx) => {
        await tx.query("INSERT INTO things (id, n) VALUES ('a', 1)");
        throw new Mine("stop");
      })
      .catch((e) => e);
    assert.ok(error instanceof Mine);
    assert.deepEqual(await db.query("SELECT * FROM things"), []);
    const failed = await db
      .transaction(async (tx) => {
        await tx.query("INSERT INTO things (id, n) VALUES ('b', 1)");
        await tx.query("INSERT INTO things (id, n) VALUES ('b', 2)");
      })
      .catch((e) => e);
    assert.ok(failed instanceof DatabaseError);
    assert.equal(failed.code, "database_failed");
    assert.equal(failed.sqlState, "23505");
    assert.deepEqual(await db.query("SELECT * FROM things"), []);
  } finally {
    await db.close();
  }
});

test("[DB-session-lock-released-by-server] a session's advisory lock is released by the server when its connection dies", async (t) => {
  if (skipWithoutPostgres(t, PG)) return;
  const server = PG;
  const db = await openDatabase(await server.freshDatabase(), { component: "t", migrations: V1 });
  try {
    const key = advisoryKey("test", "x");
    const holder = await db.session();
    const other = await db.session();
    assert.equal((await holder.query("SELECT pg_try_advisory_lock($1) AS ok", [key]))[0]!.ok, true);
    assert.equal((await other.query("SELECT pg_try_advisory_lock($1) AS ok", [key]))[0]!.ok, false);
    // What a kill -9 of the holder's process does to its connection: the server ends the session.
    const admin = new pg.Client({ connectionString: server.adminUrl });
    await admin.connect();
    await admin.query("SELECT pg_terminate_backend($1)", [holder.backendPid]);
    await admin.end();
    // The backend ends asynchronously: poll, bounded by time (20 s, far beyond a backend's exit even on a loaded
    // machine) rather than by 100 polls, which were about 2 s of wall time.
    let got = false;
    for (const deadline = Date.now() + 20_000; !got && Date.now() < deadline; ) {
      got = (await other.query("SELECT pg_try_advisory_lock($1) AS ok", [key]))[0]!.ok === true;
      if (!got) await new Promise((r) => setTimeout(r, 20));
    }
    assert.ok(got, "the lock was freed without anyone unlocking it");
    holder.release(true);
    other.release(true);
  } finally {
    await db.close();
  }
});

test("[DB-advisory-key] advisory keys are stable signed 64-bit integers, distinct per namespace and name", () => {
  const a = advisoryKey("vault", "refresh:x");
  assert.equal(a, advisoryKey("vault", "refresh:x"));
  assert.notEqual(a, advisoryKey("rap", "refresh:x"));
  assert.notEqual(a, advisoryKey("vault", "refresh:y"));
  const n = BigInt(a);
  assert.ok(n >= -(2n ** 63n) && n < 2n ** 63n);
});

test("[DB-migrations-no-create-privilege] an instance whose schema is current opens with a role that has no CREATE privilege", async (t) => {
  if (skipWithoutPostgres(t, PG)) return;
  const url = await PG.freshDatabase();
  const owner = await openDatabase(url, { component: "t", migrations: V2 });
  const role = `app_${Math.random().toString(36).slice(2, 8)}`;
  await owner.query(`CREATE ROLE ${role} LOGIN`);
  await owner.query(`REVOKE CREATE ON SCHEMA public FROM PUBLIC`);
  await owner.query(`GRANT SELECT, INSERT, UPDATE, DELETE ON things, agentauth_schema TO ${role}`);
  await owner.close();
  const asApp = new URL(url);
  asApp.username = role;
  const app = await openDatabase(asApp.toString(), { component: "t", migrations: V2 });
  try {
    await app.query("INSERT INTO things (id, n) VALUES ('x', 1)");
    assert.equal((await app.query("SELECT count(*)::int AS n FROM things"))[0]!.n, 1);
  } finally {
    await app.close();
  }
  // Behind by one version, the same role cannot migrate: a typed error naming the database, not a hang.
  const V3: Migration[] = [
    ...V2,
    { version: 3, description: "more", sql: "CREATE TABLE more_things (id text)" },
  ];
  const error = await openDatabase(asApp.toString(), { component: "t", migrations: V3 }).catch(
    (e) => e,
  );
  assert.ok(error instanceof DatabaseError, String(error));
  assert.equal(error.code, "database_failed");
  assert.match(error.message, /permission denied/);
});

test("[DB-pool-exhausted] a pool whose every connection stays busy says so and which option to raise, not that the server is down", async (t) => {
  if (skipWithoutPostgres(t, PG)) return;
  const db = await openDatabase(await PG.freshDatabase(), {
    component: "t",
    migrations: V1,
    sessionPoolSize: 1,
    poolSize: 1,
    // Long enough to open a connection on a loaded machine; the exhausted waits below last this long.
    connectTimeoutMs: 2_000,
  });
  try {
    const held = await db.session();
    const error = await db.session().catch((e) => e);
    assert.ok(error instanceof DatabaseError, String(error));
    assert.equal(error.code, "database_pool_exhausted");
    assert.match(error.message, /sessionPoolSize/);
    held.release();
    const busy = db.transaction(() => new Promise((r) => setTimeout(r, 5_000)));
    const waited = await db.query("SELECT 1").catch((e) => e);
    await busy;
    assert.ok(waited instanceof DatabaseError, String(waited));
    assert.equal(waited.code, "database_pool_exhausted");
    assert.match(waited.message, /poolSize/);
    // And the pool works again once a connection is free.
    assert.deepEqual(await db.query("SELECT 1 AS one"), [{ one: 1 }]);
  } finally {
    await db.close();
  }
});

test("[DB-application-name] every connection names itself 'agentauth' (what the lease takeover filters on)", async (t) => {
  if (skipWithoutPostgres(t, PG)) return;
  const db = await openDatabase(await PG.freshDatabase(), { component: "t", migrations: V1 });
  try {
    const session = await db.session();
    const rows = await session.query(
      "SELECT application_name FROM pg_stat_activity WHERE pid = pg_backend_pid()",
    );
    assert.deepEqual(rows, [{ application_name: "agentauth" }]);
    session.release();
  } finally {
    await db.close();
  }
});
