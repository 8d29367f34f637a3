/**
 * PostgreSQL against SQLite, same run, same machine, with 1, 2 and 4 processes (issue 11 §3: how it scales):
 * 1. Token reads/s: N reader processes, each reading its own fresh credential through
 *    TokenRefresher.getAccessToken (store read + expiry check, no refresh) back to back for a fixed time; the
 *    aggregate over the N processes. SQLite: one vault file shared by the N processes. PostgreSQL: one database,
 *    read with the store's record cache (the default) and without it (`cache: false`, one round trip per read), three
 *    sides of each round back to back; the issue 22 goal is PostgreSQL with the cache ≥ 0.5× SQLite.
 * 2. Callbacks/s: N RAP runtime processes on one store (SQLite: one file; PostgreSQL: one database), each on its own
 *    port; tool_result callbacks for distinct pre-created calls POSTed over HTTP by this process (the load generator,
 *    separate from the runtimes), round-robin over the N ports; accepted (200) callbacks per second.
 * Medians over rounds (after a warm-up round) whose backend order alternates; ratios are PostgreSQL/SQLite, as a ratio of the medians and as
 * the median of each round's ratio (both sides of a round ran back to back under the same load).
 * The PostgreSQL server is a throwaway one on the same disk as the SQLite files, with fsync and synchronous commit
 * on (the SQLite stores run synchronous=FULL: both sides flush each commit), or AGENTAUTH_TEST_DATABASE_URL.
 * Without PostgreSQL, the SQLite half runs alone.
 *
 * Run: node_modules/.bin/node --no-warnings bench/postgres.bench.ts [--quick] [--reads | --callbacks]
 */

import { randomBytes } from "node:crypto";
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { availableParallelism, loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import pg from "pg";
import { secret } from "../src/core/secret.ts";
import { ingest, standInTool } from "./fixtures/callback-load.ts";
import { type LineWorker, spawnLineWorker } from "./fixtures/line-worker.ts";
import { benchPostgres } from "./fixtures/postgres-server.ts";
import { ISSUER, openBenchVault, RESOURCE } from "./fixtures/postgres-worker.ts";

// --quick: one short round, to check the harness (the figures mean little).
const QUICK = process.argv.includes("--quick");
const ROUNDS = QUICK ? 1 : 5;
/** Unmeasured rounds first: the processes' JIT and the databases' caches warm up before the figures count. */
const WARMUP_ROUNDS = QUICK ? 0 : 1;
const PROCESSES = [1, 2, 4];
const READ_MS = QUICK ? 300 : 1000;
const CALLBACKS = QUICK ? 200 : 500;
const IN_FLIGHT_PER_PROCESS = 16;
const WORKER = join(import.meta.dirname, "fixtures", "postgres-worker.ts");

type Backend = "sqlite" | "postgres" | "postgres-nocache";
type Rates = Record<Backend, number[]>;
const noRates = (): Rates => ({ sqlite: [], postgres: [], "postgres-nocache": [] });

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  const m = Math.floor(s.length / 2);
  return s.length % 2 ? (s[m] ?? 0) : ((s[m - 1] ?? 0) + (s[m] ?? 0)) / 2;
};
/** Who goes first alternates between rounds, so warm-up and background load do not favour one side. */
const orderFor = (round: number, backends: Backend[]): Backend[] =>
  Math.abs(round) % 2 === 0 ? backends : [...backends].reverse();

const workers = new Set<LineWorker>();
/** Starts one worker per env, all at once, and waits for each one's ready event. */
const start = async (envs: Record<string, string>[]) => {
  const started = envs.map((env) => spawnLineWorker(WORKER, env));
  for (const w of started) workers.add(w);
  const ready = await Promise.all(started.map((w) => w.next()));
  return { started, ready };
};
const stopAll = async (list: LineWorker[]) => {
  await Promise.all(list.map((w) => w.stop()));
  for (const w of list) workers.delete(w);
};

const loadStart = loadavg()[0] ?? 0;
const postgres = await benchPostgres();
const dir = mkdtempSync(join(tmpdir(), "agentauth-pg-bench-"));
/** Why a PostgreSQL column is empty, printed under the table. */
const notices: string[] = postgres ? [] : ["PostgreSQL: no server (see the notice above)"];

/** Token reads: the credentials are put once, then N readers per backend per process count. */
async function readsBench(): Promise<Record<number, Rates>> {
  const homes: Record<"sqlite" | "postgres", string> = {
    sqlite: join(dir, "vault-sqlite"),
    postgres: join(dir, "vault-postgres"),
  };
  const urls: Partial<Record<Backend, string>> = {};
  if (postgres) urls.postgres = await postgres.freshDatabase();
  const stored: ("sqlite" | "postgres")[] = postgres ? ["sqlite", "postgres"] : ["sqlite"];
  const backends: Backend[] = postgres ? ["sqlite", "postgres", "postgres-nocache"] : ["sqlite"];
  for (const backend of stored) {
    mkdirSync(homes[backend]);
    const store = openBenchVault(backend, homes[backend], urls[backend]);
    try {
      for (let i = 0; i < Math.max(...PROCESSES); i++) await store.put(credential(i));
    } finally {
      await store.close();
    }
  }
  const results: Record<number, Rates> = {};
  for (const n of PROCESSES) {
    const rates = noRates();
    const running: Partial<Record<Backend, LineWorker[]>> = {};
    for (const backend of backends) {
      const on = backend === "sqlite" ? "sqlite" : "postgres";
      const env = (i: number) => ({
        MODE: "reader",
        BACKEND: on,
        HOME_DIR: homes[on],
        DATABASE_URL: urls[on] ?? "",
        SUBJECT: `user-${i}`,
        CACHE: backend === "postgres-nocache" ? "off" : "on",
      });
      const { started, ready } = await start(Array.from({ length: n }, (_, i) => env(i)));
      if (backend === "postgres" && ready.some((e) => e.cacheServing !== true))
        notices.push(
          `token reads, ${n} processes: a PostgreSQL reader's cache did not serve before timing`,
        );
      running[backend] = started;
    }
    for (let round = -WARMUP_ROUNDS; round < ROUNDS; round++) {
      for (const backend of orderFor(round, backends)) {
        const list = running[backend] ?? [];
        for (const w of list) w.send({ op: "read", ms: READ_MS });
        const done = await Promise.all(list.map((w) => w.next()));
        const rate = done.reduce((sum, e) => sum + (Number(e.count) / Number(e.ms)) * 1000, 0);
        if (round >= 0) rates[backend].push(Math.round(rate));
      }
    }
    for (const list of Object.values(running)) await stopAll(list);
    results[n] = rates;
  }
  return results;
}

function credential(i: number) {
  return {
    subject: `user-${i}`,
    issuer: ISSUER,
    resource: RESOURCE,
    clientId: "agentauth-cli",
    // Realistic sizes, as in vault.bench.ts: JWT access and ID tokens of about a kilobyte.
    tokens: {
      accessToken: secret(randomBytes(600).toString("base64url")),
      refreshToken: secret(randomBytes(48).toString("base64url")),
      idToken: secret(randomBytes(700).toString("base64url")),
      tokenType: "Bearer",
    },
    expiresAt: Date.now() + 3_600_000,
    scopes: ["openid", "tools:read"],
    account: { label: "work", name: `User ${i}`, email: `user${i}@example.com` },
    status: "active" as const,
  };
}

async function callbacksBench(): Promise<Record<number, Rates>> {
  const tool = await standInTool();
  const secretKey = randomBytes(32).toString("base64url");
  const results: Record<number, Rates> = {};
  const backends: Backend[] = postgres ? ["sqlite", "postgres"] : ["sqlite"];
  try {
    for (const n of PROCESSES) {
      const rates = noRates();
      const running: Partial<Record<Backend, { list: LineWorker[]; ports: string[] }>> = {};
      for (const backend of backends) {
        const home = join(dir, `runtime-${backend}-${n}`);
        mkdirSync(home);
        const url = backend === "postgres" ? await postgres?.freshDatabase() : undefined;
        const env = {
          MODE: "runtime",
          BACKEND: backend,
          HOME_DIR: home,
          DB_PATH: join(home, "runtime.db"),
          DATABASE_URL: url ?? "",
          TOOLSET: tool.url,
          SECRET_KEY: secretKey,
        };
        // The first process creates the schema; the others open it (concurrent opens are the stores' own test).
        const first = await start([env]);
        const rest = await start(Array.from({ length: n - 1 }, () => env));
        const list = [...first.started, ...rest.started];
        // A bench that measured SQLite twice would be worse than none: the PostgreSQL side must have its tables.
        if (url && !(await hasTables(url)))
          throw new Error("the PostgreSQL runtimes made no tables: they are not on PostgreSQL");
        const ports = [...first.ready, ...rest.ready].map((e) => new URL(String(e.url)).host);
        running[backend] = { list, ports };
      }
      for (let round = -WARMUP_ROUNDS; round < ROUNDS; round++) {
        for (const backend of orderFor(round, backends)) {
          const { list, ports } = running[backend] ?? { list: [], ports: [] };
          const rate = await callbackRound(tool, list, ports, `r${round}`);
          if (round >= 0) rates[backend].push(rate);
        }
      }
      for (const { list } of Object.values(running)) await stopAll(list);
      results[n] = rates;
    }
  } finally {
    await tool.close();
  }
  return results;
}

/**
 * One measured batch: CALLBACKS calls pre-created over the processes (each invokes its share; the stand-in keeps
 * the callback URLs), their tool_results POSTed round-robin over the processes' ports, then a check outside the
 * timing that every accepted callback settled its call. Returns accepted callbacks per second.
 */
async function callbackRound(
  tool: Awaited<ReturnType<typeof standInTool>>,
  list: LineWorker[],
  ports: string[],
  prefix: string,
): Promise<number> {
  tool.take();
  for (const [i, w] of list.entries())
    w.send({ op: "create", count: Math.ceil(CALLBACKS / list.length), prefix: `${prefix}-p${i}` });
  const created = await Promise.all(list.map((w) => w.next()));
  const calls = tool.take();
  const accepted = created.reduce((sum, e) => sum + Number(e.accepted), 0);
  if (accepted !== calls.length) throw new Error(`${accepted} calls acked, ${calls.length} seen`);
  const targets = calls.map((call, k) => {
    const url = new URL(call.callback_url);
    url.host = ports[k % ports.length] as string; // round-robin: any process may apply any callback
    const body = { type: "tool_result", group_id: call.group_id, id: call.id, text: "done" };
    return { url, body: JSON.stringify(body) };
  });
  const rate = await ingest(targets, IN_FLIGHT_PER_PROCESS * list.length);
  const checker = list[0] as LineWorker;
  checker.send({ op: "settled", groups: [...new Set(calls.map((c) => c.group_id))] });
  const settled = Number((await checker.next()).count);
  if (settled !== calls.length)
    throw new Error(`${calls.length} callbacks accepted, ${settled} calls settled`);
  return rate;
}

async function hasTables(url: string): Promise<boolean> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const { rows } = await client.query(
      "SELECT count(*)::int AS n FROM information_schema.tables WHERE table_schema = 'public'",
    );
    return Number(rows[0]?.n) > 0;
  } finally {
    await client.end();
  }
}

/**
 * One line per measure and process count; "scale" is the rate against the same side with 1 process. Ratios are of the
 * medians, and "per-round" the median of each round's ratio (both sides of a round ran back to back).
 */
function report(reads: Record<number, Rates>, callbacks: Record<number, Rates>) {
  const rows: Record<string, unknown>[] = [];
  const num = (x: number | undefined, digits = 2) =>
    x === undefined || Number.isNaN(x) ? "-" : x.toFixed(digits);
  const rate = (xs: number[]) => (xs.length ? median(xs).toLocaleString("en-US") : "n/a");
  const ratios = (r: Rates, a: Backend, b: Backend) => {
    if (!r[a].length || !r[b].length) return { ratio: undefined, perRound: undefined };
    return {
      ratio: median(r[a]) / median(r[b]),
      perRound: median(r[a].map((x, i) => x / (r[b][i] ?? Number.NaN))),
    };
  };
  console.log(
    `postgres bench: ${ROUNDS} rounds after ${WARMUP_ROUNDS} warm-up; token reads ${READ_MS} ms per round; ${CALLBACKS} callbacks per round, ` +
      `${IN_FLIGHT_PER_PROCESS} in flight per runtime process; ${availableParallelism()} CPUs, load average ` +
      `${loadStart.toFixed(1)} at the start, ${loadavg()[0]?.toFixed(1)} at the end (other work on the machine ` +
      "skews the figures: compare the columns of one run)",
  );
  const pad = (cells: [string, number][]) => cells.map(([c, w]) => c.padStart(w)).join("");
  console.log(
    `\ntoken reads/s: PostgreSQL with its record cache ("pg cache"), without it ("pg no cache"), against SQLite`,
  );
  console.log(
    `${"procs".padEnd(6)}${pad([
      ["sqlite", 10],
      ["scale", 7],
      ["pg cache", 12],
      ["scale", 7],
      ["pg no cache", 13],
      ["scale", 7],
      ["cache/sqlite", 14],
      ["per-round", 11],
      ["nocache/sqlite", 16],
      ["cache/nocache", 15],
    ])}`,
  );
  const scaleOf = (table: Record<number, Rates>, r: Rates, b: Backend) => {
    const base = table[PROCESSES[0] as number] ?? noRates();
    return r[b].length && base[b].length ? median(r[b]) / median(base[b]) : undefined;
  };
  for (const n of PROCESSES) {
    const r = reads[n] ?? noRates();
    const cached = ratios(r, "postgres", "sqlite");
    const uncached = ratios(r, "postgres-nocache", "sqlite");
    const gain = ratios(r, "postgres", "postgres-nocache");
    console.log(
      `${String(n).padEnd(6)}${pad([
        [rate(r.sqlite), 10],
        [num(scaleOf(reads, r, "sqlite"), 1), 7],
        [rate(r.postgres), 12],
        [num(scaleOf(reads, r, "postgres"), 1), 7],
        [rate(r["postgres-nocache"]), 13],
        [num(scaleOf(reads, r, "postgres-nocache"), 1), 7],
        [num(cached.ratio), 14],
        [num(cached.perRound), 11],
        [num(uncached.ratio), 16],
        [num(gain.ratio), 15],
      ])}`,
    );
    rows.push({
      measure: "token reads/s",
      processes: n,
      sqlite: r.sqlite.length ? median(r.sqlite) : null,
      postgres: r.postgres.length ? median(r.postgres) : null,
      postgresNoCache: r["postgres-nocache"].length ? median(r["postgres-nocache"]) : null,
      ratio: cached.ratio === undefined ? null : Number(cached.ratio.toFixed(3)),
      perRoundRatio: cached.perRound === undefined ? null : Number(cached.perRound.toFixed(3)),
      noCacheRatio: uncached.ratio === undefined ? null : Number(uncached.ratio.toFixed(3)),
      noCachePerRoundRatio:
        uncached.perRound === undefined ? null : Number(uncached.perRound.toFixed(3)),
      rawRounds: r,
    });
  }
  console.log("\ncallbacks/s: RAP runtimes on one store");
  console.log(
    `${"procs".padEnd(6)}${pad([
      ["sqlite", 10],
      ["scale", 7],
      ["postgres", 12],
      ["scale", 7],
      ["pg/sqlite", 11],
      ["per-round", 11],
    ])}`,
  );
  for (const n of PROCESSES) {
    const r = callbacks[n] ?? noRates();
    const { ratio, perRound } = ratios(r, "postgres", "sqlite");
    console.log(
      `${String(n).padEnd(6)}${pad([
        [rate(r.sqlite), 10],
        [num(scaleOf(callbacks, r, "sqlite"), 1), 7],
        [rate(r.postgres), 12],
        [num(scaleOf(callbacks, r, "postgres"), 1), 7],
        [num(ratio), 11],
        [num(perRound), 11],
      ])}`,
    );
    rows.push({
      measure: "callbacks/s",
      processes: n,
      sqlite: r.sqlite.length ? median(r.sqlite) : null,
      postgres: r.postgres.length ? median(r.postgres) : null,
      ratio: ratio === undefined ? null : Number(ratio.toFixed(3)),
      perRoundRatio: perRound === undefined ? null : Number(perRound.toFixed(3)),
      rawRounds: { sqlite: r.sqlite, postgres: r.postgres },
    });
  }
  for (const reason of notices) console.log(`not available: ${reason}`);
  console.log(
    JSON.stringify({
      bench: "postgres",
      rounds: ROUNDS,
      warmupRounds: WARMUP_ROUNDS,
      processes: PROCESSES,
      callbacksPerRound: CALLBACKS,
      readMs: READ_MS,
      cpus: availableParallelism(),
      unit: "ops/s (median)",
      notAvailable: notices,
      results: rows,
    }),
  );
}

// --reads / --callbacks: one half only (the other's table stays empty).
const ONLY_READS = process.argv.includes("--reads");
const ONLY_CALLBACKS = process.argv.includes("--callbacks");
try {
  const reads = ONLY_CALLBACKS ? {} : await readsBench();
  const callbacks = ONLY_READS ? {} : await callbacksBench();
  report(reads, callbacks);
} finally {
  await stopAll([...workers]);
  await postgres?.stop();
  rmSync(dir, { recursive: true, force: true });
}
