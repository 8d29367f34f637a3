/**
 * `agentauth providers` (the catalog, human and JSON) and the bad inputs of `agentauth login --provider`: wrong
 * flags are usage errors with stable codes, a secret on argv is refused without being echoed, and a hostile or
 * failing GitHub (simulator, test/sims/github.ts) ends the login with a typed error and nothing stored.
 */

import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { after, test } from "node:test";
import { secret } from "../../src/core/secret.ts";
import { PRESETS } from "../../src/providers/index.ts";
import { openVault } from "../../src/vault/index.ts";
import { startGitHubSimulator } from "../sims/github.ts";
import { type CliResult, runCli, startCli } from "../support/cli.ts";
import { tempDir } from "../support/tmp.ts";

const TIMEOUT = { timeout: 180_000 };
const STACK_FRAME = /^\s+at /m;

test(
  "[CLI-providers] providers --json lists every preset with what it needs; GitHub's entry is complete",
  TIMEOUT,
  async () => {
    const result = await runCli(["providers", "--json"], { AGENTAUTH_HOME: tempDir() });
    assert.equal(result.code, 0, result.stderr);
    assert.equal(result.stderr, "");
    const listing = JSON.parse(result.stdout) as Record<string, unknown>[];
    assert.deepEqual(
      listing.map((p) => p.name),
      PRESETS.map((p) => p.name),
    );
    const github = listing.find((p) => p.name === "github");
    assert.ok(github, "GitHub is listed");
    assert.deepEqual(Object.keys(github).sort(), [
      "displayName",
      "docs",
      "flows",
      "name",
      "redirectUri",
      "refresh",
      "register",
      "revocation",
      "selfHosted",
      "summary",
    ]);
    assert.deepEqual(github.flows, ["authorization_code", "device"]);
    assert.equal(github.selfHosted, true);
    assert.match(String(github.docs), /^https:\/\/docs\.github\.com\//);
    assert.match(String(github.revocation), /applications\/\{client_id\}\/token/);
  },
);

test(
  "[CLI-providers] providers prints a table and one block per preset; --help describes it",
  TIMEOUT,
  async () => {
    const env = { AGENTAUTH_HOME: tempDir() };
    const [table, help] = await Promise.all([
      runCli(["providers"], env),
      runCli(["providers", "--help"], env),
    ]);
    assert.equal(table.code, 0, table.stderr);
    assert.match(table.stdout, /^NAME +FLOWS +SELF-HOSTED +WHAT\n/);
    assert.match(table.stdout, /^github +browser, device +yes +github\.com/m);
    assert.match(table.stdout, /^GitHub \(--provider github\)\n {2}register: /m);
    assert.match(table.stdout, /^ {2}redirect URI: http:\/\/127\.0\.0\.1/m);
    assert.equal(help.code, 0);
    assert.match(help.stdout, /^agentauth providers \[--json\]/);
  },
);

/** A usage error with a stable code: exit 2, JSON on stdout under --json, no stack trace, nothing stored. */
function assertRefused(result: CliResult, code: string, mentions: RegExp, home: string): void {
  assert.equal(result.code, 2, `${result.stdout}${result.stderr}`);
  const error = JSON.parse(result.stdout).error;
  assert.equal(error.code, code, result.stdout);
  assert.match(error.message, mentions);
  assert.doesNotMatch(result.stderr, STACK_FRAME);
  assert.ok(!existsSync(join(home, "vault.db")), "no vault was even opened");
}

test(
  "[CLI-provider-bad-flags] unknown provider, missing --client-id, http host off loopback, unknown options: usage errors, nothing stored",
  TIMEOUT,
  async () => {
    const home = tempDir();
    const env = { AGENTAUTH_HOME: home };
    const run = (...args: string[]) => runCli(["login", "--json", ...args], env);
    const github = ["--provider", "github", "--client-id", "Ov23liABCDEFGHIJ"];
    const hostless = PRESETS.find((p) => !p.selfHosted);
    const cases: [Promise<CliResult>, string, RegExp][] = [
      [
        run("--provider", "bogus", "--client-id", "x"),
        "provider_unknown",
        /unknown provider "bogus"; the providers are github/,
      ],
      [
        run("--provider", "github", "--device"),
        "provider_client_id_missing",
        /needs --client-id ID/,
      ],
      [
        run(...github, "--provider-host", "http://github.example.com"),
        "provider_host_invalid",
        /must be an https:\/\/ URL \(http:\/\/ only on loopback\)\. Fix --provider-host\./,
      ],
      [
        run(...github, "--provider-option", "tenant=common"),
        "provider_option_unknown",
        /GitHub does not use the option "tenant"/,
      ],
      [
        run(...github, "--provider-option", "app=GitHub-App"),
        "provider_option_invalid",
        /does not accept app="GitHub-App"/,
      ],
      [run(...github, "--provider-option", "app"), "usage", /--provider-option takes key=value/],
      [
        run(...github, "--client-secret-env", "GH_SECRET_NOT_SET"),
        "client_secret_missing",
        /GH_SECRET_NOT_SET .* not set/,
      ],
      [
        run(...github, "--issuer", "https://example.com"),
        "usage",
        /--issuer URL or --provider NAME, not both/,
      ],
      [
        run("--issuer", "https://example.com", "--provider-host", "https://x.example"),
        "usage",
        /goes with --provider/,
      ],
    ];
    if (hostless) {
      cases.push([
        run(
          "--provider",
          hostless.name,
          "--client-id",
          "x",
          "--provider-host",
          "https://x.example",
        ),
        "provider_host_unsupported",
        /has no self-hosted servers/,
      ]);
    }
    for (const [pending, code, mentions] of cases)
      assertRefused(await pending, code, mentions, home);
  },
);

test(
  "[CLI-provider-secret-argv] a client secret on the command line is refused, pointing to --client-secret-env/file, and never echoed",
  TIMEOUT,
  async () => {
    const home = tempDir();
    const value = "s3cr3t-on-argv-0123456789abcdef";
    for (const args of [["--client-secret", value], [`--client-secret=${value}`]]) {
      const result = await runCli(
        ["login", "--provider", "github", "--client-id", "Ov23liABCDEFGHIJ", ...args],
        { AGENTAUTH_HOME: home },
      );
      assert.equal(result.code, 2, result.stderr);
      assert.match(result.stderr, /does not take a client secret on the command line/);
      assert.match(result.stderr, /--client-secret-env VAR.*--client-secret-file PATH/s);
      assert.ok(!`${result.stdout}${result.stderr}`.includes(value), "the value is not echoed");
      assert.ok(!`${result.stdout}${result.stderr}`.includes(value.slice(0, 10)));
    }
    assert.ok(!existsSync(join(home, "vault.db")));
  },
);

test(
  "[CLI-provider-secret-env-echo] --client-secret-env given the secret itself (not a variable name) is never echoed; a conventional NAME is",
  TIMEOUT,
  async () => {
    const home = tempDir();
    const env = { AGENTAUTH_HOME: home };
    const login = ["login", "--json", "--provider", "github", "--client-id", "Ov23liABCDEFGHIJ"];
    // Values that pass as identifiers but look like secrets: a GitHub client secret (40 hex), a lowercase token,
    // an uppercase string longer than any variable name people write.
    for (const value of [
      "a3f9c0d1e2b4a5c6d7e8f90a1b2c3d4e5f6a7b8c",
      "ghs_R4nd0mS3cr3tV4lu3",
      `X${"Y".repeat(80)}`,
    ]) {
      const result = await runCli([...login, "--client-secret-env", value], env);
      assert.equal(result.code, 2, `${result.stdout}${result.stderr}`);
      assert.equal(JSON.parse(result.stdout).error.code, "client_secret_missing");
      const all = `${result.stdout}${result.stderr}`;
      assert.ok(!all.includes(value), `the value ${value.slice(0, 6)}… is not echoed`);
      assert.ok(!all.includes(value.slice(0, 12)));
    }
    const named = await runCli([...login, "--client-secret-env", "MY_GH_SECRET"], env);
    assert.match(JSON.parse(named.stdout).error.message, /MY_GH_SECRET .*not set/);
    assert.ok(!existsSync(join(home, "vault.db")));
  },
);

test(
  "[CLI-provider-hostile-answers] an HTML page, a rate limit or a denial from GitHub ends the login with a clear error; nothing stored",
  TIMEOUT,
  async () => {
    const sim = await startGitHubSimulator({ deviceIntervalSeconds: 1 });
    after(() => sim.close());
    const home = tempDir();
    const env = { AGENTAUTH_HOME: home };
    const outcomes: [string, string, RegExp][] = [
      ["html200", "invalid_response", /GitHub answered with an HTML page \(HTTP 200\)/],
      ["rate_limit", "rate_limited", /GitHub is rate limiting requests right now\. Try again/],
      ["deny", "access_denied", /denied/],
    ];
    for (const [fault, code, message] of outcomes) {
      if (fault !== "deny") sim.failNext(fault as "html200" | "rate_limit");
      const login = startCli(
        [
          "login",
          "--json",
          "--provider",
          "github",
          "--provider-host",
          sim.url,
          "--client-id",
          sim.clientId,
        ],
        env,
      );
      const [, userCode] = await login.waitFor("stderr", /and enter the code\n\n {2}(\S+)\n/);
      if (fault === "deny") sim.denyDevice(userCode as string);
      const result = await login.exited;
      assert.equal(result.code, 1, `${fault}: ${result.stdout}${result.stderr}`);
      const error = JSON.parse(result.stdout).error;
      assert.equal(error.code, code, `${fault}: ${result.stdout}`);
      assert.match(error.message, message);
      assert.doesNotMatch(error.message, /<html|Unicorn/i, "the page itself is not echoed");
      assert.doesNotMatch(result.stderr, STACK_FRAME);
    }
    const list = await runCli(["vault", "list", "--json"], env);
    assert.deepEqual(JSON.parse(list.stdout), [], "nothing stored");
  },
);

test(
  "[CLI-vault-json] vault revoke/delete under --json: outcomes and errors are JSON on stdout",
  TIMEOUT,
  async () => {
    const home = tempDir();
    const env = { AGENTAUTH_HOME: home };
    const vault = openVault({ env });
    const { id } = await vault.put({
      subject: "someone",
      issuer: "https://auth.example.test",
      resource: "",
      clientId: "client-x",
      tokens: { accessToken: secret("at-json-outcome") },
      scopes: [],
      account: {},
      status: "active",
    });
    await vault.close();
    const [missingRevoke, missingDelete] = await Promise.all([
      runCli(["vault", "revoke", "nopenopenope", "--json"], env),
      runCli(["vault", "delete", "nopenopenope", "--json"], env),
    ]);
    for (const result of [missingRevoke, missingDelete]) {
      assert.equal(result.code, 1, result.stderr);
      assert.equal(result.stderr, "");
      assert.equal(JSON.parse(result.stdout).error.code, "credential_not_found");
    }
    const deleted = await runCli(["vault", "delete", id, "--json"], env);
    assert.equal(deleted.code, 0, deleted.stderr);
    assert.deepEqual(JSON.parse(deleted.stdout), { id, revoked: false, deleted: true });
  },
);

test(
  "[CLI-provider-option-json] a JSON option the preset stores re-serialised (generic endpoints, other key order) is accepted, not refused",
  TIMEOUT,
  async () => {
    const home = tempDir();
    // Port 9 (discard) on loopback: nothing answers, so the login gets past the flags and fails at the network.
    const endpoints =
      '{ "token": "http://127.0.0.1:9/token", "issuer": "http://127.0.0.1:9", "device": "http://127.0.0.1:9/device" }';
    const result = await runCli(
      [
        "login",
        "--json",
        "--provider",
        "generic",
        "--client-id",
        "x",
        "--provider-option",
        `endpoints=${endpoints}`,
        "--device",
      ],
      { AGENTAUTH_HOME: home },
    );
    assert.equal(result.code, 1, result.stdout);
    assert.equal(JSON.parse(result.stdout).error.code, "network_error");
  },
);

test("[CLI-login-redirect-port] --redirect-port must be a port, and goes with the browser flow only", async () => {
  for (const [args, message] of [
    [["--redirect-port", "0"], "--redirect-port must be a port number"],
    [["--redirect-port", "70000"], "--redirect-port must be a port number"],
    [["--redirect-port", "80x"], "--redirect-port must be a port number"],
    [["--redirect-port", "8765", "--device"], "--redirect-port goes with the browser flow"],
  ] as const) {
    const result = await runCli(
      ["login", "--provider", "github", "--client-id", "Iv1.x", ...args],
      { AGENTAUTH_HOME: tempDir() },
    );
    assert.equal(result.code, 2, result.stderr);
    assert.match(result.stderr, new RegExp(message.replace(/[-]/g, "\\-")));
  }
});
