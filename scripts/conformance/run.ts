/**
 * `npm run conformance`: the official MCP conformance suite (`@modelcontextprotocol/conformance`, pinned versions
 * installed as aliased devDependencies) against agentauth, as CI runs it (.ci/run).
 *
 * 1. Client mode, every `auth/*` scenario each version lists, one at a time per worker (two workers), against
 *    scripts/conformance/client.ts (agentAuthProvider as docs/mcp.md documents it). A scenario passes when the suite
 *    says "OVERALL: PASSED" with no failed and no warning check.
 * 2. Authorization-server mode (versions that have it) against `agentauth idp serve`, with its demo user approving:
 *    the suite prints an authorization URL and waits for the browser to come back; this script plays the browser.
 *
 * Prints one line per scenario and a summary per suite, writes test-results/conformance/results.json, and exits 1 on
 * any failure. `npm run conformance -- --suite 0.2` runs one suite; `-- --scenario auth/dpop` one scenario.
 * No scenario is excepted (docs/mcp.md says where an exception would have to be argued).
 */

import { type ChildProcess, spawn } from "node:child_process";
import { existsSync, mkdirSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";

const ROOT = join(dirname(fileURLToPath(import.meta.url)), "..", "..");
const CLIENT = join(ROOT, "scripts", "conformance", "client.ts");
const CLI = join(ROOT, "src", "cli", "main.ts");
const WORKERS = 2;
const SCENARIO_TIMEOUT_MS = 30_000;

/** The pinned suites (package.json devDependencies `mcp-conformance-*`). */
const SUITES = [
  { name: "0.1.16", dir: "mcp-conformance-0.1", authorization: false },
  { name: "0.2.0-alpha.12", dir: "mcp-conformance-0.2", authorization: true },
] as const;

interface Outcome {
  suite: string;
  mode: "client" | "authorization";
  scenario: string;
  passed: boolean;
  checks: string;
  detail?: string;
}

function run(
  args: string[],
  options: { env?: NodeJS.ProcessEnv; onStdout?: (text: string) => void; timeoutMs?: number } = {},
): Promise<{ code: number | null; output: string; child: ChildProcess }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, args, {
      cwd: ROOT,
      env: { ...process.env, ...options.env },
    });
    let output = "";
    child.stdout.on("data", (chunk: Buffer) => {
      output += chunk.toString();
      options.onStdout?.(output);
    });
    child.stderr.on("data", (chunk: Buffer) => {
      output += chunk.toString();
    });
    const timer = setTimeout(() => child.kill("SIGKILL"), options.timeoutMs ?? 120_000);
    child.on("close", (code) => {
      clearTimeout(timer);
      resolve({ code, output, child });
    });
  });
}

/** "Passed: 14/14, 0 failed, 0 warnings" and "OVERALL: PASSED", read from the suite's report. */
function verdict(output: string): { passed: boolean; checks: string } {
  // biome-ignore lint/suspicious/noControlCharactersInRegex: the suite colours its output; the codes are stripped.
  const plain = output.replace(/\u001b\[[0-9;]*m/g, "");
  const line = /Passed: (\d+)\/(\d+), (\d+) failed, (\d+) warnings/.exec(plain);
  const clean = line !== null && line[3] === "0" && line[4] === "0";
  return {
    passed: clean && plain.includes("OVERALL: PASSED"),
    checks: line ? `${line[1]}/${line[2]} checks, ${line[4]} warnings` : "no report",
  };
}

async function clientScenarios(entry: string): Promise<string[]> {
  const { output } = await run([entry, "list"]);
  return [...new Set(output.match(/auth\/[a-z0-9-]+/g) ?? [])].sort();
}

async function runClientScenario(suite: string, entry: string, scenario: string): Promise<Outcome> {
  const command = `"${process.execPath}" "${CLIENT}"`;
  const { output } = await run(
    [
      entry,
      "client",
      "--command",
      command,
      "--scenario",
      scenario,
      "--timeout",
      String(SCENARIO_TIMEOUT_MS),
    ],
    { timeoutMs: SCENARIO_TIMEOUT_MS + 60_000 },
  );
  const { passed, checks } = verdict(output);
  return {
    suite,
    mode: "client",
    scenario,
    passed,
    checks,
    detail: passed ? undefined : tail(output),
  };
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.on("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

/** `agentauth idp serve` with the demo user approving, checked by the suite's authorization-server mode. */
async function runAuthorizationMode(suite: string, entry: string): Promise<Outcome[]> {
  const idp = spawn(
    process.execPath,
    [CLI, "idp", "serve", "--auto-approve-as", "alice", "--client-metadata-documents"],
    { cwd: ROOT, stdio: ["ignore", "pipe", "ignore"] },
  );
  try {
    const issuer = await new Promise<string>((resolve, reject) => {
      let text = "";
      idp.stdout.on("data", (chunk: Buffer) => {
        text += chunk.toString();
        const ready = /"issuer":"([^"]+)"/.exec(text);
        if (ready?.[1]) resolve(ready[1]);
      });
      idp.on("exit", () => reject(new Error("agentauth idp serve ended before it was ready")));
    });
    const port = await freePort();
    let approved = false;
    const { output } = await run(
      [
        entry,
        "authorization",
        "--url",
        issuer,
        "--client-id",
        "agentauth-cli",
        "--port",
        String(port),
      ],
      {
        onStdout: (text) => {
          const url = new RegExp(
            `${issuer.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}/auth\\?\\S+`,
          ).exec(text);
          if (url && !approved) {
            approved = true;
            // The browser: the server signs in and consents as alice, then redirects to the suite's callback.
            void fetch(url[0]).then(
              (r) => r.arrayBuffer(),
              () => undefined,
            );
          }
        },
      },
    );
    // biome-ignore lint/suspicious/noControlCharactersInRegex: the suite colours its output; the codes are stripped.
    const plain = output.replace(/\u001b\[[0-9;]*m/g, "");
    return [...plain.matchAll(/([✓✗]) ([a-z-]+): (\d+) passed, (\d+) failed/g)].map((m) => ({
      suite,
      mode: "authorization" as const,
      scenario: m[2] as string,
      passed: m[1] === "✓" && m[4] === "0",
      checks: `${m[3]} passed, ${m[4]} failed`,
      detail: m[1] === "✓" ? undefined : tail(output),
    }));
  } finally {
    idp.kill("SIGTERM");
  }
}

function tail(output: string): string {
  return output.split("\n").slice(-25).join("\n");
}

async function pool<T, R>(items: T[], worker: (item: T) => Promise<R>): Promise<R[]> {
  const results: R[] = [];
  let next = 0;
  await Promise.all(
    Array.from({ length: WORKERS }, async () => {
      while (next < items.length) {
        const index = next++;
        results[index] = await worker(items[index] as T);
      }
    }),
  );
  return results;
}

async function main(): Promise<number> {
  const { values } = parseArgs({
    options: { suite: { type: "string" }, scenario: { type: "string" } },
  });
  const outcomes: Outcome[] = [];
  for (const suite of SUITES) {
    if (values.suite && !suite.name.startsWith(values.suite)) continue;
    const entry = join(ROOT, "node_modules", suite.dir, "dist", "index.js");
    if (!existsSync(entry)) {
      console.error(`conformance: ${suite.dir} is not installed; run npm install first.`);
      return 1;
    }
    const scenarios = (await clientScenarios(entry)).filter(
      (s) => !values.scenario || s === values.scenario,
    );
    console.log(
      `== @modelcontextprotocol/conformance ${suite.name}: ${scenarios.length} auth client scenarios`,
    );
    const results = await pool(scenarios, async (scenario) => {
      const outcome = await runClientScenario(suite.name, entry, scenario);
      console.log(`${outcome.passed ? "pass" : "FAIL"}  ${scenario}  (${outcome.checks})`);
      if (outcome.detail) console.log(outcome.detail);
      return outcome;
    });
    outcomes.push(...results);
    if (suite.authorization && !values.scenario) {
      const checks = await runAuthorizationMode(suite.name, entry);
      for (const outcome of checks) {
        console.log(
          `${outcome.passed ? "pass" : "FAIL"}  authorization/${outcome.scenario}  (${outcome.checks})`,
        );
        if (outcome.detail) console.log(outcome.detail);
      }
      if (checks.length === 0) {
        outcomes.push({
          suite: suite.name,
          mode: "authorization",
          scenario: "(none reported)",
          passed: false,
          checks: "no report",
        });
      }
      outcomes.push(...checks);
    }
    const mine = outcomes.filter((o) => o.suite === suite.name);
    const byMode = (mode: Outcome["mode"]) => mine.filter((o) => o.mode === mode);
    console.log(
      `== ${suite.name}: client ${byMode("client").filter((o) => o.passed).length}/${byMode("client").length}` +
        (suite.authorization && !values.scenario
          ? `, authorization server ${byMode("authorization").filter((o) => o.passed).length}/${byMode("authorization").length}`
          : ""),
    );
  }
  const dir = join(ROOT, "test-results", "conformance");
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, "results.json"), `${JSON.stringify(outcomes, null, 2)}\n`);
  const failed = outcomes.filter((o) => !o.passed);
  console.log(
    failed.length === 0 ? "conformance: all passed" : `conformance: ${failed.length} failed`,
  );
  return failed.length === 0 && outcomes.length > 0 ? 0 : 1;
}

process.exitCode = await main();
