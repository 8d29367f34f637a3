/**
 * Issue 21, trap 5: the shell examples in README.md and docs/ run as written after `npm install agentauth`, where
 * the binary is not on PATH: every command line calls it as `npx agentauth` (or, in this repository, `npm run
 * agentauth --`), never a bare `agentauth`.
 */

import assert from "node:assert/strict";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";
import { REPO_ROOT } from "../support/cli.ts";

const PAGES = [
  "README.md",
  ...readdirSync(join(REPO_ROOT, "docs"))
    .filter((name) => name.endsWith(".md"))
    .map((name) => join("docs", name)),
];

test("[DOCS-npx-agentauth] every shell example calls the CLI as npx agentauth or npm run agentauth --, never a bare agentauth", () => {
  const bare: string[] = [];
  for (const page of PAGES) {
    const text = readFileSync(join(REPO_ROOT, page), "utf8");
    for (const block of text.matchAll(/```(?:sh|bash|shell|console)\n([\s\S]*?)```/g)) {
      for (const line of (block[1] ?? "").split("\n")) {
        // npx with its own flags too: docs/mcp-proxy.md's `npx -y agentauth mcp proxy` for an MCP client's config.
        if (/(?:npx(?:\s+-[\w-]+)*|npm run) agentauth/.test(line)) continue;
        if (/(?:^|[\s;&|(]|\$\()agentauth\s/.test(line)) bare.push(`${page}: ${line.trim()}`);
      }
    }
  }
  assert.deepEqual(
    bare,
    [],
    "commands a newcomer would copy into a shell where agentauth is not on PATH",
  );
});
