/**
 * `agentauth mcp login | status | logout` where the MCP server's metadata names a resource other than its own URL
 * (a root document naming the origin), or where it takes DPoP-bound tokens only: the sign-in is kept under the
 * resource the token is for, and found again from the server's URL, by the CLI and by a program in a new process.
 */

import assert from "node:assert/strict";
import { test } from "node:test";
import { openVault } from "../../src/vault/index.ts";
import { startDpopMcpServer } from "../mcp/fixtures/dpop-mcp-server.ts";
import { connect, hello, providerFor, whoami } from "../mcp/fixtures/mcp-client.ts";
import { startRootMetadataServer } from "../mcp/fixtures/protected-mcp-server.ts";
import { runCli, startCli } from "../support/cli.ts";
import { useIdp } from "../support/idp.ts";
import { tempDir } from "../support/tmp.ts";

const idp = await useIdp({ dpopNonce: true });

async function deviceLogin(url: string, env: NodeJS.ProcessEnv) {
  const login = startCli(["mcp", "login", url, "--device", "--subject", "alice"], env);
  const [complete] = await login.waitFor(
    "stderr",
    /http:\/\/127\.0\.0\.1:\d+\/device\?user_code=[A-Z]{4}-[A-Z]{4}/,
  );
  await (await fetch(complete)).arrayBuffer();
  return login.exited;
}

test("[CLI-mcp-covering-resource] a server whose root metadata names its origin: login keeps the sign-in under the origin, status and logout find it from the server's URL, a program in a new process uses it without a bare request", {
  timeout: 60_000,
}, async (t) => {
  const mcp = await startRootMetadataServer(idp.issuer);
  const origin = new URL(mcp.url).origin;
  const home = tempDir();
  const env = { AGENTAUTH_HOME: home };
  const login = await deviceLogin(mcp.url, env);
  assert.equal(login.code, 0, login.stderr);
  assert.match(login.stdout, /the server accepted the token/);

  const status = await runCli(["mcp", "status", mcp.url, "--json"], env);
  assert.equal(status.code, 0, status.stdout + status.stderr);
  assert.equal(JSON.parse(status.stdout).signedIn, true);

  const vault = openVault({ env });
  t.after(() => vault.close());
  const [kept] = await vault.list({ subject: "alice", resource: origin });
  assert.ok(kept, "kept under the origin, the resource the token is for");
  const refusedBefore = mcp.stats.unauthorized;
  const client = await connect(
    mcp.url,
    providerFor(mcp.url, { store: vault, issuer: idp.issuer }),
    { t },
  );
  assert.deepEqual((await client.callTool(whoami)).content, hello);
  assert.equal(
    mcp.stats.unauthorized,
    refusedBefore,
    "the stored sign-in was found before the first request",
  );

  const logout = await runCli(["mcp", "logout", mcp.url, "--json"], env);
  assert.equal(logout.code, 0, logout.stdout + logout.stderr);
  assert.equal((await vault.list({ subject: "alice", resource: origin })).length, 0);
});

test("[CLI-mcp-login-dpop] login at a server that takes DPoP-bound tokens only: the token is bound, and the check that the server accepts it sends it with a proof", {
  timeout: 60_000,
}, async () => {
  const mcp = await startDpopMcpServer({
    issuer: idp.issuer,
    dpop: { required: true, nonce: true },
  });
  const env = { AGENTAUTH_HOME: tempDir() };
  const login = await deviceLogin(mcp.url, env);
  assert.equal(login.code, 0, login.stderr);
  assert.match(login.stdout, /the server accepted the token/);
  const checks = mcp.seen.filter((r) => r.authorization);
  assert.ok(
    checks.length > 0 && checks.every((r) => r.authorization?.startsWith("DPoP ") && r.dpop),
  );
});
