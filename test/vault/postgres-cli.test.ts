/**
 * The real `agentauth` CLI on PostgreSQL: AGENTAUTH_DATABASE_URL or the global --database-url moves `vault list`
 * and `vault delete` to the database; --database-url refuses a URL with a password (argv is public on the host).
 */

import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";
import { openVault } from "../../src/vault/index.ts";
import { runCli } from "../support/cli.ts";
import { closedPort } from "../support/closed-port.ts";
import { skipWithoutPostgres, testPostgres } from "../support/postgres.ts";
import { newKey, sampleInput, tempHome } from "./helpers.ts";

const PG = await testPostgres();

test("[PG-vault-cli-list] vault list --json and vault delete work on PostgreSQL, through the env or --database-url", async (t) => {
  if (skipWithoutPostgres(t, PG)) return;
  const url = await PG.freshDatabase();
  const home = tempHome(t); // stays empty: nothing may land in SQLite
  const key = newKey();
  const vault = openVault({ databaseUrl: url, env: { AGENTAUTH_VAULT_KEY: key } });
  t.after(() => vault.close());
  const written = await vault.put(sampleInput({ subject: "carol" }));

  const viaEnv = await runCli(["vault", "list", "--json"], {
    AGENTAUTH_HOME: home,
    AGENTAUTH_DATABASE_URL: url,
  });
  assert.equal(viaEnv.code, 0, viaEnv.stderr);
  const listed = JSON.parse(viaEnv.stdout) as { id: string; subject?: string }[];
  assert.deepEqual(
    listed.map((c) => c.id),
    [written.id],
  );
  for (const value of Object.values(sampleInput().tokens)) {
    if (typeof value === "object") assert.equal(viaEnv.stdout.includes(value.reveal()), false);
  }

  // The flag, placed before the command, and no key at all: listing never needs one.
  const viaFlag = await runCli(["--database-url", url, "vault", "delete", written.id, "--json"], {
    AGENTAUTH_HOME: home,
  });
  assert.equal(viaFlag.code, 0, viaFlag.stderr);
  assert.deepEqual(JSON.parse(viaFlag.stdout), { id: written.id, revoked: false, deleted: true });
  assert.equal(await vault.getById(written.id), undefined);

  const empty = await runCli(["vault", "list", "--json", `--database-url=${url}`], {
    AGENTAUTH_HOME: home,
  });
  assert.equal(empty.code, 0, empty.stderr);
  assert.deepEqual(JSON.parse(empty.stdout), []);
  assert.equal(existsSync(join(home, "vault.db")), false, "nothing went to SQLite");
});

test("[PG-vault-cli-password-refused] --database-url with a password is a usage error (exit 2) that never echoes it", async (t) => {
  const home = tempHome(t);
  const password = `pw-SECRET-${Date.now()}`;
  const cases: [string[], string][] = [
    [
      ["vault", "list", "--json", "--database-url", `postgres://u:${password}@127.0.0.1/db`],
      "database_url_password",
    ],
    [
      [
        "--database-url",
        `postgresql://u@127.0.0.1/db?password=${password}`,
        "vault",
        "list",
        "--json",
      ],
      "database_url_password",
    ],
    [
      ["vault", "list", "--json", `--database-url=mysql://u:${password}@h/db`],
      "database_url_invalid",
    ],
    [["vault", "list", "--json", "--database-url"], "usage"],
  ];
  for (const [args, code] of cases) {
    const result = await runCli(args, { AGENTAUTH_HOME: home });
    assert.equal(result.code, 2, `${args.join(" ")}: ${result.stderr}`);
    const error = JSON.parse(result.stdout).error;
    assert.equal(error.code, code);
    assert.equal(
      `${result.stdout}${result.stderr}`.includes(password),
      false,
      "the password was echoed",
    );
    if (code === "database_url_password") assert.match(error.message, /PGPASSWORD/);
  }
  const plain = await runCli(
    ["vault", "list", "--database-url", `postgres://u:${password}@127.0.0.1/db`],
    {
      AGENTAUTH_HOME: home,
    },
  );
  assert.equal(plain.code, 2);
  assert.match(plain.stderr, /must not carry a password/);
  assert.equal(plain.stderr.includes(password), false);
});

test("[PG-vault-cli-unreachable] an unreachable database is a typed error naming the URL without its password", async (t) => {
  const home = tempHome(t);
  const password = `pw-SECRET-${Date.now()}`;
  const port = await closedPort();
  const result = await runCli(["vault", "list", "--json"], {
    AGENTAUTH_HOME: home,
    AGENTAUTH_DATABASE_URL: `postgres://agentauth:${password}@127.0.0.1:${port}/agentauth`,
  });
  assert.equal(result.code, 1, result.stderr);
  const error = JSON.parse(result.stdout).error;
  assert.equal(error.code, "database_unavailable");
  assert.match(error.message, new RegExp(`postgres://agentauth@127\\.0\\.0\\.1:${port}/agentauth`));
  assert.equal(`${result.stdout}${result.stderr}`.includes(password), false);
});
