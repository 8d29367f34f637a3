/**
 * docs/mcp-proxy.md's copy-paste configurations (issue 19): each client's block is valid in its format and starts
 * the same command, and that command starts with those arguments (the header example with its environment). Not a
 * test of the clients themselves, which cannot run here.
 */

import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";
import { REPO_ROOT, runCli } from "../support/cli.ts";
import { tempDir } from "../support/tmp.ts";

const page = readFileSync(join(REPO_ROOT, "docs", "mcp-proxy.md"), "utf8");
const EXPECTED = ["-y", "agentauth", "mcp", "proxy", "https://mcp.example.com/mcp"];

function blocks(language: string): string[] {
  return [...page.matchAll(new RegExp(`\`\`\`${language}\\n([\\s\\S]*?)\`\`\``, "g"))].map(
    (m) => m[1] ?? "",
  );
}

/** The command and arguments a client's configuration block starts, per client format. */
function commandOf(config: Record<string, unknown>): string[] {
  const entry = Object.values(
    (config.mcpServers ?? config.servers ?? config.context_servers ?? config.mcp) as Record<
      string,
      { command: string | string[]; args?: string[] }
    >,
  )[0];
  assert.ok(entry, "one server entry");
  return Array.isArray(entry.command) ? entry.command : [entry.command, ...(entry.args ?? [])];
}

test("[DOCS-mcp-proxy-configs] every client configuration on docs/mcp-proxy.md parses and starts npx -y agentauth mcp proxy <url>", () => {
  const json = blocks("json").filter((b) => b.trim().startsWith("{"));
  // Claude Desktop, Cursor, VS Code, Zed, opencode.
  assert.equal(json.length, 5);
  for (const block of json) assert.deepEqual(commandOf(JSON.parse(block)), ["npx", ...EXPECTED]);
  const [toml] = blocks("toml");
  assert.match(toml ?? "", /^\[mcp_servers\.example\]\ncommand = "npx"\n/);
  const args = /^args = (\[.*\])$/m.exec(toml ?? "")?.[1];
  assert.deepEqual(JSON.parse(args ?? "null"), EXPECTED);
  const claude = blocks("sh").find((b) => b.startsWith("claude mcp add"));
  assert.equal(claude?.trim(), `claude mcp add example -- npx ${EXPECTED.join(" ")}`);
});

test("[DOCS-mcp-proxy-configs] the documented arguments, the header example included, start the proxy (it ends when the client closes stdin)", async () => {
  const header = /"args": (\[.*"--header".*\]),/.exec(page)?.[1];
  const env = /"env": (\{.*\})/.exec(page)?.[1];
  assert.ok(header && env, "the header example and its environment");
  for (const [args, vars] of [
    [EXPECTED, {}],
    [JSON.parse(header) as string[], JSON.parse(env) as Record<string, string>],
  ] as const) {
    // stdin is /dev/null: the client is gone at once, so the proxy stops before it sends anything.
    const result = await runCli(args.slice(2), { AGENTAUTH_HOME: tempDir(), ...vars });
    assert.equal(result.code, 0, result.stderr);
    assert.match(result.stderr, /"mcp\.proxy\.ready"/);
  }
  // The same without the variable: refused, naming it (the check has teeth).
  const unset = await runCli((JSON.parse(header) as string[]).slice(2), {
    AGENTAUTH_HOME: tempDir(),
  });
  assert.equal(unset.code, 2);
  assert.match(unset.stderr, /TEAM_ID/);
});
