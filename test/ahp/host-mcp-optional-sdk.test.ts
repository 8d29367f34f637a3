/**
 * `@modelcontextprotocol/client` is an optional peer dependency: `agentauth/ahp` (host and client) must load without
 * it, and the MCP bridge must fail only when used, with a typed error that says what to install. A real child process
 * whose module resolution refuses every `@modelcontextprotocol/*` package plays the install without the peer.
 */

import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { it } from "node:test";
import { fileURLToPath, pathToFileURL } from "node:url";
import { promisify } from "node:util";

const run = promisify(execFile);
const root = fileURLToPath(new URL("../../", import.meta.url));

const script = `
import { registerHooks } from "node:module";
registerHooks({
  resolve(specifier, context, next) {
    if (specifier.startsWith("@modelcontextprotocol/")) {
      const error = new Error("Cannot find package '" + specifier + "'");
      error.code = "ERR_MODULE_NOT_FOUND";
      throw error;
    }
    return next(specifier, context);
  },
});
const ahp = await import(${JSON.stringify(pathToFileURL(`${root}src/ahp/index.ts`).href)});
const { loadMcpClientSdk } = await import(${JSON.stringify(pathToFileURL(`${root}src/ahp/host/mcp/sdk.ts`).href)});
const host = ahp.createAhpHost().sessions();
let outcome;
try {
  await loadMcpClientSdk();
  outcome = { loaded: true };
} catch (error) {
  outcome = { name: error.name, code: error.code, message: error.message };
}
console.log(JSON.stringify({ host: typeof host.mcpServers, outcome }));
`;

it("[AHP-MCP-optional-sdk] agentauth/ahp loads without @modelcontextprotocol/client; the bridge says `npm install @modelcontextprotocol/client` when it needs it", async () => {
  const { stdout } = await run(process.execPath, ["--input-type=module", "-e", script], {
    cwd: root,
    timeout: 30_000,
  });
  assert.deepEqual(JSON.parse(stdout.trim()), {
    host: "function",
    outcome: {
      name: "McpBridgeError",
      code: "mcp_sdk_missing",
      message:
        "The AHP host's MCP bridge needs the official MCP client SDK; run `npm install @modelcontextprotocol/client`.",
    },
  });
});
