import assert from "node:assert/strict";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";
import { REPO_ROOT } from "../support/cli.ts";

const COMMANDS = join(REPO_ROOT, "src", "cli", "commands");

/** Every long flag a command parses (node:util parseArgs options), by file. */
function flagsInSources(): Map<string, string[]> {
  const byFile = new Map<string, string[]>();
  for (const file of readdirSync(COMMANDS).filter((f) => f.endsWith(".ts"))) {
    const source = readFileSync(join(COMMANDS, file), "utf8");
    const flags = [
      ...source.matchAll(/^\s+"?([a-z][a-z-]*)"?: \{ type: "(?:string|boolean)"/gm),
    ].map((m) => `--${m[1]}`);
    if (flags.length > 0) byFile.set(file, flags);
  }
  return byFile;
}

function readmeCliBlock(): string {
  const readme = readFileSync(join(REPO_ROOT, "README.md"), "utf8");
  const block = /## CLI\s+```text\n([\s\S]*?)```/.exec(readme)?.[1];
  assert.ok(block, "README.md has a CLI block");
  return block;
}

test("[DOCS-readme-cli-flags] every flag a command parses is listed in the README's CLI block", () => {
  const block = readmeCliBlock();
  const missing: string[] = [];
  for (const [file, flags] of flagsInSources()) {
    for (const flag of flags) {
      if (!new RegExp(`${flag}(?![a-z-])`).test(block)) missing.push(`${flag} (${file})`);
    }
  }
  assert.deepEqual(missing, [], "add these flags to the README's CLI block");
});

test("[DOCS-readme-cli-flags] every command of the README's CLI block exists in the CLI's help", async () => {
  const { USAGE } = await import("../../src/cli/main.ts");
  for (const [, words] of readmeCliBlock().matchAll(/^agentauth ((?:[a-z][a-z-]* ?){1,3})/gm)) {
    const command = (words ?? "").trim().split(" ").slice(0, 2).join(" ");
    assert.ok(USAGE.includes(`agentauth ${command}`), `agentauth ${command} is in --help`);
  }
});
