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
  const outbox = await client.query("SELECT count(*)::int AS n FROM rap_tool_outbox");
  assert.equal(outbox.rows[0].n, 0, "the delivered oauth message left the outbox");
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
