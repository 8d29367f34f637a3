/** The MCP servers as auth/status accounts (pure): which source wins, and the shape a client reads. */

import assert from "node:assert/strict";
import { test } from "node:test";
import { mcpServerAccount, toStatusAccount } from "../../src/acp/agent/mcp/accounts.ts";
import { readSessionServers } from "../../src/acp/agent/mcp/index.ts";
import type { CredentialSummary } from "../../src/vault/types.ts";
import { credentialSummary } from "./fixtures/credential-summary.ts";

const [server] = readSessionServers([
  { type: "http", name: "github", url: "https://mcp.example/mcp?key=k", headers: [] },
]);
if (!server) throw new Error("fixture");

function record(status: "active" | "login_required", scopes: string[]): CredentialSummary {
  return credentialSummary({ id: "r1", resource: server?.url ?? "", scopes, status });
}

const needs = { state: "needs_sign_in" as const, scopes: ["repo"] };

test("[ACP-mcp-accounts-vault-wins] a stored credential is signed in with its granted scopes, whatever the probe or last sign-in said", () => {
  const account = mcpServerAccount(
    { server, probe: needs, lastError: { code: "sign_in_declined", message: "no" } },
    record("active", ["repo", "offline_access"]),
  );
  assert.deepEqual(account, {
    name: "github",
    url: "https://mcp.example/mcp?…",
    transport: "http",
    state: "signed_in",
    scopes: ["repo", "offline_access"],
  });
  assert.deepEqual(toStatusAccount(account), {
    label: "MCP server “github”: signed in",
    _meta: { agentauth: { mcpServer: account } },
  });
});

test("[ACP-mcp-accounts-precedence] a refused refresh token needs a sign-in; a decline needs one (with why); another failure is an error; else the probe", () => {
  assert.equal(
    mcpServerAccount({ server, probe: needs }, record("login_required", ["repo"])).error?.code,
    "login_required",
  );
  const declined = mcpServerAccount(
    { server, probe: needs, lastError: { code: "sign_in_declined", message: "m" } },
    undefined,
  );
  assert.deepEqual(
    [declined.state, declined.scopes, declined.error?.code],
    ["needs_sign_in", ["repo"], "sign_in_declined"],
  );
  const failed = mcpServerAccount(
    { server, probe: needs, lastError: { code: "resource_mismatch", message: "m" } },
    undefined,
  );
  assert.equal(failed.state, "error");
  assert.equal(
    mcpServerAccount({ server, probe: { state: "checking" } }, undefined).state,
    "checking",
  );
  assert.equal(
    toStatusAccount(mcpServerAccount({ server, probe: { state: "unknown" } }, undefined)).label,
    "MCP server “github”: not checked",
  );
});

test("[ACP-mcp-accounts-invalid] an invalid entry is an error account with its typed code", () => {
  const [bad] = readSessionServers([{ type: "sse", name: "x", url: "ftp://x/", headers: [] }]);
  assert.ok(bad);
  const account = mcpServerAccount({ server: bad, probe: { state: "unknown" } }, undefined);
  assert.deepEqual([account.state, account.error?.code], ["error", "invalid_server_url"]);
});
