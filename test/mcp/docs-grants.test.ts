/**
 * docs/mcp.md's examples of the grants without a person run as written (issue 18: "documents each new grant with a
 * runnable example"): each `<!-- snippet: grant-… -->` block is taken from the page, its `agentauth/…` imports
 * pointed at this checkout's sources, and run with Node against the strict embedded servers of
 * fixtures/grant-servers.ts and a real protected MCP server, with only environment variables to say where they are.
 */

import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { after, test } from "node:test";
import { promisify } from "node:util";
import { REPO_ROOT } from "../support/cli.ts";
import { tempDir } from "../support/tmp.ts";
import {
  CC_SECRET,
  EMA_SECRET,
  enterprise,
  enterpriseIdToken,
  idp,
  workloadToken,
} from "./fixtures/grant-servers.ts";
import { startProtectedMcpServer } from "./fixtures/protected-mcp-server.ts";

const run = promisify(execFile);
const page = readFileSync(join(REPO_ROOT, "docs", "mcp.md"), "utf8");
// Inside the checkout, so the snippet's own imports (the official SDK) resolve from its node_modules.
const dir = mkdtempSync(join(REPO_ROOT, ".docs-snippets-"));
after(() => rmSync(dir, { recursive: true, force: true }));

function snippet(name: string): string {
  const match = new RegExp(`<!-- snippet: ${name} -->\\n\`\`\`ts\\n([\\s\\S]*?)\`\`\``).exec(page);
  assert.ok(match?.[1], `docs/mcp.md has the ${name} snippet`);
  return match[1].replace(
    /from "agentauth\/(\w+)"/g,
    (_all, part) => `from "${join(REPO_ROOT, "src", part, "index.ts")}"`,
  );
}

async function runSnippet(name: string, env: Record<string, string>): Promise<string> {
  const file = join(dir, `${name}.ts`);
  writeFileSync(file, snippet(name));
  const { stdout } = await run(process.execPath, [file], {
    env: { ...process.env, AGENTAUTH_HOME: tempDir(), ...env },
    timeout: 60_000,
  });
  return stdout;
}

test("[DOCS-mcp-grant-client-credentials] the client credentials example calls the server's tool", async () => {
  const mcp = await startProtectedMcpServer({ issuer: idp.issuer });
  const out = await runSnippet("grant-client-credentials", {
    MCP_SERVER_URL: mcp.url,
    MCP_CLIENT_ID: "cc-basic",
    MCP_CLIENT_SECRET: CC_SECRET,
  });
  assert.match(out, /"text":"hello"/);
  assert.ok(!out.includes(CC_SECRET));
});

test("[DOCS-mcp-grant-workload-identity] the workload identity example reads the platform's token file and calls the tool", async () => {
  const mcp = await startProtectedMcpServer({ issuer: idp.issuer });
  const tokenFile = join(tempDir(), "token");
  writeFileSync(tokenFile, `${await workloadToken()}\n`);
  const out = await runSnippet("grant-workload-identity", {
    MCP_SERVER_URL: mcp.url,
    MCP_CLIENT_ID: "workload",
    WORKLOAD_TOKEN_FILE: tokenFile,
  });
  assert.match(out, /"text":"hello"/);
});

test("[DOCS-mcp-grant-enterprise-managed] the enterprise-managed example exchanges the person's ID token and calls the tool", async () => {
  const mcp = await startProtectedMcpServer({ issuer: idp.issuer });
  const out = await runSnippet("grant-enterprise-managed", {
    MCP_SERVER_URL: mcp.url,
    IDP_ISSUER: enterprise.issuer,
    IDP_CLIENT_ID: "ema-app",
    ID_TOKEN: await enterpriseIdToken(),
    MCP_CLIENT_ID: "ema-client",
    MCP_CLIENT_SECRET: EMA_SECRET,
  });
  assert.match(out, /"text":"hello"/);
});
