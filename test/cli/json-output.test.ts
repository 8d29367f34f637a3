/**
 * Issue 20 §1.7: `--json` printed peer text raw. JSON.stringify escapes C0 controls but leaves C1 controls, bidi
 * overrides and invisible characters as they are, so an account a provider named "\u202Eevil" reordered the
 * terminal line a person read, where text mode (peerText) and the logs (escapeUnseenInJson) already escaped it. One
 * rule now: every JSON line the CLI prints goes through `jsonLine` (src/cli/io.ts), which writes those characters as
 * \u escapes; parsing gives back exactly what was stored.
 */

import assert from "node:assert/strict";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";
import { openVault } from "../../src/vault/index.ts";
import { REPO_ROOT, runCli } from "../support/cli.ts";
import { tempDir } from "../support/tmp.ts";
import { sampleInput } from "../vault/helpers.ts";

/** What must never reach a terminal raw: a bidi override, a C1 control (one-byte CSI), an invisible tag, a ZWSP. */
const HOSTILE = "Mallory \u202Enosliw\u202C \u009b31m \u{E0041}\u200B";
const UNSEEN = /[\u007f-\u009f\u200b\u202a-\u202e\u2066-\u2069\u{e0000}-\u{e007f}]/u;

test("[CLI-json-peer-text] vault list --json escapes a provider account's bidi override, C1 control and invisible characters as \\u escapes; the JSON still parses to the stored name", async () => {
  const home = tempDir();
  const vault = openVault({ env: { AGENTAUTH_HOME: home } });
  await vault.put(
    sampleInput({ account: { label: HOSTILE, name: HOSTILE, email: "m@example.com" } }),
  );
  await vault.close();
  const listed = await runCli(["vault", "list", "--json"], { AGENTAUTH_HOME: home });
  assert.equal(listed.code, 0, listed.stderr);
  assert.doesNotMatch(listed.stdout, UNSEEN, "nothing unseen reaches the terminal raw");
  assert.match(listed.stdout, /\\u202e/i, "written as an escape");
  const [row] = JSON.parse(listed.stdout) as { account: { name: string; label: string } }[];
  assert.equal(row?.account.name, HOSTILE, "lossless");
  assert.equal(row?.account.label, HOSTILE);
  // Text mode already dropped them (positive control for the same data).
  const text = await runCli(["vault", "list"], { AGENTAUTH_HOME: home });
  assert.doesNotMatch(text.stdout, UNSEEN);
});

test("[CLI-json-one-rule] every JSON line a CLI command prints goes through jsonLine: no JSON.stringify straight into io.stdout or io.stderr", () => {
  const dir = join(REPO_ROOT, "src", "cli");
  const files = [
    ...readdirSync(dir).map((f) => join(dir, f)),
    ...readdirSync(join(dir, "commands")).map((f) => join(dir, "commands", f)),
  ].filter((f) => f.endsWith(".ts"));
  const offenders: string[] = [];
  for (const file of files) {
    const source = readFileSync(file, "utf8");
    const at = (index: number) =>
      `${file.slice(REPO_ROOT.length + 1)}:${source.slice(0, index).split("\n").length}`;
    // An output call whose argument (up to its closing line) builds JSON with JSON.stringify ...
    for (const match of source.matchAll(/io\.(stdout|stderr)\(([\s\S]*?)\);\n/g)) {
      if (/JSON\.stringify\(/.test(match[2] ?? "")) offenders.push(at(match.index));
    }
    // ... or a line built elsewhere and printed later (vault list's formatter): `${JSON.stringify(…)}\n`.
    for (const match of source.matchAll(/`\$\{JSON\.stringify\(/g)) offenders.push(at(match.index));
  }
  assert.ok(files.length > 20, "the CLI's sources were found");
  assert.deepEqual(offenders, [], "print JSON with jsonLine(value) instead");
});
