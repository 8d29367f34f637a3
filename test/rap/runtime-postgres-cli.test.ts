/**
 * `agentauth rap runtime serve` on PostgreSQL: picked from AGENTAUTH_DATABASE_URL and named in the ready line (the
 * URL without its password); a second instance with another callback key refuses to start with one sentence;
 * --db with AGENTAUTH_DATABASE_URL is a usage error; an unreachable database is a typed error, password redacted.
 */

import assert from "node:assert/strict";
import { join } from "node:path";
import { test } from "node:test";
import { runCli, startCli } from "../support/cli.ts";
import { skipWithoutPostgres, testPostgres } from "../support/postgres.ts";
import { echoTool, standInTool } from "../support/rap-tool-stand-in.ts";
import { tempDir } from "../support/tmp.ts";

const PG = await testPostgres();

const serve = (toolset: string, keyFile: string, extra: string[] = []) => [
  "rap",
  "runtime",
  "serve",
  "--toolset",
  toolset,
  "--tool-auth",
  "none",
  "--port",
  "0",
  "--key-file",
  keyFile,
  ...extra,
];

test("[PG-rap-runtime-cli] serve picks PostgreSQL from AGENTAUTH_DATABASE_URL; another key refuses to start; --db with it is a usage error", async (t) => {
  if (skipWithoutPostgres(t, PG)) return;
  const databaseUrl = await PG.freshDatabase();
  const tool = await standInTool({ tools: [echoTool] });
  const env = { AGENTAUTH_DATABASE_URL: databaseUrl, AGENTAUTH_LOG_LEVEL: "warn" };
  const keyFile = join(tempDir(), "shared.key");
  const first = startCli(serve(tool.origin, keyFile), { ...env, AGENTAUTH_HOME: tempDir() });
  const [line] = await first.waitFor("stdout", /^\{"event":"ready".*\}$/m);
  const ready = JSON.parse(line) as { store: string; database: string };
  assert.equal(ready.store, "postgres");
  assert.match(ready.database, /^postgres:\/\/agentauth@127\.0\.0\.1:\d+\/agentauth_test_/);

  const other = await runCli(serve(tool.origin, join(tempDir(), "other.key")), {
    ...env,
    AGENTAUTH_HOME: tempDir(),
  });
  assert.equal(other.code, 1);
  assert.match(other.stderr, /sign callback URLs with another key/);
  assert.match(other.stderr, /--key-file/);

  const both = await runCli(serve(tool.origin, keyFile, ["--db", join(tempDir(), "x.db")]), {
    ...env,
    AGENTAUTH_HOME: tempDir(),
  });
  assert.equal(both.code, 2);
  assert.match(both.stderr, /--db names a SQLite file/);

  first.kill("SIGTERM");
  assert.equal((await first.exited).code, 0);
});

test("[PG-rap-runtime-cli-unreachable] an unreachable database is one sentence with the password redacted, exit 1", async () => {
  const tool = await standInTool({ tools: [echoTool] });
  const result = await runCli(serve(tool.origin, join(tempDir(), "k.key")), {
    AGENTAUTH_HOME: tempDir(),
    // Port 1 on loopback: refused at once.
    AGENTAUTH_DATABASE_URL: "postgres://agentauth:hunter2-secret@127.0.0.1:1/agentauth",
  });
  assert.equal(result.code, 1);
  assert.match(result.stderr, /postgres:\/\/agentauth@127\.0\.0\.1:1\/agentauth/);
  assert.doesNotMatch(result.stderr + result.stdout, /hunter2/);
  const notPostgres = await runCli(serve(tool.origin, join(tempDir(), "k.key")), {
    AGENTAUTH_HOME: tempDir(),
    AGENTAUTH_DATABASE_URL: "mysql://root:pw@127.0.0.1/x",
  });
  assert.equal(notPostgres.code, 1);
  assert.match(notPostgres.stderr, /postgres:\/\//);
  assert.doesNotMatch(notPostgres.stderr, /pw@/);
});
