/**
 * Issue 20 §3: startup loads only what the command needs. `--version`, `--help` and a command's `--help` read help
 * texts only (src/cli/commands/*-help.ts); a command loads its own code and not the others'. Checked by the modules
 * each run loads (a module loader hook), not by time: the timings are in bench/startup.bench.ts.
 */

import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { join } from "node:path";
import { test } from "node:test";
import { DEFAULT_LOGIN_SCOPE } from "../../src/oauth/index.ts";
import { REPO_ROOT, runCli } from "../support/cli.ts";
import { tempDir } from "../support/tmp.ts";

const MAIN = join(REPO_ROOT, "src", "cli", "main.ts");
const RECORD = `data:text/javascript,${encodeURIComponent(
  'import{registerHooks}from"node:module";const s=[];registerHooks({load(u,c,x){s.push(u);return x(u,c)}});' +
    'process.on("exit",()=>process.stderr.write("\\nLOADED "+JSON.stringify(s)+"\\n"));',
)}`;

/** The files one run of the CLI loads, relative to the repository (packages as node_modules/<name>). */
function loaded(args: string[]): string[] {
  const result = spawnSync(process.execPath, ["--import", RECORD, MAIN, ...args], {
    env: { ...process.env, AGENTAUTH_HOME: tempDir(), NODE_TEST_CONTEXT: "" },
    encoding: "utf8",
  });
  const line = result.stderr.split("\n").find((l) => l.startsWith("LOADED "));
  assert.ok(line, result.stderr);
  return (JSON.parse(line.slice(7)) as string[])
    .filter((url) => url.startsWith("file:"))
    .map((url) => url.replace(/^.*?\/(node_modules\/(?:@[^/]+\/)?[^/]+)\/.*$/, "$1"))
    .map((url) => url.replace(`file://${REPO_ROOT}/`, ""));
}

/** A command's implementation module (`src/cli/commands/vault.ts`), as opposed to its help texts (`vault-help.ts`). */
const IMPLEMENTATION = /^src\/cli\/commands\/(?!.*-help\.ts$)/;

test("[CLI-startup-lazy] --version, --help and a command's --help load help texts only: no command code, no package", () => {
  for (const args of [
    ["--version"],
    ["--help"],
    ["acp", "status", "--help"],
    ["vault", "list", "--help"],
  ]) {
    const files = loaded(args);
    assert.deepEqual(
      files.filter((f) => f.startsWith("node_modules/") || IMPLEMENTATION.test(f)),
      [],
      args.join(" "),
    );
  }
});

test("[CLI-startup-lazy] a command loads its own code and not the other commands'", () => {
  const files = loaded(["providers", "--json"]);
  // Exactly its own module: another command's (provider-flags.ts, vault.ts…) loading too fails the test.
  assert.deepEqual(
    files.filter((f) => IMPLEMENTATION.test(f)),
    ["src/cli/commands/providers.ts"],
  );
  for (const heavy of [
    "node_modules/oidc-provider",
    "node_modules/pg",
    "node_modules/@agentclientprotocol",
  ]) {
    assert.ok(!files.includes(heavy), `providers --json loads ${heavy}`);
  }
});

test("[CLI-startup-lazy] the help texts written out where the command's module would load too much say the same", async () => {
  const result = await runCli(["login", "--help"]);
  assert.ok(
    result.stdout.includes(`"${DEFAULT_LOGIN_SCOPE}"`),
    "login --help names the default scope",
  );
});
