#!/usr/bin/env node
// The installed `agentauth` binary: Node >= 22.18 runs the TypeScript sources directly (type stripping).
import "../src/cli/main.ts";
