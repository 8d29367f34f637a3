/**
 * CLI startup: wall time of `agentauth --version`, `--help` and a command's `--help`, against Node starting an empty
 * script (the floor) and against importing every command module (what main.ts did at startup before issue 20 §3,
 * when `--version` loaded about 900 modules). Each case runs ROUNDS times, the cases interleaved so a busy machine
 * slows them alike; medians are reported, with the modules each case loads.
 *
 * The sources run with type stripping, which costs most of what remains; after `npm run build` the compiled entry
 * (what an installed package runs) is measured too.
 *
 * Run: node_modules/.bin/node bench/startup.bench.ts
 */

import { spawnSync } from "node:child_process";
import { existsSync, readdirSync } from "node:fs";
import { join } from "node:path";

const ROUNDS = 9;
const ROOT = join(import.meta.dirname, "..");
const MAIN = join(ROOT, "src", "cli", "main.ts");
/** The compiled CLI an installed package runs (no type stripping), when `npm run build` has made it. */
const DIST_MAIN = join(ROOT, "dist", "cli", "main.js");
const COMMANDS = join(ROOT, "src", "cli", "commands");

/** Every command module main.ts used to import eagerly (one per area). */
const eager = readdirSync(COMMANDS)
  .filter((f) => /^(acp|ahp|console|demo|idp|login|mcp|providers|rap|token|vault)\.ts$/.test(f))
  .map((f) => `import(${JSON.stringify(join(COMMANDS, f))})`);

const COUNT_MODULES = `data:text/javascript,${encodeURIComponent(
  'import{registerHooks}from"node:module";let n=0;registerHooks({load(u,c,x){n++;return x(u,c)}});' +
    'process.on("exit",()=>process.stderr.write("modules "+n+"\\n"));',
)}`;

const cases: Record<string, string[]> = {
  "node -e 0 (floor)": ["-e", "0"],
  "agentauth --version": [MAIN, "--version"],
  "agentauth --help": [MAIN, "--help"],
  "agentauth acp status --help": [MAIN, "acp", "status", "--help"],
  ...(existsSync(DIST_MAIN) ? { "dist: agentauth --version": [DIST_MAIN, "--version"] } : {}),
  "every command module (old startup)": [
    "--input-type=module",
    "-e",
    `await Promise.all([${eager.join(",")}]);`,
  ],
};

function runOnce(args: string[]): number {
  const started = performance.now();
  const result = spawnSync(process.execPath, ["--no-warnings", ...args], { encoding: "utf8" });
  if (result.status !== 0) throw new Error(`${args.join(" ")} failed: ${result.stderr}`);
  return performance.now() - started;
}

function modules(args: string[]): number {
  const result = spawnSync(
    process.execPath,
    ["--no-warnings", "--import", COUNT_MODULES, ...args],
    {
      encoding: "utf8",
    },
  );
  return Number(/modules (\d+)/.exec(result.stderr)?.[1] ?? Number.NaN);
}

const times: Record<string, number[]> = Object.fromEntries(Object.keys(cases).map((k) => [k, []]));
for (let round = 0; round < ROUNDS; round++) {
  const order = Object.keys(cases);
  if (round % 2 === 1) order.reverse();
  for (const name of order) times[name]?.push(runOnce(cases[name] ?? []));
}
const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? Number.NaN;
};
const rows = Object.entries(cases).map(([name, args]) => ({
  case: name,
  "median ms": Math.round(median(times[name] ?? [])),
  modules: modules(args),
}));
console.table(rows);
