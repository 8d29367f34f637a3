/**
 * RAP, measured against baselines in the same run:
 * 1. Invocation acknowledgement: 1,000 concurrent invocations to the tool server (HMAC-authenticated as
 *    `rap tool serve` requires by default, validated, acked, then answered by callback) vs a bare node:http handler
 *    that answers 200. The tool without invocation auth is printed too. Latency p50/p99 and throughput; the target is at
 *    least 0.7 of the bare throughput.
 * 2. Durable callback ingestion in the runtime (capability check, validation, per-thread queue, SQLite commit) vs a
 *    node:http handler that inserts the same messages into plain SQLite with the same pragmas.
 * Every server runs in its own process. Medians over rounds whose order alternates.
 *
 * Run: node_modules/.bin/node bench/rap.bench.ts
 */

import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Secret } from "../src/core/secret.ts";
import { invocationAuthHeaders } from "../src/rap/invocation-auth.ts";

const ROUNDS = 5;
const INVOCATIONS = 1000;
const CALLBACKS = 1000;
const CALLBACK_CONCURRENCY = 16;

const children: ChildProcess[] = [];
function start(mode: string, env: Record<string, string> = {}): Promise<Record<string, string>> {
  const child = spawn(
    process.execPath,
    ["--no-warnings", join(import.meta.dirname, "fixtures", "rap-server.ts")],
    {
      env: { ...process.env, MODE: mode, ...env },
      stdio: ["ignore", "pipe", "inherit"],
    },
  );
  children.push(child);
  return new Promise((resolve, reject) => {
    let out = "";
    child.stdout?.setEncoding("utf8").on("data", (chunk: string) => {
      out += chunk;
      const line = out.split("\n").find((l) => l.includes('"ready"'));
      if (line) resolve(JSON.parse(line));
    });
    child.once("exit", (code) => reject(new Error(`${mode} exited ${code}`)));
  });
}

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  const m = Math.floor(s.length / 2);
  return s.length % 2 ? (s[m] ?? 0) : ((s[m - 1] ?? 0) + (s[m] ?? 0)) / 2;
};
const percentile = (xs: number[], p: number) =>
  [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(xs.length * p))] ?? 0;
const SECRET = new Secret("bench-invocation-secret-bench-invocation-secret");
/** Signs like a runtime does when `sign` is set (each request has a distinct body, so no replay). */
const post = (url: string, body: unknown, sign = false) => {
  const text = JSON.stringify(body);
  const auth = sign
    ? invocationAuthHeaders(
        { scheme: "hmac-sha256", secret: SECRET },
        { method: "POST", host: new URL(url).host, path: new URL(url).pathname, body: text },
      )
    : {};
  return fetch(url, {
    method: "POST",
    headers: { "content-type": "application/json", ...auth },
    body: text,
  }).then(async (r) => {
    await r.arrayBuffer();
    return r.status;
  });
};

async function burst(endpoint: string, sink: string, round: number, sign = false) {
  const latencies: number[] = [];
  const start = performance.now();
  const statuses = await Promise.all(
    Array.from({ length: INVOCATIONS }, async (_, i) => {
      const t0 = performance.now();
      const status = await post(
        endpoint,
        {
          operation: "echo",
          arguments: { text: `hello ${i}` },
          id: `call-${round}-${i}`,
          group_id: `thread-${i % 50}`,
          callback_url: `${sink}/callback`,
        },
        sign,
      );
      latencies.push(performance.now() - t0);
      return status;
    }),
  );
  const seconds = (performance.now() - start) / 1000;
  if (statuses.some((s) => s !== 200))
    throw new Error(`non-200 acknowledgements: ${statuses.filter((s) => s !== 200).length}`);
  return {
    throughput: INVOCATIONS / seconds,
    p50: percentile(latencies, 0.5),
    p99: percentile(latencies, 0.99),
  };
}

async function ingest(targets: { url: string; body: unknown }[]) {
  let next = 0;
  const start = performance.now();
  await Promise.all(
    Array.from({ length: CALLBACK_CONCURRENCY }, async () => {
      while (next < targets.length) {
        const target = targets[next++];
        if (!target) break;
        const status = await post(target.url, target.body);
        if (status !== 200) throw new Error(`callback answered ${status}`);
      }
    }),
  );
  return targets.length / ((performance.now() - start) / 1000);
}

const dir = mkdtempSync(join(tmpdir(), "agentauth-rap-bench-"));
try {
  const sink = (await start("sink")).url as string;
  const tool = (await start("tool", { SECRET: SECRET.reveal() })).url as string;
  const open = (await start("tool", { SECRET: "" })).url as string;
  const bare = (await start("bare")).url as string;
  const endpoints = { tool: `${tool}/invoke`, open: `${open}/invoke`, bare } as const;
  type Which = keyof typeof endpoints;
  const results: Record<Which, Awaited<ReturnType<typeof burst>>[]> = {
    tool: [],
    open: [],
    bare: [],
  };
  for (const which of ["tool", "open", "bare"] as const)
    await burst(endpoints[which], sink, -1, which === "tool"); // warm-up
  const orders: Which[][] = [
    ["tool", "open", "bare"],
    ["bare", "open", "tool"],
    ["open", "tool", "bare"],
  ];
  for (let round = 0; round < ROUNDS; round++) {
    for (const which of orders[round % orders.length] as Which[]) {
      results[which].push(await burst(endpoints[which], sink, round, which === "tool"));
      await new Promise((r) => setTimeout(r, 300)); // let the tool's callbacks drain before the next burst
    }
  }
  // Per-round ratios (each against the bare server's burst of the same round): steadier than a ratio of medians.
  const ratio = (which: Which) =>
    median(
      results[which].map((r, i) => r.throughput / (results.bare[i]?.throughput ?? Number.NaN)),
    );

  const standIn = (await start("stand-in")).url as string;
  const runtime = await start("runtime", { TOOLSET: standIn, DIR: dir });
  const plain = (await start("plain-sqlite", { DIR: dir })).url as string;
  const runtimeRates: number[] = [];
  const plainRates: number[] = [];
  for (let round = 0; round < ROUNDS; round++) {
    await post(String(runtime.control), { count: CALLBACKS, group: `g${round}` });
    const seen = (await (await fetch(`${standIn}/seen`)).json()) as string[];
    const calls = seen.map(
      (s) => JSON.parse(s) as { id: string; group_id: string; callback_url: string },
    );
    const message = (c: { id: string; group_id: string }) => ({
      type: "tool_result",
      group_id: c.group_id,
      id: c.id,
      text: "done",
    });
    const runtimeTargets = calls.map((c) => ({ url: c.callback_url, body: message(c) }));
    const plainTargets = calls.map((c) => ({ url: plain, body: message(c) }));
    if (round % 2 === 0) {
      runtimeRates.push(await ingest(runtimeTargets));
      plainRates.push(await ingest(plainTargets));
    } else {
      plainRates.push(await ingest(plainTargets));
      runtimeRates.push(await ingest(runtimeTargets));
    }
  }

  const summary = (which: Which) => ({
    throughput: median(results[which].map((r) => r.throughput)),
    p50: median(results[which].map((r) => r.p50)),
    p99: median(results[which].map((r) => r.p99)),
  });
  const t = summary("tool");
  const o = summary("open");
  const b = summary("bare");
  const ri = median(runtimeRates);
  const pi = median(plainRates);
  // Each round's two sides ran back to back: the median of their ratios, as for the acknowledgements.
  const ingestionPerRound = median(runtimeRates.map((r, i) => r / (plainRates[i] ?? Number.NaN)));
  console.log(
    `rap bench: ${ROUNDS} rounds; ${INVOCATIONS} concurrent invocations; ${CALLBACKS} callbacks, ${CALLBACK_CONCURRENCY} in flight`,
  );
  console.log("measure                               tool/runtime     baseline      ratio");
  console.log(
    `ack throughput, HMAC (invocations/s) ${t.throughput.toFixed(0).padStart(11)} ${b.throughput.toFixed(0).padStart(12)} ${(t.throughput / b.throughput).toFixed(3).padStart(10)}  per-round ${ratio("tool").toFixed(3)}`,
  );
  console.log(
    `ack throughput, no auth             ${o.throughput.toFixed(0).padStart(12)} ${b.throughput.toFixed(0).padStart(12)} ${(o.throughput / b.throughput).toFixed(3).padStart(10)}  per-round ${ratio("open").toFixed(3)}`,
  );
  console.log(
    `ack latency p50, HMAC (ms)          ${t.p50.toFixed(1).padStart(12)} ${b.p50.toFixed(1).padStart(12)} ${(t.p50 / b.p50).toFixed(3).padStart(10)}`,
  );
  console.log(
    `ack latency p99, HMAC (ms)          ${t.p99.toFixed(1).padStart(12)} ${b.p99.toFixed(1).padStart(12)} ${(t.p99 / b.p99).toFixed(3).padStart(10)}`,
  );
  console.log(
    `durable callback ingestion (msg/s)  ${ri.toFixed(0).padStart(12)} ${pi.toFixed(0).padStart(12)} ${(ri / pi).toFixed(3).padStart(10)}  per-round ${ingestionPerRound.toFixed(3)}`,
  );
  console.log(
    JSON.stringify({
      bench: "rap",
      rounds: ROUNDS,
      ack: {
        tool: t,
        toolNoAuth: o,
        bare: b,
        throughputRatio: t.throughput / b.throughput,
        perRoundRatio: ratio("tool"),
        perRoundRatioNoAuth: ratio("open"),
      },
      ingestion: {
        runtime: ri,
        plainSqlite: pi,
        ratio: ri / pi,
        perRoundRatio: ingestionPerRound,
        rawRounds: { runtime: runtimeRates, plainSqlite: plainRates },
      },
    }),
  );
} finally {
  for (const child of children) child.kill();
  rmSync(dir, { recursive: true, force: true });
}
