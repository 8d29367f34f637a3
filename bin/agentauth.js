#!/usr/bin/env node
// The installed `agentauth` binary runs the compiled CLI (dist/, built by `npm run build` and on install).
const { main } = await import("../dist/cli/main.js");
process.exitCode = await main(process.argv.slice(2));
