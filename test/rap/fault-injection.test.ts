/**
 * Issue 22, "what must be shown": a bounded fault-injection run of the PostgreSQL deployment, built from the CLI
 * only, as docs/deploy.md describes it. Two `rap tool serve --example` instances behind one round-robin proxy
 * (one --public-url), two `rap runtime serve` instances behind another (one --public-url, one --key-file), one
 * PostgreSQL. Clients call echo on 8 threads through either runtime's control API with an Idempotency-Key, retrying
 * on the other runtime while one is down. Meanwhile each tool and each runtime is killed with SIGKILL and brought
 * back, and PostgreSQL is stopped with `-m immediate` and started again.
 *
 * It reports calls sent, accepted, lost (accepted, never settled), ended with an error (a killed tool instance's
 * calls end with one, issue 22 §6; any other error fails), applied twice (two calls for one key, or one call's
 * result applied twice at the runtimes), run twice by the tool (two completions of one call in the tools' logs) and
 * out of order (within a thread, results applied at the runtimes in another order than the tool instance completed
 * them; pairs completed at two instances are reported apart), and fails on any non-zero lost / other error / applied
 * twice / run twice / out of order.
 *
 * About 1.5 minutes. Skipped without PostgreSQL binaries unless AGENTAUTH_REQUIRE_POSTGRES=1 (CI).
 */

import assert from "node:assert/strict";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";
import { EXAMPLE_TOOL_CLIENT_ID } from "../../src/idp/index.ts";
import { generateVaultKey } from "../../src/vault/index.ts";
import { type CliProcess, startCli } from "../support/cli.ts";
import { useIdp } from "../support/idp.ts";
import { restartablePostgres } from "../support/postgres.ts";
import { tempDir } from "../support/tmp.ts";
import { roundRobinProxy } from "./fixtures/round-robin-proxy.ts";

const PG = await restartablePostgres();
const idp = await useIdp();

const THREADS = 8;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

interface LogLine {
  time: string;
  event: string;
  [field: string]: unknown;
}

/** Every JSON log line a process printed on stderr. */
function logLines(stderr: string): LogLine[] {
  const lines: LogLine[] = [];
  for (const line of stderr.split("\n")) {
    if (!line.startsWith("{")) continue;
    try {
      const parsed = JSON.parse(line) as LogLine;
      if (typeof parsed.event === "string") lines.push(parsed);
    } catch {
      // a line cut by SIGKILL
    }
  }
  return lines;
}

/** A CLI server that can be killed and started again on the same port; keeps every incarnation's output. */
class Instance {
  cli!: CliProcess;
  port = 0;
  url = "";
  token = "";
  readonly outputs: string[] = [];
  readonly #args: (port: number) => string[];
  readonly #env: Record<string, string>;

  constructor(args: (port: number) => string[], env: Record<string, string>) {
    this.#args = args;
    this.#env = env;
  }

  async start(): Promise<void> {
    this.cli = startCli(this.#args(this.port), this.#env);
    const ready = JSON.parse(
      (await this.cli.waitFor("stdout", /^\{.*"event":"ready".*\}$/m))[0],
    ) as { url: string; listen?: string; controlTokenFile?: string };
    const listen = new URL(ready.listen ?? ready.url);
    this.port = Number(listen.port);
    this.url = listen.origin;
    if (ready.controlTokenFile) this.token = readFileSync(ready.controlTokenFile, "utf8").trim();
  }

  async kill(): Promise<void> {
    this.cli.kill("SIGKILL");
    this.outputs.push((await this.cli.exited).stderr);
  }

  async stop(): Promise<void> {
    this.cli.kill("SIGTERM");
    const result = await this.cli.exited;
    this.outputs.push(result.stderr);
    assert.equal(result.code, 0, result.stderr.slice(-2000));
  }

  logs(): LogLine[] {
    return this.outputs.flatMap(logLines);
  }
}

test("[RAP-fault-injection] two tools and two runtimes behind proxies on PostgreSQL, each killed -9 and restarted, PostgreSQL restarted -m immediate: no call lost, applied twice, run twice or out of order", async (t) => {
  if (!PG) {
    t.skip("PostgreSQL binaries not found: the fault-injection run needs a server it may restart");
    return;
  }
  const database = await PG.freshDatabase();
  const shared = tempDir();
  const secret = join(shared, "rap-invocation.secret");
  const keyFile = join(shared, "rap-runtime.key");
  const vaultKey = generateVaultKey();
  const toolProxy = await roundRobinProxy({ keepHost: true });
  const runtimeProxy = await roundRobinProxy({ keepHost: true });
  t.after(() => toolProxy.close());
  t.after(() => runtimeProxy.close());
  const common = { AGENTAUTH_DATABASE_URL: database, AGENTAUTH_LOG_LEVEL: "info" };

  const tools = [0, 1].map(
    () =>
      new Instance(
        (port) => [
          "rap",
          "tool",
          "serve",
          "--example",
          "--issuer",
          idp.issuer,
          "--port",
          String(port),
          "--public-url",
          toolProxy.url,
          "--client-id",
          EXAMPLE_TOOL_CLIENT_ID,
          "--invocation-secret-file",
          secret,
        ],
        { ...common, AGENTAUTH_HOME: tempDir(), AGENTAUTH_VAULT_KEY: vaultKey },
      ),
  );
  for (const tool of tools) await tool.start();
  toolProxy.setUpstreams(tools.map((tool) => tool.port));

  const runtimes = [0, 1].map(
    () =>
      new Instance(
        (port) => [
          "rap",
          "runtime",
          "serve",
          "--toolset",
          toolProxy.url,
          "--tool-secret-file",
          secret,
          "--key-file",
          keyFile,
          "--public-url",
          runtimeProxy.url,
          "--port",
          String(port),
        ],
        { ...common, AGENTAUTH_HOME: tempDir() },
      ),
  );
  for (const runtime of runtimes) await runtime.start();
  runtimeProxy.setUpstreams(runtimes.map((runtime) => runtime.port));

  // The clients: each thread sends echo calls one after another (the next once the previous one was accepted),
  // each with its own Idempotency-Key, retried with the same key on the other runtime when one does not answer.
  const sent = new Map<string, { groupId: string; text: string }>();
  const accepted = new Map<string, string>();
  const refused: string[] = [];
  let stopping = false;
  const client = async (thread: number) => {
    const groupId = `fault-${thread}`;
    for (let k = 0; !stopping; k++) {
      const key = `${groupId}-${k}`;
      sent.set(key, { groupId, text: key });
      for (let attempt = 0; ; attempt++) {
        if (attempt === 200) {
          refused.push(`${key}: no runtime accepted it`);
          break;
        }
        const runtime = runtimes[(thread + k + attempt) % 2] as Instance;
        let response: Response;
        try {
          response = await fetch(`${runtime.url}/calls`, {
            method: "POST",
            headers: {
              authorization: `Bearer ${runtime.token}`,
              "content-type": "application/json",
              "idempotency-key": key,
            },
            body: JSON.stringify({
              operation: "echo",
              arguments: { text: key },
              group_id: groupId,
            }),
            signal: AbortSignal.timeout(30_000),
          });
        } catch {
          await sleep(100);
          continue;
        }
        const body = (await response.json().catch(() => ({}))) as { id?: string };
        if ((response.status === 202 || response.status === 200) && body.id) {
          accepted.set(key, body.id);
          break;
        }
        // 401: the runtime restarted with a new control token (read again on start); 5xx: down for a moment.
        if (response.status === 401 || response.status >= 500) {
          await sleep(100);
          continue;
        }
        refused.push(`${key}: ${response.status} ${JSON.stringify(body)}`);
        break;
      }
      await sleep(15);
    }
  };
  const clients = Array.from({ length: THREADS }, (_, i) => client(i));

  const restart = async (instance: Instance) => {
    await instance.kill();
    await sleep(1500);
    await instance.start();
  };
  await sleep(4000);
  await restart(tools[0] as Instance);
  await sleep(3000);
  await restart(runtimes[0] as Instance);
  await sleep(3000);
  await restart(tools[1] as Instance);
  await sleep(3000);
  await restart(runtimes[1] as Instance);
  await sleep(3000);
  await PG.crash();
  await sleep(1500);
  await PG.start();
  await sleep(6000);
  stopping = true;
  await Promise.all(clients);

  // Drain: every accepted call gets its result (bounded by a number of rounds, not a duration).
  type Call = {
    id: string;
    arguments: { text?: string };
    result: { text: string } | null;
    updatedAt: number;
  };
  const threads = new Map<string, Call[]>();
  const unsettled = () =>
    [...accepted].filter(([key, id]) => {
      const calls = threads.get(sent.get(key)?.groupId ?? "") ?? [];
      return !calls.find((c) => c.id === id)?.result;
    });
  for (let round = 0; round < 120; round++) {
    for (let thread = 0; thread < THREADS; thread++) {
      const runtime = runtimes[round % 2] as Instance;
      const response = await fetch(`${runtime.url}/threads/fault-${thread}`, {
        headers: { authorization: `Bearer ${runtime.token}` },
      }).catch(() => undefined);
      if (response?.ok) {
        threads.set(`fault-${thread}`, ((await response.json()) as { calls: Call[] }).calls);
      }
    }
    if (unsettled().length === 0) break;
    await sleep(500);
  }
  for (const instance of [...tools, ...runtimes]) await instance.stop();

  // The report.
  const lost = unsettled().map(([key]) => key);
  const allCalls = [...threads.values()].flat();
  const errored = [...accepted].filter(([key, id]) => {
    const call = allCalls.find((c) => c.id === id);
    return call?.result && call.result.text !== `echo: ${key}`;
  });
  const perKey = new Map<string, number>();
  for (const call of allCalls) {
    const text = String(call.arguments.text);
    perKey.set(text, (perKey.get(text) ?? 0) + 1);
  }
  const toolLogs = tools.flatMap((tool, index) =>
    tool.logs().map((line) => ({ ...line, instance: index })),
  );
  const runtimeLogs = runtimes.flatMap((runtime) => runtime.logs());
  const completions = toolLogs.filter((l) => l.event === "rap.call.completed");
  const applications = runtimeLogs.filter((l) => l.event === "rap.callback.tool_result");
  // For the order: only the tools' own results (an error result made by a takeover is not the completion logged).
  const ownResults = applications.filter((l) => l.isError !== true);
  const count = (lines: LogLine[], group: string, id: string) => {
    const seen = new Map<string, LogLine[]>();
    for (const line of lines) {
      const k = `${String(line[group])}\0${String(line[id])}`;
      seen.set(k, [...(seen.get(k) ?? []), line]);
    }
    return seen;
  };
  const completed = count(completions, "group_id", "id");
  const applied = count(applications, "groupId", "id");
  const appliedOwn = count(ownResults, "groupId", "id");
  const runTwice = [...completed].filter(([, lines]) => lines.length > 1).map(([k]) => k);
  const appliedTwice = [
    ...[...perKey].filter(([, n]) => n > 1).map(([text]) => `two calls for key ${text}`),
    ...[...applied].filter(([, lines]) => lines.length > 1).map(([k]) => `applied twice: ${k}`),
  ];
  // Out of order: two calls of a thread that one tool instance completed at distinct instants, and the runtimes
  // applied in the other order. Calls completed at two instances within a few milliseconds are counted apart: each
  // instance's result is queued when its write commits (under the thread's lock, so the queue is in commit order),
  // and a write held up longer at one instance lets the other's later result go first. Reported, not failed on.
  const outOfOrder: string[] = [];
  const acrossInstances: string[] = [];
  for (let thread = 0; thread < THREADS; thread++) {
    const group = `fault-${thread}`;
    const pairs = [...completed]
      .filter(([k, lines]) => k.startsWith(`${group}\0`) && lines.length === 1 && appliedOwn.has(k))
      .map(([k, lines]) => ({
        k,
        done: Date.parse((lines[0] as LogLine).time),
        instance: (lines[0] as LogLine).instance,
        applied: Date.parse(((appliedOwn.get(k) as LogLine[])[0] as LogLine).time),
      }))
      .sort((a, b) => a.done - b.done);
    for (let i = 0; i < pairs.length; i++) {
      for (let j = i + 1; j < pairs.length; j++) {
        const a = pairs[i] as (typeof pairs)[number];
        const b = pairs[j] as (typeof pairs)[number];
        if (a.done < b.done && b.applied < a.applied) {
          (a.instance === b.instance ? outOfOrder : acrossInstances).push(
            `${a.k.replace("\0", " ")} (done ${a.done}, applied ${a.applied}) / ${b.k.replace("\0", " ")} (done ${b.done}, applied ${b.applied})`,
          );
        }
      }
    }
  }
  // A takeover's error (the tool instance running the call was killed: whether it ran is not known) is what §6 asks
  // for; any other error result is a failure of the deployment.
  const unexpectedErrors = errored.filter(([, id]) => {
    const text = allCalls.find((c) => c.id === id)?.result?.text ?? "";
    return !/^Error: The tool instance running \w+ stopped/.test(text);
  });
  const report = {
    sent: sent.size,
    accepted: accepted.size,
    notAccepted: refused.length,
    lost: lost.length,
    endedWithError: errored.length,
    endedWithAnotherError: unexpectedErrors.length,
    appliedTwice: appliedTwice.length,
    runTwiceByTool: runTwice.length,
    outOfOrder: outOfOrder.length,
    completedAtTwoInstancesAppliedInverted: acrossInstances.length,
    completionsLogged: completions.length,
    proxy502s: { tools: toolProxy.failures, runtimes: runtimeProxy.failures },
  };
  const samples = {
    lost: lost.slice(0, 5).map((key) => `${key} = ${accepted.get(key)}`),
    errored: errored.slice(0, 5).map(([key, id]) => ({
      key,
      text: allCalls.find((c) => c.id === id)?.result?.text,
    })),
    outOfOrder: outOfOrder.slice(0, 5),
    acrossInstances: acrossInstances.slice(0, 3),
    refused: refused.slice(0, 5),
  };
  // For a look at what happened: every process's log lines, one file per instance.
  const logDir = process.env.AGENTAUTH_FAULT_LOG_DIR;
  if (logDir) {
    for (const [name, instance] of [
      ["tool-0", tools[0]],
      ["tool-1", tools[1]],
      ["runtime-0", runtimes[0]],
      ["runtime-1", runtimes[1]],
    ] as const) {
      writeFileSync(join(logDir, `${name}.log`), (instance as Instance).outputs.join("\n"));
    }
  }
  t.diagnostic(`fault-injection report: ${JSON.stringify(report)}`);
  t.diagnostic(`fault-injection samples: ${JSON.stringify(samples)}`);
  console.log(`fault-injection report: ${JSON.stringify(report)}`);
  assert.ok(accepted.size > 100, `enough calls went through: ${JSON.stringify(report)}`);
  assert.deepEqual(lost, [], `lost: ${JSON.stringify(report)}`);
  assert.deepEqual(appliedTwice, [], `applied twice: ${JSON.stringify(report)}`);
  assert.equal(unexpectedErrors.length, 0, `errors: ${JSON.stringify(samples.errored)}`);
  assert.deepEqual(runTwice, [], `run twice by the tool: ${JSON.stringify(report)}`);
  assert.deepEqual(outOfOrder, [], `out of order: ${JSON.stringify(report)}`);
});
