/**
 * Issue 11: `agentauth rap tool serve` with AGENTAUTH_DATABASE_URL keeps its pending sign-ins and undelivered results
 * in PostgreSQL (the example tool's whoami asks for a sign-in: its state is a row there); an unreachable database is
 * one typed sentence on stderr, without the password.
 */

import assert from "node:assert/strict";
import { test } from "node:test";
import pg from "pg";
import { generateVaultKey } from "../../src/vault/index.ts";
import { type CliResult, runCli, startCli } from "../support/cli.ts";
import { closedPort } from "../support/closed-port.ts";
import { useIdp } from "../support/idp.ts";
import { skipWithoutPostgres, testPostgres } from "../support/postgres.ts";
import { tempDir } from "../support/tmp.ts";
import { keyedSink } from "./fixtures/keyed-sink.ts";
import { invocation, post } from "./tool-fixture.ts";
import { authorize } from "./tool-oauth-fixture.ts";

const PG = await testPostgres();
const idp = await useIdp();

/** The process must end by itself; the guard only keeps a hang from blocking the suite (not a timing assertion). */
async function ends(result: Promise<CliResult>, what: string): Promise<CliResult> {
  let timer: NodeJS.Timeout | undefined;
  const guard = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} kept running`)), 30_000);
  });
  try {
    return await Promise.race([result, guard]);
  } finally {
    clearTimeout(timer);
  }
}

test("[PG-rap-tool-cli-database-url] rap tool serve with AGENTAUTH_DATABASE_URL: a whoami's pending sign-in is a sealed row in PostgreSQL, its oauth message went through the outbox", async (t) => {
  if (skipWithoutPostgres(t, PG)) return;
  const url = await PG.freshDatabase();
  const sink = await keyedSink();
  const tool = startCli(
    ["rap", "tool", "serve", "--example", "--issuer", idp.issuer, "--invocation-auth", "none"],
    {
      AGENTAUTH_HOME: tempDir(),
      AGENTAUTH_DATABASE_URL: url,
      AGENTAUTH_VAULT_KEY: generateVaultKey(),
    },
  );
  const ready = JSON.parse((await tool.waitFor("stdout", /^\{.*"event":"ready".*\}$/m))[0]);
  assert.match(String(ready.state), /^postgres(ql)?:\/\//, "the state store is named (redacted)");
  const body = invocation(sink.url, { operation: "whoami", arguments: {}, user_id: "u-dana" });
  assert.equal((await post(`${ready.url}/invoke`, body)).status, 200);
  const oauth = await sink.waitFor((d) => d.message.id === body.id);
  assert.equal(oauth.message.type, "oauth");
  assert.match(String(oauth.key), /^[0-9a-f-]{36}$/, "delivered with an Idempotency-Key");

  const client = new pg.Client({ connectionString: url });
  await client.connect();
  t.after(() => client.end());
  const pending = await client.query("SELECT count(*)::int AS n FROM rap_tool_pending");
  assert.equal(pending.rows[0].n, 1, "the pending sign-in is in PostgreSQL");
  // The sink has the message before the tool's DELETE commits: wait (bounded) for the row to go.
  for (let tries = 0; ; tries++) {
    const outbox = await client.query("SELECT count(*)::int AS n FROM rap_tool_outbox");
    if (outbox.rows[0].n === 0) break;
    assert.ok(tries < 500, "the delivered oauth message left the outbox");
    await new Promise((resolve) => setTimeout(resolve, 20));
  }

  // The person signs in; the result comes back; then nothing of the journey is readable in any table (the vault
  // follows AGENTAUTH_DATABASE_URL too).
  const landed = await authorize(String(oauth.message.auth_url));
  assert.equal(landed.status, 200, landed.page);
  const result = await sink.waitFor(
    (d) => d.message.id === body.id && d.message.type === "tool_result",
  );
  assert.match(String(result.message.text), /^You are alice at the demo API/);
  const tables = await client.query(
    "SELECT table_name FROM information_schema.tables WHERE table_schema = 'public'",
  );
  let all = "";
  for (const { table_name } of tables.rows) {
    const rows = await client.query(`SELECT t::text AS row FROM "${table_name}" t`);
    all += rows.rows.map((r) => r.row).join("\n");
  }
  const code = landed.redirect.searchParams.get("code") ?? "";
  const state = landed.redirect.searchParams.get("state") ?? "";
  assert.ok(code.length > 0 && state.length > 0);
  assert.ok(!all.includes(code), "no authorization code at rest");
  assert.ok(!all.includes(state), "no state at rest");
  assert.ok(!all.includes(sink.url), "no callback URL at rest");
  tool.kill("SIGTERM");
  assert.equal((await ends(tool.exited, "rap tool serve")).code, 0);
});

test("[PG-rap-tool-cli-database-unreachable] an unreachable AGENTAUTH_DATABASE_URL: one typed sentence, no password, exit 1", async () => {
  const password = "pw-never-printed-0123456789";
  const port = await closedPort();
  const result = await ends(
    runCli(["rap", "tool", "serve", "--example", "--issuer", idp.issuer], {
      AGENTAUTH_HOME: tempDir(),
      AGENTAUTH_VAULT_KEY: generateVaultKey(),
      AGENTAUTH_DATABASE_URL: `postgres://agentauth:${password}@127.0.0.1:${port}/tool`,
    }),
    "rap tool serve with an unreachable database",
  );
  assert.equal(result.code, 1, result.stderr);
  assert.match(result.stderr, /database_unavailable/);
  assert.equal(result.stderr.trim().split("\n").length, 1, result.stderr);
  assert.ok(
    !`${result.stdout}${result.stderr}`.includes(password),
    "the password is never printed",
  );
});
