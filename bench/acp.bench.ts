/**
 * ACP over stdio: session/prompt requests per second through the echo agent with the agentauth kit (gated,
 * authenticated with an API key in a real SQLite vault) against the same agent without it, in one run; and the
 * auth/status round trip against a no-op extension request on the kit agent. Raw JSON lines from this process,
 * 16 requests in flight, medians of rounds whose order alternates. Also the agent processes' CPU time per
 * session/prompt (from /proc), which a busy machine disturbs far less than throughput.
 *
 * Run: node_modules/.bin/node bench/acp.bench.ts
 */

import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

const ROUNDS = 9;
const WARMUP_ROUNDS = 3;
const REQUESTS = 3000;
const IN_FLIGHT = 16;
const LATENCY_SAMPLES = 500;

class Peer {
  readonly child: ChildProcess;
  #next = 0;
  #buffer = "";
  readonly #pending = new Map<
    number,
    (message: { result?: unknown; error?: { code: number } }) => void
  >();

  constructor(env: NodeJS.ProcessEnv) {
    this.child = spawn(
      process.execPath,
      ["--no-warnings", join(import.meta.dirname, "fixtures", "echo-agent.ts")],
      {
        env,
        stdio: ["pipe", "pipe", "inherit"],
      },
    );
    this.child.stdout?.setEncoding("utf8").on("data", (chunk: string) => {
      this.#buffer += chunk;
      for (let i = this.#buffer.indexOf("\n"); i >= 0; i = this.#buffer.indexOf("\n")) {
        const message = JSON.parse(this.#buffer.slice(0, i));
        this.#buffer = this.#buffer.slice(i + 1);
        if (message.id !== undefined && message.method === undefined)
          this.#pending.get(message.id)?.(message);
      }
    });
  }

  request(
    method: string,
    params: unknown,
  ): Promise<{ result?: unknown; error?: { code: number } }> {
    const id = this.#next++;
    return new Promise((resolve) => {
      this.#pending.set(id, (m) => {
        this.#pending.delete(id);
        resolve(m);
      });
      this.child.stdin?.write(`${JSON.stringify({ jsonrpc: "2.0", id, method, params })}\n`);
    });
  }

  async ok(method: string, params: unknown): Promise<unknown> {
    const response = await this.request(method, params);
    if (response.error) throw new Error(`${method} failed: ${JSON.stringify(response.error)}`);
    return response.result;
  }

  /** Ends the conversation and lets the agent exit by itself (so `--cpu-prof` profiles get written), then kills. */
  async close(): Promise<void> {
    const exited = new Promise((resolve) => this.child.once("exit", resolve));
    this.child.stdin?.end();
    const timer = setTimeout(() => this.child.kill(), 5000);
    await exited;
    clearTimeout(timer);
  }
}

/**
 * CPU time (user + system, µs) the agent process has used so far, from /proc (Linux): per-request CPU cost is far
 * less sensitive to a busy machine than throughput, so it shows what the kit itself costs. undefined elsewhere.
 */
function agentCpuMicros(peer: Peer): number | undefined {
  try {
    const stat = readFileSync(`/proc/${peer.child.pid}/stat`, "utf8");
    // Fields after the parenthesised command name; utime and stime are fields 14 and 15 (1-based).
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    const ticks = Number(fields[11]) + Number(fields[12]);
    return (ticks * 1e6) / CLOCK_TICKS;
  } catch {
    return undefined;
  }
}
const CLOCK_TICKS = 100; // USER_HZ on Linux

/** Agent CPU time and requests over the measured rounds, per agent. */
const cpuSpent = new Map<Peer, { micros: number; requests: number }>();

async function measuredRound(peer: Peer, sessionId: string): Promise<number> {
  const before = agentCpuMicros(peer);
  const rate = await promptRound(peer, sessionId);
  const after = agentCpuMicros(peer);
  if (before !== undefined && after !== undefined) {
    const spent = cpuSpent.get(peer) ?? { micros: 0, requests: 0 };
    spent.micros += after - before;
    spent.requests += REQUESTS;
    cpuSpent.set(peer, spent);
  }
  return rate;
}

/** session/prompt requests per second over one round of REQUESTS. */
async function promptRound(peer: Peer, sessionId: string): Promise<number> {
  let sent = 0;
  const start = performance.now();
  const worker = async () => {
    while (sent < REQUESTS) {
      sent++;
      await peer.ok("session/prompt", { sessionId, prompt: [{ type: "text", text: "hi" }] });
    }
  };
  await Promise.all(Array.from({ length: IN_FLIGHT }, worker));
  return REQUESTS / ((performance.now() - start) / 1000);
}

async function latencyMicros(peer: Peer, method: string): Promise<number> {
  const samples: number[] = [];
  for (let i = 0; i < LATENCY_SAMPLES; i++) {
    const start = performance.now();
    await peer.ok(method, {});
    samples.push((performance.now() - start) * 1000);
  }
  return median(samples);
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const mid = Math.floor(s.length / 2);
  return s.length % 2 ? (s[mid] ?? 0) : ((s[mid - 1] ?? 0) + (s[mid] ?? 0)) / 2;
}

const home = mkdtempSync(join(tmpdir(), "agentauth-acp-bench-"));
const bare = new Peer({ ...process.env, AGENTAUTH_HOME: home });
const kit = new Peer({ ...process.env, AGENTAUTH_HOME: home, KIT: "1" });
try {
  for (const peer of [bare, kit])
    await peer.ok("initialize", { protocolVersion: 1, clientCapabilities: {} });
  await kit.ok("authenticate", {
    methodId: "api-key",
    _meta: { "api-key": { apiKey: "bench-key" } },
  });
  const bareSession = (
    (await bare.ok("session/new", { cwd: home, mcpServers: [] })) as { sessionId: string }
  ).sessionId;
  const kitSession = (
    (await kit.ok("session/new", { cwd: home, mcpServers: [] })) as { sessionId: string }
  ).sessionId;
  // Warm up both (JIT in three processes, SQLite page cache) until rates stop climbing.
  for (let i = 0; i < WARMUP_ROUNDS; i++) {
    await promptRound(bare, bareSession);
    await promptRound(kit, kitSession);
  }

  const bareRates: number[] = [];
  const kitRates: number[] = [];
  const statusLatency: number[] = [];
  const noopLatency: number[] = [];
  for (let round = 0; round < ROUNDS; round++) {
    if (round % 2 === 0) {
      bareRates.push(await measuredRound(bare, bareSession));
      kitRates.push(await measuredRound(kit, kitSession));
    } else {
      kitRates.push(await measuredRound(kit, kitSession));
      bareRates.push(await measuredRound(bare, bareSession));
    }
    statusLatency.push(await latencyMicros(kit, "auth/status"));
    noopLatency.push(await latencyMicros(kit, "_bench/noop"));
  }
  const b = median(bareRates);
  const k = median(kitRates);
  // Each round measures both back to back, so the per-round ratio cancels drift (CPU frequency, neighbours).
  const pairRatio = median(kitRates.map((rate, i) => rate / (bareRates[i] ?? rate)));
  const cpu = (peer: Peer) => {
    const spent = cpuSpent.get(peer);
    return spent ? spent.micros / spent.requests : undefined;
  };
  const kitCpu = cpu(kit);
  const bareCpu = cpu(bare);
  const s = median(statusLatency);
  const n = median(noopLatency);
  console.log(
    `acp bench: ${ROUNDS} rounds, ${REQUESTS} session/prompt per round, ${IN_FLIGHT} in flight, stdio`,
  );
  console.log("measure                                   value        baseline     ratio");
  console.log(
    `session/prompt req/s (kit vs bare)  ${k.toFixed(0).padStart(12)} ${b.toFixed(0).padStart(12)} ${(k / b).toFixed(3).padStart(9)}`,
  );
  console.log(
    `  median of per-round kit/bare ratios${" ".repeat(26)}${pairRatio.toFixed(3).padStart(9)}`,
  );
  if (kitCpu !== undefined && bareCpu !== undefined)
    console.log(
      `agent CPU µs per session/prompt        ${kitCpu.toFixed(1).padStart(9)} ${bareCpu.toFixed(1).padStart(12)} ${(kitCpu / bareCpu).toFixed(3).padStart(9)}`,
    );
  console.log(
    `round trip µs (auth/status vs noop) ${s.toFixed(0).padStart(12)} ${n.toFixed(0).padStart(12)} ${(s / n).toFixed(3).padStart(9)}`,
  );
  console.log(
    JSON.stringify({
      bench: "acp",
      rounds: ROUNDS,
      promptsPerSecond: {
        kit: Math.round(k),
        bare: Math.round(b),
        ratio: Math.round((k / b) * 1000) / 1000,
        medianPairRatio: Math.round(pairRatio * 1000) / 1000,
      },
      agentCpuMicrosPerPrompt: {
        kit: kitCpu === undefined ? null : Math.round(kitCpu * 10) / 10,
        bare: bareCpu === undefined ? null : Math.round(bareCpu * 10) / 10,
        ratio:
          kitCpu === undefined || bareCpu === undefined
            ? null
            : Math.round((kitCpu / bareCpu) * 1000) / 1000,
      },
      roundTripMicros: {
        authStatus: Math.round(s),
        noop: Math.round(n),
        ratio: Math.round((s / n) * 1000) / 1000,
      },
      raw: { bareRates, kitRates, statusLatency, noopLatency },
    }),
  );
} finally {
  await Promise.all([bare.close(), kit.close()]);
  rmSync(home, { recursive: true, force: true });
}
