/**
 * Test support: a throwaway PostgreSQL server for the tests that need one.
 *
 * `initdb` into a temporary folder and `postgres` on a free 127.0.0.1 port, from Debian's packages
 * (/usr/lib/postgresql/<version>/bin, the newest installed), stopped and deleted when the test file ends. As root
 * (CI containers), the server runs as the `postgres` system user, since PostgreSQL refuses to run as root.
 * With AGENTAUTH_TEST_DATABASE_URL set, that server is used instead (each file gets fresh databases on it).
 *
 * Without binaries and without a URL, the PostgreSQL tests are skipped with a printed notice, unless
 * AGENTAUTH_REQUIRE_POSTGRES=1 (what CI sets), which makes that a failure. `bash scripts/ensure-postgres.sh`
 * installs the binaries.
 */

import { type ChildProcess, execFileSync, spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { chownSync, existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, type TestContext } from "node:test";
import pg from "pg";

export interface TestPostgres {
  /** A URL on the server's `postgres` database (for admin statements). */
  adminUrl: string;
  /** Creates an empty database for one test (or one multi-process scenario) and returns its URL. */
  freshDatabase(): Promise<string>;
  /** The server's process id (undefined for an external server). */
  pid: number | undefined;
}

const REQUIRED = () => process.env.AGENTAUTH_REQUIRE_POSTGRES === "1";

/** The newest Debian PostgreSQL bin folder with initdb and postgres, if any. */
export function postgresBinDir(root = "/usr/lib/postgresql"): string | undefined {
  if (!existsSync(root)) return undefined;
  const versions = readdirSync(root)
    .filter((v) => /^\d+$/.test(v))
    .sort((a, b) => Number(b) - Number(a));
  for (const version of versions) {
    const bin = join(root, version, "bin");
    if (existsSync(join(bin, "initdb")) && existsSync(join(bin, "postgres"))) return bin;
  }
  return undefined;
}

export function missingPostgresNotice(): string {
  return (
    "PostgreSQL binaries not found under /usr/lib/postgresql/*/bin and AGENTAUTH_TEST_DATABASE_URL is not set: " +
    "the PostgreSQL tests are skipped. Install them with `bash scripts/ensure-postgres.sh` to run them."
  );
}

let shared: Promise<TestPostgres | undefined> | undefined;

/**
 * The server for this test file. Call it at the top level of the file (`const PG = await testPostgres();`): the
 * server is stopped by an `after` hook, which must belong to the file, not to one test. Resolves to undefined when
 * PostgreSQL is unavailable and not required (the notice is printed once); throws when it is required.
 */
export function testPostgres(): Promise<TestPostgres | undefined> {
  shared ??= start();
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

async function start(): Promise<TestPostgres | undefined> {
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
  const root = mkdtempSync(join(tmpdir(), "agentauth-pg-"));
  const data = join(root, "data");
  const sockets = join(root, "sock");
  mkdirSync(sockets);
  const owner = runAs();
  if (owner) {
    chownSync(root, owner.uid, owner.gid);
    chownSync(sockets, owner.uid, owner.gid);
  }
  const spawnOptions = owner ? { uid: owner.uid, gid: owner.gid } : {};
  execFileSync(
    join(bin, "initdb"),
    ["-D", data, "-U", "agentauth", "--auth=trust", "-E", "UTF8", "--no-sync", "--no-instructions"],
    { ...spawnOptions, stdio: ["ignore", "ignore", "pipe"], cwd: root },
  );
  let child: ChildProcess | undefined;
  let port = 0;
  let lastError = "";
  for (let attempt = 0; attempt < 5 && !child; attempt++) {
    port = await freePort();
    const candidate = spawn(
      join(bin, "postgres"),
      [
        "-D",
        data,
        "-p",
        String(port),
        "-k",
        sockets,
        "-c",
        "listen_addresses=127.0.0.1",
        "-c",
        "max_connections=300",
        "-c",
        "fsync=off",
        "-c",
        "synchronous_commit=off",
        "-c",
        "full_page_writes=off",
        "-c",
        "shared_buffers=64MB",
      ],
      { ...spawnOptions, stdio: ["ignore", "ignore", "pipe"], cwd: root },
    );
    let stderr = "";
    candidate.stderr?.on("data", (chunk: Buffer) => {
      stderr = (stderr + chunk.toString()).slice(-4000);
    });
    const url = `postgres://agentauth@127.0.0.1:${port}/postgres`;
    if (await ready(url, candidate)) child = candidate;
    else {
      candidate.kill("SIGKILL");
      lastError = stderr;
    }
  }
  if (!child) {
    rmSync(root, { recursive: true, force: true });
    throw new Error(`the throwaway PostgreSQL server did not start: ${lastError}`);
  }
  const server = child;
  const stop = () => {
    if (server.exitCode === null) server.kill("SIGKILL");
  };
  process.once("exit", stop);
  after(async () => {
    // Fast shutdown; the folder goes with it.
    if (server.exitCode === null) {
      const exited = new Promise((resolve) => server.once("exit", resolve));
      server.kill("SIGINT");
      await Promise.race([exited, new Promise((r) => setTimeout(r, 5_000))]);
      stop();
    }
    process.removeListener("exit", stop);
    rmSync(root, { recursive: true, force: true });
  });
  return onServer(`postgres://agentauth@127.0.0.1:${port}/postgres`, server.pid);
}

/** Fresh databases on a running server; the ones made for an external server are dropped after the file. */
function onServer(adminUrl: string, pid: number | undefined): TestPostgres {
  const made: string[] = [];
  if (pid === undefined) {
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
    pid,
    async freshDatabase() {
      const name = `agentauth_test_${randomBytes(6).toString("hex")}`;
      const admin = new pg.Client({ connectionString: adminUrl });
      await admin.connect();
      try {
        await admin.query(`CREATE DATABASE ${name}`);
      } finally {
        await admin.end();
      }
      made.push(name);
      const url = new URL(adminUrl);
      url.pathname = `/${name}`;
      return url.toString();
    },
  };
}

function runAs(): { uid: number; gid: number } | undefined {
  if (typeof process.getuid !== "function" || process.getuid() !== 0) return undefined;
  const id = (flag: string) => {
    try {
      return Number(execFileSync("id", [flag, "postgres"], { encoding: "utf8" }).trim());
    } catch {
      return Number.NaN;
    }
  };
  const uid = id("-u");
  const gid = id("-g");
  if (Number.isInteger(uid) && Number.isInteger(gid)) return { uid, gid };
  throw new Error(
    "The tests run as root and there is no `postgres` system user to run the throwaway server as (PostgreSQL " +
      "refuses to run as root). Install Debian's postgresql package (`bash scripts/ensure-postgres.sh`).",
  );
}

async function ready(url: string, child: ChildProcess): Promise<boolean> {
  const deadline = Date.now() + 30_000;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) return false;
    const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 1_000 });
    try {
      await client.connect();
      await client.end();
      return true;
    } catch {
      await client.end().catch(() => {});
      await new Promise((r) => setTimeout(r, 100));
    }
  }
  return false;
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}
