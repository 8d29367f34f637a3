#!/usr/bin/env node
// The installed `agentauth` binary. Plain JavaScript that any Node parses, so an old Node gets one clear line
// instead of ERR_UNKNOWN_BUILTIN_MODULE (node:sqlite) from deep inside the CLI. Keep REQUIRED in step with
// package.json `engines` and src/core/node-version.ts.
const REQUIRED = [22, 18, 0];
const have = process.versions.node.split(".").map((part) => Number.parseInt(part, 10) || 0);
const newer = (a, b) => a.findIndex((n, i) => n !== b[i]);
const at = newer(have, REQUIRED);
if (at !== -1 && have[at] < REQUIRED[at]) {
  process.stderr.write(
    `agentauth: needs Node.js ${REQUIRED.join(".")} or newer, and this is Node.js ${process.versions.node}; ` +
      "install a current Node.js (https://nodejs.org) and run it again.\n",
  );
  process.exit(1);
}

// The compiled CLI (dist/, built on install by `prepare`); a checkout without dist/ (linked with `npm i <path>`,
// or `npm link`) runs the TypeScript sources directly, which Node >= 22.18 strips outside node_modules.
const { existsSync } = await import("node:fs");
const compiled = new URL("../dist/cli/main.js", import.meta.url);
const entry = existsSync(compiled) ? compiled : new URL("../src/cli/main.ts", import.meta.url);
const { cli } = await import(entry.href);
process.exitCode = await cli(process.argv.slice(2));
