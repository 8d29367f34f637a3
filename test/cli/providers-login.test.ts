/**
 * `agentauth login --provider github` as a real process against the GitHub simulator (test/sims/github.ts, from
 * docs.github.com) on loopback, with a real vault in a temp AGENTAUTH_HOME: device login meeting slow_down, the
 * account shown, the client secret sealed (never in the vault file in clear, argv or output), `vault list` with
 * provider and login, `vault revoke` deleting the grant at GitHub.
 */

import assert from "node:assert/strict";
import { readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { after, test } from "node:test";
import { secret } from "../../src/core/secret.ts";
import { PRESETS } from "../../src/providers/index.ts";
import { type CredentialSummary, openVault } from "../../src/vault/index.ts";
import { type GitHubSimulator, startGitHubSimulator } from "../sims/github.ts";
import { type CliResult, readStoredTokens, runCli, startCli, vaultIdOf } from "../support/cli.ts";
import { tempDir } from "../support/tmp.ts";

const SECRET_VAR = "GH_TEST_CLIENT_SECRET";

async function simulator(appKind: "oauth_app" | "github_app" = "oauth_app") {
  const sim = await startGitHubSimulator({ appKind, deviceIntervalSeconds: 1 });
  after(() => sim.close());
  return sim;
}

function loginArgs(sim: GitHubSimulator, ...more: string[]): string[] {
  return [
    "login",
    "--provider",
    "github",
    "--provider-host",
    sim.url,
    "--client-id",
    sim.clientId,
    ...more,
  ];
}

/** The whole vault folder's bytes (database, WAL, key file...) as one string, to search for a value in clear. */
function homeBytes(home: string): string {
  return readdirSync(home)
    .map((name) => readFileSync(join(home, name)).toString("latin1"))
    .join("\n");
}

/** What the kernel shows every user of the machine as this process's command line. */
function cmdlineOf(pid: number | undefined): string {
  return readFileSync(`/proc/${pid}/cmdline`, "utf8");
}

function assertAbsent(outputs: CliResult[], values: (string | undefined)[], what: string): void {
  for (const output of outputs) {
    for (const value of values) {
      if (!value) continue;
      for (const needle of [value, value.slice(0, 12)]) {
        assert.ok(!output.stdout.includes(needle), `${what} leaked to stdout`);
        assert.ok(!output.stderr.includes(needle), `${what} leaked to stderr`);
      }
    }
  }
}

test("[CLI-provider-device-login] login --provider github --device meets slow_down, shows the account, and stores provider and login", {
  timeout: 180_000,
}, async () => {
  const sim = await simulator();
  const home = tempDir();
  const env = { AGENTAUTH_HOME: home, [SECRET_VAR]: sim.clientSecret };
  sim.slowDownNext(1);
  const login = startCli(loginArgs(sim, "--client-secret-env", SECRET_VAR, "--device"), env);
  const [, userCode] = await login.waitFor("stderr", /and enter the code\n\n {2}(\S+)\n/);
  assert.ok(login.output().stderr.includes(`${sim.url}/login/device\n`), login.output().stderr);
  // The secret reached the process through its environment, not its command line (readable by every user).
  const cmdline = cmdlineOf(login.pid);
  assert.ok(cmdline.includes(SECRET_VAR), "the command line names the variable");
  assert.ok(!cmdline.includes(sim.clientSecret), "the secret is not on the command line");
  sim.approveDevice(userCode as string);

  const result = await login.exited;
  assert.equal(result.code, 0, result.stderr);
  assert.match(
    result.stderr,
    /The server asked to poll more slowly; checking every 6s now\.\n/,
    "slow_down is shown",
  );
  assert.match(
    result.stdout,
    /^Logged in as alice \(Alice Liddell <alice@example\.com>\) at GitHub \(http:\/\/127\.0\.0\.1:\d+\/login\/oauth\); vault id \S+\.\n$/,
  );
  assert.equal(sim.stats().deviceCodes, 1);
  const id = vaultIdOf(result.stdout);

  const json = await runCli(["vault", "list", "--json"], env);
  assert.equal(json.code, 0, json.stderr);
  const [row, ...others] = JSON.parse(json.stdout) as CredentialSummary[];
  assert.equal(others.length, 0);
  assert.equal(row?.id, id);
  assert.deepEqual(row?.provider, { name: "github", options: { app: "oauth_app", host: sim.url } });
  assert.equal(row?.account.login, "alice");
  assert.equal(row?.subject, "1001", "the vault subject is GitHub's numeric user id");

  const table = await runCli(["vault", "list"], env);
  assert.equal(table.code, 0, table.stderr);
  const host = new URL(sim.url).host;
  assert.match(
    table.stdout,
    // ID, SUBJECT (GitHub's numeric id), ACCOUNT (the login), ISSUER, PROVIDER, RESOURCE, STATUS.
    new RegExp(`^${id} +1001 +alice +${sim.url}/login/oauth +github@${host} +- +active `, "m"),
  );

  // Sealed: the vault holds the secret (later refresh and revoke need no flags) but never in clear.
  const stored = await readStoredTokens(home, id);
  const vault = openVault({ env: { AGENTAUTH_HOME: home } });
  const record = await vault.getById(id);
  await vault.close();
  assert.equal(record?.tokens.clientSecret?.reveal(), sim.clientSecret);
  const bytes = homeBytes(home);
  assert.ok(
    !bytes.includes(sim.clientSecret),
    "the client secret is not in the vault files in clear",
  );
  assert.ok(!bytes.includes(stored.accessToken?.reveal() ?? "-"), "nor the access token");
  assertAbsent([result, json, table], [sim.clientSecret, stored.accessToken?.reveal()], "a secret");
});

test("[CLI-provider-browser-login] login --provider github --browser with --client-secret-file: the redirect comes back and the login is stored", {
  timeout: 180_000,
}, async () => {
  const sim = await simulator();
  const home = tempDir();
  const secretFile = join(tempDir(), "github-secret");
  writeFileSync(secretFile, `${sim.clientSecret}\n`, { mode: 0o600 });
  const login = startCli(loginArgs(sim, "--client-secret-file", secretFile, "--browser"), {
    AGENTAUTH_HOME: home,
  });
  const [url] = await login.waitFor(
    "stderr",
    /http:\/\/127\.0\.0\.1:\d+\/login\/oauth\/authorize\S+/,
  );
  const consent = await fetch(url, { redirect: "manual" });
  const location = consent.headers.get("location");
  assert.ok(location, `the simulator redirected (HTTP ${consent.status})`);
  await (await fetch(location)).text();
  const result = await login.exited;
  assert.equal(result.code, 0, result.stderr);
  assert.match(result.stdout, /^Logged in as alice /);
  assert.equal(sim.stats().codeExchanges, 1);
  assert.equal(sim.lastTokenRequest()?.auth, "post", "the secret from the file was sent");
  assertAbsent([result], [sim.clientSecret], "the client secret");
});

test("[CLI-provider-vault-revoke] vault revoke of a GitHub credential deletes the grant at GitHub, then the credential", {
  timeout: 180_000,
}, async () => {
  const sim = await simulator();
  const env = { AGENTAUTH_HOME: tempDir(), [SECRET_VAR]: sim.clientSecret };
  const login = startCli(loginArgs(sim, "--client-secret-env", SECRET_VAR), env);
  const [, userCode] = await login.waitFor("stderr", /and enter the code\n\n {2}(\S+)\n/);
  sim.approveDevice(userCode as string);
  const logged = await login.exited;
  assert.equal(logged.code, 0, logged.stderr);
  const id = vaultIdOf(logged.stdout);
  assert.equal(sim.grantCount(), 1);

  // The revoke command gets no secret: it comes from the vault.
  const revoke = await runCli(["vault", "revoke", id], { AGENTAUTH_HOME: env.AGENTAUTH_HOME });
  assert.equal(revoke.code, 0, revoke.stderr);
  assert.match(
    revoke.stdout,
    new RegExp(`^Revoked ${id} at GitHub \\(${sim.url}/login/oauth\\) and deleted it\\.\\n$`),
  );
  assert.equal(sim.grantCount(), 0, "the grant is gone at GitHub");
  assert.equal(sim.stats().revocations, 1);
  const list = await runCli(["vault", "list", "--json"], env);
  assert.deepEqual(JSON.parse(list.stdout), []);
  assertAbsent([revoke], [sim.clientSecret], "the client secret");
});

test("[CLI-provider-vault-revoke] a GitHub revocation that fails keeps the credential and says what to do; --json gives a JSON error", {
  timeout: 180_000,
}, async () => {
  // Closed by the test itself: the revocation must meet a provider that is gone.
  const sim = await startGitHubSimulator({ deviceIntervalSeconds: 1 });
  const env = { AGENTAUTH_HOME: tempDir(), [SECRET_VAR]: sim.clientSecret };
  const login = startCli(loginArgs(sim, "--client-secret-env", SECRET_VAR), env);
  const [, userCode] = await login.waitFor("stderr", /and enter the code\n\n {2}(\S+)\n/);
  sim.approveDevice(userCode as string);
  const id = vaultIdOf((await login.exited).stdout);
  await sim.close();

  const revoke = await runCli(["vault", "revoke", id, "--json"], env);
  assert.equal(revoke.code, 1, revoke.stdout);
  const error = JSON.parse(revoke.stdout).error;
  assert.equal(error.code, "network_error");
  assert.match(error.message, /could not revoke .* at GitHub .*agentauth vault delete/s);
  const list = await runCli(["vault", "list", "--json"], env);
  assert.equal((JSON.parse(list.stdout) as CredentialSummary[]).length, 1, "kept");
});

test("[CLI-provider-vault-revoke-none] a provider with no revocation API: vault revoke deletes locally and prints where to remove the app", {
  timeout: 180_000,
}, async (t) => {
  // Whichever preset documents no revocation API (Microsoft Entra ID: none for delegated tokens).
  const none = PRESETS.map((preset) => {
    try {
      return preset.fromRef({ name: preset.name, options: {} }, { clientId: "client-x" });
    } catch {
      return undefined;
    }
  }).find((provider) => provider?.revocation.kind === "none");
  if (none?.revocation.kind !== "none") {
    t.skip("no preset without a revocation API is listed yet");
    return;
  }
  const home = tempDir();
  const vault = openVault({ env: { AGENTAUTH_HOME: home } });
  const { id } = await vault.put({
    subject: "user-1",
    issuer: none.issuer,
    resource: "",
    clientId: "client-x",
    provider: none.ref,
    tokens: { accessToken: secret("at-no-revocation-api") },
    scopes: [],
    account: { login: "someone" },
    status: "active",
  });
  await vault.close();
  const result = await runCli(["vault", "revoke", id], { AGENTAUTH_HOME: home });
  assert.equal(result.code, 0, result.stderr);
  const presetName = PRESETS.find((p) => p.name === none.name)?.displayName;
  assert.ok(result.stdout.startsWith(`Deleted ${id} locally. ${presetName} (`), result.stdout);
  assert.ok(result.stdout.includes(`\n  ${none.revocation.manageUrl}\n`), result.stdout);
  const json = await runCli(["vault", "list", "--json"], { AGENTAUTH_HOME: home });
  assert.deepEqual(JSON.parse(json.stdout), []);
});

test("[CLI-provider-origin] the github.com preset remapped with --provider-origin: issuer https://github.com/login/oauth, and revoke reaches the same place later", {
  timeout: 180_000,
}, async () => {
  const sim = await startGitHubSimulator({
    deviceIntervalSeconds: 1,
    publicHost: "https://github.com",
  });
  after(() => sim.close());
  const env = { AGENTAUTH_HOME: tempDir(), [SECRET_VAR]: sim.clientSecret };
  const login = startCli(
    [
      ...[
        "login",
        "--provider",
        "github",
        "--client-id",
        sim.clientId,
        "--client-secret-env",
        SECRET_VAR,
      ],
      ...["--provider-origin", `https://github.com=${sim.url}`],
      ...["--provider-origin", `https://api.github.com=${sim.url}`],
    ],
    env,
  );
  const [, userCode] = await login.waitFor("stderr", /and enter the code\n\n {2}(\S+)\n/);
  assert.ok(
    login.output().stderr.includes("https://github.com/login/device\n"),
    "GitHub's own page",
  );
  sim.approveDevice(userCode as string);
  const result = await login.exited;
  assert.equal(result.code, 0, result.stderr);
  assert.match(
    result.stdout,
    /^Logged in as alice .* at GitHub \(https:\/\/github\.com\/login\/oauth\); vault id /,
  );
  const id = vaultIdOf(result.stdout);
  const [row] = JSON.parse(
    (await runCli(["vault", "list", "--json"], env)).stdout,
  ) as CredentialSummary[];
  assert.equal(row?.issuer, "https://github.com/login/oauth");
  assert.deepEqual(JSON.parse(row?.provider?.options?.origins ?? "{}"), {
    "https://github.com": sim.url,
    "https://api.github.com": sim.url,
  });
  // The stored origins send the revocation to the simulator too, with no flag.
  const revoke = await runCli(["vault", "revoke", id], { AGENTAUTH_HOME: env.AGENTAUTH_HOME });
  assert.equal(revoke.code, 0, revoke.stderr);
  assert.equal(sim.grantCount(), 0);
});

/** Puts one credential in a fresh vault the way another program using the vault API would; returns its id. */
async function storedCredential(
  home: string,
  input: { issuer: string; provider: { name: string; options: Record<string, string> } },
): Promise<string> {
  const vault = openVault({ env: { AGENTAUTH_HOME: home } });
  try {
    const { id } = await vault.put({
      subject: "user-1",
      resource: "",
      clientId: "client-x",
      tokens: { accessToken: secret("at-stored-by-the-test") },
      scopes: [],
      account: { login: "someone" },
      status: "active",
      ...input,
    });
    return id;
  } finally {
    await vault.close();
  }
}

test("[CLI-vault-list-origins] vault list shows a preset whose origins are remapped as 'github (via HOST)', so a redirected credential is visible", {
  timeout: 180_000,
}, async () => {
  const home = tempDir();
  await storedCredential(home, {
    issuer: "https://github.com/login/oauth",
    provider: {
      name: "github",
      options: {
        origins: JSON.stringify({
          "https://github.com": "http://127.0.0.1:45678",
          "https://api.github.com": "http://127.0.0.1:45678",
        }),
      },
    },
  });
  const table = await runCli(["vault", "list"], { AGENTAUTH_HOME: home });
  assert.equal(table.code, 0, table.stderr);
  assert.match(table.stdout, / github \(via 127\.0\.0\.1:45678\) /, table.stdout);
});

test("[CLI-provider-vault-revoke-none] generic endpoints with no revocation endpoint and no manage page: revoke deletes locally and says so (not 'could not revoke … kept')", {
  timeout: 180_000,
}, async () => {
  const home = tempDir();
  const endpoints = { issuer: "https://idp.example", token: "https://idp.example/token" };
  const id = await storedCredential(home, {
    issuer: endpoints.issuer,
    provider: {
      name: "generic",
      options: { authMethod: "client_secret_basic", endpoints: JSON.stringify(endpoints) },
    },
  });
  const result = await runCli(["vault", "revoke", id], { AGENTAUTH_HOME: home });
  assert.equal(result.code, 0, result.stderr);
  assert.doesNotMatch(`${result.stdout}${result.stderr}`, /could not revoke|is kept/);
  assert.match(
    result.stdout,
    new RegExp(`^Deleted ${id} locally\\. .* has no API to revoke access`),
  );
  assert.doesNotMatch(result.stdout, /https:\/\/idp\.example\n/, "no invented manage page");
  const json = await runCli(["vault", "list", "--json"], { AGENTAUTH_HOME: home });
  assert.deepEqual(JSON.parse(json.stdout), []);
});
