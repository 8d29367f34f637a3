import assert from "node:assert/strict";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";
import { runCli } from "../support/cli.ts";
import { tempDir } from "../support/tmp.ts";

const env = { AGENTAUTH_HOME: tempDir() };

test("[CLI-mcp-help] the top-level usage lists mcp; mcp and each subcommand have --help with their flags", async () => {
  const top = await runCli(["--help"], env);
  assert.equal(top.code, 0);
  for (const line of [
    "agentauth mcp login <server-url>",
    "agentauth mcp status <server-url>",
    "agentauth mcp logout <server-url>",
    "agentauth mcp example-server --issuer URL",
  ]) {
    assert.ok(top.stdout.includes(line), `usage lacks ${line}`);
  }
  const area = await runCli(["mcp", "--help"], env);
  assert.equal(area.code, 0);
  assert.match(area.stdout, /^agentauth mcp login <server-url>/);
  const flags: Record<string, string[]> = {
    login: ["--subject", "--scope", "--client-id", "--json", "Example:"],
    status: ["--subject", "--json", "Exit status:", "contacts neither"],
    logout: ["--subject", "--json", "RFC 7009", "Idempotent", "only forgotten here"],
    "example-server": ["--issuer", "--port", "--scope", "--step-up-scope", '"event":"ready"'],
  };
  for (const [sub, wanted] of Object.entries(flags)) {
    for (const args of [
      ["mcp", sub, "--help"],
      ["help", "mcp", sub],
    ]) {
      const result = await runCli(args, env);
      assert.equal(result.code, 0, args.join(" "));
      assert.ok(result.stdout.startsWith(`agentauth mcp ${sub}`), result.stdout);
      for (const flag of wanted)
        assert.ok(result.stdout.includes(flag), `${sub} --help lacks ${flag}`);
    }
  }
});

test("[CLI-mcp-optional-sdk] without the MCP SDKs installed, the CLI and mcp status still run, and example-server says what to install", async () => {
  // A resolve hook that answers for @modelcontextprotocol/* exactly as Node does when the package is not installed.
  const hook = join(tempDir(), "no-mcp-sdk.mjs");
  writeFileSync(
    hook,
    `import { registerHooks } from "node:module";
registerHooks({
  resolve(specifier, context, next) {
    if (specifier.startsWith("@modelcontextprotocol/")) {
      const error = new Error("Cannot find package '" + specifier + "' imported from " + context.parentURL);
      error.code = "ERR_MODULE_NOT_FOUND";
      throw error;
    }
    return next(specifier, context);
  },
});
`,
  );
  const without = { ...env, NODE_OPTIONS: `--import=${hook}` };
  // The hook is in force: the one command that needs the server SDK at run time says what to install.
  const probe = await runCli(["mcp", "example-server", "--issuer", "http://127.0.0.1:1"], without);
  assert.equal(probe.code, 1, probe.stderr);
  assert.match(
    probe.stderr,
    /The example MCP server needs the official MCP SDK @modelcontextprotocol\/server, which is not installed; run 'npm install @modelcontextprotocol\/server'.* \[mcp_sdk_missing\]\n$/,
  );
  const help = await runCli(["--help"], without);
  assert.equal(help.code, 0, help.stderr);
  const status = await runCli(["mcp", "status", "https://mcp.example.test/mcp", "--json"], without);
  assert.equal(status.code, 3, status.stderr);
  assert.equal(JSON.parse(status.stdout).signedIn, false);
  const login = await runCli(["mcp", "login", "ftp://x", "--json"], without);
  assert.equal(JSON.parse(login.stdout).error.code, "invalid_server_url");
});
