/**
 * A throwaway PostgreSQL server: `initdb` into a temporary folder and `postgres` on a free 127.0.0.1 port, from
 * Debian's packages (/usr/lib/postgresql/<version>/bin, the newest installed). As root (CI containers), the server
 * runs as the `postgres` system user, since PostgreSQL refuses to run as root.
 *
 * No node:test here: test/support/postgres.ts wires it into a test file (an `after` hook stops it), and the
 * benches (bench/fixtures/postgres-server.ts) stop it themselves.
 */

import { type ChildProcess, execFileSync, spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { chownSync, existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pg from "pg";

export interface PostgresServer {
  /** A URL on the server's `postgres` database (for admin statements). */
  adminUrl: string;
  /** The server's (postmaster's) process id; a new one after `restart`. */
  readonly pid: number | undefined;
  /**
   * Stops the server as `pg_ctl stop -m <mode>` would (immediate: SIGQUIT, every backend killed, no checkpoint, crash
   * recovery on start; fast: SIGINT) and starts it again on the same port and data folder.
   */
  restart(mode: "immediate" | "fast"): Promise<void>;
  /** Fast shutdown (SIGINT, SIGKILL after 5 s); the data folder is deleted. Safe to call twice. */
  stop(): Promise<void>;
}

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

export interface PostgresServerOptions {
  /**
   * Keep PostgreSQL's default durability (fsync, synchronous commit, full page writes). Default false: tests run
   * with them off, for speed; a bench comparing against SQLite with `synchronous=FULL` turns them on, or it would
   * compare a disk flush with none.
   */
  durable?: boolean;
  /**
   * Commits reach the operating system before they return (synchronous_commit on, fsync still off): what a test that
   * kills the server (`restart("immediate")`) needs, or a commit that returned can vanish with the WAL buffers.
   */
  crashSafe?: boolean;
}

/** Starts a server from the binaries in `bin`; throws when it does not come up. */
export async function startPostgresServer(
  bin: string,
  options: PostgresServerOptions = {},
): Promise<PostgresServer> {
  const speed = options.durable
    ? []
    : options.crashSafe
      ? ["-c", "fsync=off", "-c", "full_page_writes=off"]
      : ["-c", "fsync=off", "-c", "synchronous_commit=off", "-c", "full_page_writes=off"];
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
  const launch = async (port: number): Promise<{ child?: ChildProcess; error: string }> => {
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
        ...speed,
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
    if (await ready(url, candidate)) return { child: candidate, error: "" };
    candidate.kill("SIGKILL");
    return { error: stderr };
  };
  let child: ChildProcess | undefined;
  let port = 0;
  let lastError = "";
  for (let attempt = 0; attempt < 5 && !child; attempt++) {
    port = await freePort();
    const launched = await launch(port);
    child = launched.child;
    lastError = launched.error;
  }
  if (!child) {
    rmSync(root, { recursive: true, force: true });
    throw new Error(`the throwaway PostgreSQL server did not start: ${lastError}`);
  }
  let server = child;
  let watchdog = startWatchdog(server.pid as number, root);
  const kill = () => {
    if (server.exitCode === null) server.kill("SIGKILL");
  };
  process.once("exit", kill);
  let stopped: Promise<void> | undefined;
  const exited = (proc: ChildProcess) =>
    proc.exitCode !== null || proc.signalCode !== null
      ? Promise.resolve()
      : new Promise((resolve) => proc.once("exit", resolve));
  return {
    adminUrl: `postgres://agentauth@127.0.0.1:${port}/postgres`,
    get pid() {
      return server.pid;
    },
    async restart(mode) {
      if (stopped) throw new Error("the server was stopped");
      // pg_ctl stop -m immediate sends SIGQUIT (no checkpoint, crash recovery on start), -m fast SIGINT.
      const gone = exited(server);
      server.kill(mode === "immediate" ? "SIGQUIT" : "SIGINT");
      await Promise.race([gone, new Promise((r) => setTimeout(r, 10_000))]);
      kill();
      await exited(server);
      watchdog.kill("SIGKILL");
      // The same port, so every client's URL still names it; a few tries while the old socket is released.
      let again: ChildProcess | undefined;
      for (let attempt = 0; attempt < 20 && !again; attempt++) {
        const launched = await launch(port);
        again = launched.child;
        lastError = launched.error;
        if (!again) await new Promise((r) => setTimeout(r, 250));
      }
      if (!again) throw new Error(`the PostgreSQL server did not restart: ${lastError}`);
      server = again;
      watchdog = startWatchdog(server.pid as number, root);
    },
    stop() {
      stopped ??= (async () => {
        if (server.exitCode === null) {
          const gone = exited(server);
          server.kill("SIGINT");
          await Promise.race([gone, new Promise((r) => setTimeout(r, 5_000))]);
          kill();
        }
        process.removeListener("exit", kill);
        watchdog.kill("SIGKILL");
        rmSync(root, { recursive: true, force: true });
      })();
      return stopped;
    },
  };
}

/**
 * A process that outlives a SIGKILL of ours (which runs no exit handler) just long enough to stop the server and
 * delete its folder: it holds the read end of a pipe from us, and the kernel closes the write end when we die.
 */
const WATCHDOG = `
const [pid, root] = process.argv.slice(1);
const { rmSync } = require("node:fs");
const signal = (name) => { try { process.kill(Number(pid), name); } catch {} };
process.stdin.on("close", () => {
  signal("SIGQUIT");
  setTimeout(() => { signal("SIGKILL"); try { rmSync(root, { recursive: true, force: true }); } catch {} process.exit(0); }, 2000);
});
process.stdin.resume();
`;

function startWatchdog(pid: number, root: string): ChildProcess {
  const watchdog = spawn(process.execPath, ["-e", WATCHDOG, String(pid), root], {
    stdio: ["pipe", "ignore", "ignore"],
    detached: true,
  });
  // Neither the child nor its pipe may keep this process (a test file, a bench) alive.
  watchdog.unref();
  (watchdog.stdin as unknown as { unref?: () => void })?.unref?.();
  return watchdog;
}

/** Creates an empty database named `<prefix>_<random>` on the server and returns its URL. */
export async function createDatabase(adminUrl: string, prefix: string): Promise<string> {
  const name = `${prefix}_${randomBytes(6).toString("hex")}`;
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  try {
    await admin.query(`CREATE DATABASE ${name}`);
  } finally {
    await admin.end();
  }
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  return url.toString();
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
