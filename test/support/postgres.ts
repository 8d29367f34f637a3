/**
 * Test support: a throwaway PostgreSQL server for the tests that need one.
 *
 * The server (./postgres-server.ts: initdb + postgres on a free 127.0.0.1 port, as the `postgres` user when root)
 * is stopped and deleted when the test file ends.
 * With AGENTAUTH_TEST_DATABASE_URL set, that server is used instead (each file gets fresh databases on it).
 *
 * Without binaries and without a URL, the PostgreSQL tests are skipped with a printed notice, unless
 * AGENTAUTH_REQUIRE_POSTGRES=1 (what CI sets), which makes that a failure. `bash scripts/ensure-postgres.sh`
 * installs the binaries.
 */

import { after, type TestContext } from "node:test";
import pg from "pg";
import {
  createDatabase,
  type PostgresServer,
  postgresBinDir,
  startPostgresServer,
} from "./postgres-server.ts";

export { postgresBinDir } from "./postgres-server.ts";

export interface TestPostgres {
  /** A URL on the server's `postgres` database (for admin statements). */
  adminUrl: string;
  /** Creates an empty database for one test (or one multi-process scenario) and returns its URL. */
  freshDatabase(): Promise<string>;
  /** The server's process id (undefined for an external server). */
  readonly pid: number | undefined;
  /**
   * Stops and starts the server again on the same port (`-m immediate`: killed without a checkpoint, crash recovery
   * on start). Undefined for an external server (AGENTAUTH_TEST_DATABASE_URL): tests that need it skip there.
   */
  restart?: (mode: "immediate" | "fast") => Promise<void>;
}

const REQUIRED = () => process.env.AGENTAUTH_REQUIRE_POSTGRES === "1";

export function missingPostgresNotice(): string {
  return (
    "PostgreSQL binaries not found under /usr/lib/postgresql/*/bin and AGENTAUTH_TEST_DATABASE_URL is not set: " +
    "the PostgreSQL tests are skipped. Install them with `bash scripts/ensure-postgres.sh` to run them."
  );
}

let shared: Promise<TestPostgres | undefined> | undefined;

/**
 * The server for this test file (`crashSafe`: commits survive `restart("immediate")`; see postgres-server.ts). Call it
 * at the top level of the file (`const PG = await testPostgres();`): the
 * server is stopped by an `after` hook, which must belong to the file, not to one test. Resolves to undefined when
 * PostgreSQL is unavailable and not required (the notice is printed once); throws when it is required.
 */
export function testPostgres(
  options: { crashSafe?: boolean } = {},
): Promise<TestPostgres | undefined> {
  shared ??= start(options);
  return shared;
}

/** For a test: true (and the test is skipped with the notice) when there is no server. */
export function skipWithoutPostgres(
  t: Pick<TestContext, "skip">,
  server: TestPostgres | undefined,
): server is undefined {
  if (server) return false;
  t.skip(missingPostgresNotice());
  return true;
}

async function start(options: { crashSafe?: boolean }): Promise<TestPostgres | undefined> {
  const external = process.env.AGENTAUTH_TEST_DATABASE_URL?.trim();
  if (external) return onServer(external, undefined);
  const bin = postgresBinDir();
  if (!bin) {
    if (REQUIRED()) {
      throw new Error(
        "AGENTAUTH_REQUIRE_POSTGRES=1 but no PostgreSQL binaries under /usr/lib/postgresql/*/bin: the PostgreSQL " +
          "tests must run here. Install them with `bash scripts/ensure-postgres.sh`.",
      );
    }
    console.error(`notice: ${missingPostgresNotice()}`);
    return undefined;
  }
  const server = await startPostgresServer(bin, options);
  after(() => server.stop());
  return onServer(server.adminUrl, server);
}

/** Fresh databases on a running server; the ones made for an external server are dropped after the file. */
function onServer(
  adminUrl: string,
  local: Pick<PostgresServer, "pid" | "restart"> | undefined,
): TestPostgres {
  const made: string[] = [];
  if (local === undefined) {
    after(async () => {
      const admin = new pg.Client({ connectionString: adminUrl });
      await admin.connect();
      try {
        for (const name of made) await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      } finally {
        await admin.end();
      }
    });
  }
  return {
    adminUrl,
    get pid() {
      return local?.pid;
    },
    ...(local ? { restart: (mode: "immediate" | "fast") => local.restart(mode) } : {}),
    async freshDatabase() {
      const url = await createDatabase(adminUrl, "agentauth_test");
      made.push(new URL(url).pathname.slice(1));
      return url;
    },
  };
}
