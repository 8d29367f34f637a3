/**
 * `agentauth mcp login|status|logout` on PostgreSQL: with --database-url (or AGENTAUTH_DATABASE_URL) the MCP
 * credential lives in the database, where every instance sharing it finds it; nothing lands in the SQLite vault.
 */

import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { after, test } from "node:test";
import { startExampleMcpServer } from "../../src/mcp/server/example-server.ts";
import { openVault } from "../../src/vault/index.ts";
import { tokenRequest } from "../support/authorize.ts";
import { runCli, startCli } from "../support/cli.ts";
import { useIdp } from "../support/idp.ts";
import { skipWithoutPostgres, testPostgres } from "../support/postgres.ts";
import { tempDir } from "../support/tmp.ts";

const PG = await testPostgres();
const idp = await useIdp();
const server = await startExampleMcpServer({ issuer: idp.issuer });
after(() => server.close());

test("[PG-mcp-cli] mcp login --database-url stores in PostgreSQL; status (through the env) and logout (revoking) read it there", {
  timeout: 60_000,
}, async (t) => {
  if (skipWithoutPostgres(t, PG)) return;
  const url = await PG.freshDatabase();
  const home = tempDir();
  const login = startCli(
    ["--database-url", url, "mcp", "login", server.url, "--subject", "pg-user"],
    {
      AGENTAUTH_HOME: home,
    },
  );
  const [, href] = await login.waitFor(
    "stderr",
    /in your browser to sign in to \S+:\n\n {2}(\S+)\n/,
  );
  await (await fetch(href ?? "")).arrayBuffer();
  const result = await login.exited;
  assert.equal(result.code, 0, result.stderr);
  assert.equal(existsSync(join(home, "vault.db")), false, "nothing went to SQLite");

  const vault = openVault({ databaseUrl: url, env: { AGENTAUTH_HOME: home } });
  t.after(() => vault.close());
  const [row] = await vault.list({ resource: server.url });
  assert.equal(row?.subject, "pg-user");
  const record = await vault.getById(row?.id ?? "");
  const refreshToken = record?.tokens.refreshToken?.reveal();
  assert.ok(refreshToken);

  const status = await runCli(["mcp", "status", server.url, "--json"], {
    AGENTAUTH_HOME: home,
    AGENTAUTH_DATABASE_URL: url,
  });
  assert.equal(status.code, 0, status.stderr);
  assert.equal(JSON.parse(status.stdout).credentials[0].subject, "pg-user");
  const sqliteOnly = await runCli(["mcp", "status", server.url], { AGENTAUTH_HOME: home });
  assert.equal(sqliteOnly.code, 3, "the SQLite vault holds nothing");

  const out = await runCli(["mcp", "logout", server.url, `--database-url=${url}`], {
    AGENTAUTH_HOME: home,
  });
  assert.equal(out.code, 0, out.stderr);
  assert.match(out.stdout, /revoked at \S+ and deleted/);
  assert.deepEqual(await vault.list({ resource: server.url }), []);
  const refresh = await tokenRequest(idp.issuer, {
    grant_type: "refresh_token",
    refresh_token: refreshToken,
    client_id: record?.clientId ?? "",
  });
  assert.equal(refresh.body.error, "invalid_grant");
});
