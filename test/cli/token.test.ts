/**
 * `agentauth token <vault-id>` as real processes against the GitHub simulator (a GitHub App: 8 h tokens,
 * single-use refresh tokens) with a real vault: only the token on stdout, exactly one refresh after expiry even
 * with several processes at once, distinct exit codes for "sign in again" (3) and "try again later" (4).
 */

import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { after, test } from "node:test";
import { signInAgain } from "../../src/cli/commands/token.ts";
import { Secret } from "../../src/core/secret.ts";
import { openVault } from "../../src/vault/index.ts";
import type { CredentialRecord } from "../../src/vault/types.ts";
import { type GitHubSimulator, startGitHubSimulator } from "../sims/github.ts";
import { type CliResult, runCli, startCli, vaultIdOf } from "../support/cli.ts";
import { useIdp } from "../support/idp.ts";
import { tempDir } from "../support/tmp.ts";

const SECRET_VAR = "GH_APP_CLIENT_SECRET";
const TIMEOUT = { timeout: 180_000 };

interface Signed {
  sim: GitHubSimulator;
  env: { AGENTAUTH_HOME: string };
  id: string;
}

/** A GitHub App device login through the CLI, with the client secret from the environment. */
async function signedIn(): Promise<Signed> {
  const sim = await startGitHubSimulator({ appKind: "github_app", deviceIntervalSeconds: 1 });
  after(() => sim.close());
  const env = { AGENTAUTH_HOME: tempDir() };
  const login = startCli(
    [
      ...["login", "--provider", "github", "--provider-host", sim.url],
      ...["--provider-option", "app=github_app", "--client-id", sim.clientId],
      ...["--client-secret-env", SECRET_VAR, "--device"],
    ],
    { ...env, [SECRET_VAR]: sim.clientSecret },
  );
  const [, userCode] = await login.waitFor("stderr", /and enter the code\n\n {2}(\S+)\n/);
  sim.approveDevice(userCode as string);
  const result = await login.exited;
  assert.equal(result.code, 0, result.stderr);
  return { sim, env, id: vaultIdOf(result.stdout) };
}

/** Reads, changes and writes back one credential, the way another program using the vault API would. */
async function edit(
  home: string,
  id: string,
  change: (record: CredentialRecord) => Partial<CredentialRecord>,
): Promise<CredentialRecord> {
  const vault = openVault({ env: { AGENTAUTH_HOME: home } });
  try {
    const record = await vault.getById(id);
    assert.ok(record, `credential ${id} exists`);
    return await vault.put({ ...record, ...change(record) });
  } finally {
    await vault.close();
  }
}

const expire = () => ({ expiresAt: Date.now() - 60_000 });

function assertTokenOnly(result: CliResult, token: string | undefined): void {
  assert.equal(result.code, 0, result.stderr);
  assert.ok(token, "the vault holds an access token");
  assert.equal(result.stdout, `${token}\n`, "stdout is the token and a newline, nothing else");
  assert.equal(result.stderr, "");
}

test(
  "[CLI-token-refresh-once] token after expiry refreshes exactly once, across 4 processes at once, and prints only the token",
  TIMEOUT,
  async () => {
    const { sim, env, id } = await signedIn();
    const before = await edit(env.AGENTAUTH_HOME, id, expire);
    const oldToken = before.tokens.accessToken?.reveal();
    assert.equal(sim.stats().refreshGrants, 0);

    const results = await Promise.all(Array.from({ length: 4 }, () => runCli(["token", id], env)));
    assert.equal(sim.stats().refreshGrants, 1, "one refresh for four processes");
    const after1 = await edit(env.AGENTAUTH_HOME, id, () => ({}));
    const fresh = after1.tokens.accessToken?.reveal();
    assert.notEqual(fresh, oldToken, "a new token");
    for (const result of results) assertTokenOnly(result, fresh);
    assert.ok(sim.isActive(fresh as string), "GitHub knows the printed token");
    assert.notEqual(
      after1.tokens.refreshToken?.reveal(),
      before.tokens.refreshToken?.reveal(),
      "the rotated refresh token was stored",
    );
    assert.ok((after1.expiresAt ?? 0) > Date.now(), "the new expiry is stored");

    // Not due any more: printed from the vault, no request to GitHub.
    const again = await runCli(["token", id], env);
    assertTokenOnly(again, fresh);
    assert.equal(sim.stats().refreshGrants, 1);
  },
);

test(
  "[CLI-token-login-required] a refused refresh token exits 3 with the login line to run; later calls fail fast",
  TIMEOUT,
  async () => {
    const { sim, env, id } = await signedIn();
    await edit(env.AGENTAUTH_HOME, id, (record) => ({
      ...expire(),
      tokens: {
        ...record.tokens,
        refreshToken: new Secret("ghr_revokedRefreshTokenForTheTest0000000000000"),
      },
    }));
    const result = await runCli(["token", id], env);
    assert.equal(result.code, 3, result.stderr);
    assert.equal(result.stdout, "");
    assert.match(result.stderr, /\[login_required\]\n$/);
    assert.ok(
      result.stderr.includes(
        `agentauth login --provider github --provider-host ${sim.url} --provider-option app=github_app --client-id ${sim.clientId} --client-secret-env VAR`,
      ),
      result.stderr,
    );
    assert.ok(!result.stderr.includes("ghr_revoked"), "the refresh token is not printed");
    const requests = sim.stats().tokenRequests;

    const json = await runCli(["token", id, "--json"], env);
    assert.equal(json.code, 3);
    assert.equal(json.stdout, "", "--json errors go to stderr: stdout is only ever a token");
    assert.equal(JSON.parse(json.stderr).error.code, "login_required");
    assert.equal(sim.stats().tokenRequests, requests, "marked login_required: nothing sent");
  },
);

test(
  "[CLI-token-temporary] a rate limit or an HTML page at refresh exits 4, marks nothing, and the next call works",
  TIMEOUT,
  async () => {
    const { sim, env, id } = await signedIn();
    await edit(env.AGENTAUTH_HOME, id, expire);
    // GitHub's rate limit (403 + x-ratelimit-remaining: 0), its "Unicorn!" page with a 502, and that page with a 200.
    for (const [fault, code] of [
      ["rate_limit", "rate_limited"],
      ["html", "server_error"],
      ["html200", "invalid_response"],
    ] as const) {
      sim.failNext(fault);
      const result = await runCli(["token", id, "--json"], env);
      assert.equal(result.code, 4, `${fault}: ${result.stderr}`);
      assert.equal(result.stdout, "");
      const error = JSON.parse(result.stderr).error;
      assert.equal(error.code, code, result.stderr);
      assert.doesNotMatch(error.message, /<html|Unicorn/i, "the page is not echoed");
    }
    const list = await runCli(["vault", "list", "--json"], env);
    assert.equal(JSON.parse(list.stdout)[0].status, "active", "a transient failure marks nothing");
    const ok = await runCli(["token", id], env);
    assert.equal(ok.code, 0, ok.stderr);
    assert.equal(sim.stats().refreshGrants, 1);
  },
);

test(
  "[CLI-token-unsafe-token] a token with control characters or whitespace is refused (invalid_response), never printed",
  TIMEOUT,
  async () => {
    const { env, id } = await signedIn();
    // A token a provider (or anything else writing the vault) made up: terminal escapes, a newline, a space.
    // RFC 6750 section 2.1 (b64token) allows none of them in a Bearer header; printed, they reach a terminal or
    // a shell substitution.
    for (const hostile of [
      "ghu_ok\u001b]0;owned\u0007rest",
      "ghu_line1\nexport X=1",
      "ghu_two words",
    ]) {
      await edit(env.AGENTAUTH_HOME, id, (record) => ({
        tokens: { ...record.tokens, accessToken: new Secret(hostile) },
      }));
      const result = await runCli(["token", id, "--json"], env);
      assert.notEqual(result.code, 0, JSON.stringify(hostile));
      assert.equal(result.stdout, "", "nothing on stdout");
      assert.equal(JSON.parse(result.stderr).error.code, "invalid_response", result.stderr);
      assert.ok(!result.stderr.includes(hostile.slice(0, 8)), "the token is not echoed");
    }
  },
);

/** The words a POSIX shell (bash) makes of a line, with `agentauth` replaced by a function printing its argv. */
function shellWords(line: string): string[] {
  const out = execFileSync(
    "bash",
    ["-c", 'agentauth() { printf "%s\\0" "$@"; }; eval "$1"', "bash", line],
    { encoding: "utf8" },
  );
  return out.split("\0").slice(0, -1);
}

test("[CLI-token-signin-hint-quoted] the 'sign in again' line is shell-quoted: option values with spaces, JSON and $(…) come back as typed", () => {
  const endpoints = JSON.stringify({
    issuer: "https://idp.example",
    token: "https://idp.example/t",
  });
  const params = JSON.stringify({ audience: "it's api" });
  const base = { subject: "s", resource: undefined, tokens: {}, clientId: "cli ent" };
  const preset = signInAgain({
    ...base,
    issuer: "https://idp.example",
    provider: {
      name: "generic",
      options: { endpoints, authorizationParams: params, displayName: "My $(touch /tmp/x) IdP" },
    },
  } as unknown as CredentialRecord);
  assert.deepEqual(shellWords(preset.replace(/^Run: /, "")), [
    ...["login", "--provider", "generic", "--provider-option", `endpoints=${endpoints}`],
    ...["--provider-option", `authorizationParams=${params}`],
    ...["--provider-option", "displayName=My $(touch /tmp/x) IdP", "--client-id", "cli ent"],
  ]);
  const issuer = signInAgain({
    ...base,
    issuer: "https://idp.example/a b;c",
    resource: "https://api.example/x?y=1&z=2",
  } as unknown as CredentialRecord);
  assert.deepEqual(shellWords(issuer.replace(/^Run: /, "")), [
    ...["login", "--issuer", "https://idp.example/a b;c", "--client-id", "cli ent"],
    ...["--resource", "https://api.example/x?y=1&z=2"],
  ]);
});

test(
  "[CLI-token-errors] an unknown id exits 1 on stderr; no id is a usage error; --help explains the exit codes",
  TIMEOUT,
  async () => {
    const env = { AGENTAUTH_HOME: tempDir() };
    const missing = await runCli(["token", "abcdefghijk"], env);
    assert.equal(missing.code, 1);
    assert.equal(missing.stdout, "");
    assert.match(missing.stderr, /no credential with id abcdefghijk; run 'agentauth vault list'/);
    const json = await runCli(["token", "-bcdefghijkl", "--json"], env);
    assert.equal(json.code, 1);
    assert.equal(json.stdout, "");
    assert.equal(JSON.parse(json.stderr).error.code, "credential_not_found");
    const usage = await runCli(["token"], env);
    assert.equal(usage.code, 2);
    assert.match(usage.stderr, /token needs exactly one <vault-id>/);
    const help = await runCli(["token", "--help"], env);
    assert.equal(help.code, 0);
    assert.match(help.stdout, /^agentauth token <vault-id>/);
    assert.match(help.stdout, /^ {2}3 {2}login required/m);
    assert.match(help.stdout, /^ {2}4 {2}temporary failure/m);
  },
);

test(
  "[CLI-token-generic-and-issuer] token refreshes a --issuer login and a --provider generic login (discovery) against the embedded server",
  TIMEOUT,
  async () => {
    const idp = await useIdp();
    for (const how of [
      ["--issuer", idp.issuer],
      [
        "--provider",
        "generic",
        "--provider-option",
        `issuer=${idp.issuer}`,
        "--client-id",
        "agentauth-cli",
        "--scope",
        "openid offline_access",
      ],
    ]) {
      const env = { AGENTAUTH_HOME: tempDir() };
      const login = startCli(["login", ...how, "--device"], env);
      const [url] = await login.waitFor(
        "stderr",
        /http:\/\/127\.0\.0\.1:\d+\/device\?user_code=[A-Z-]+/,
      );
      await (await fetch(url)).arrayBuffer();
      const logged = await login.exited;
      assert.equal(logged.code, 0, logged.stderr);
      const id = vaultIdOf(logged.stdout);
      const before = await edit(env.AGENTAUTH_HOME, id, expire);
      const result = await runCli(["token", id], env);
      const after1 = await edit(env.AGENTAUTH_HOME, id, () => ({}));
      assertTokenOnly(result, after1.tokens.accessToken?.reveal());
      assert.notEqual(
        after1.tokens.accessToken?.reveal(),
        before.tokens.accessToken?.reveal(),
        `${how[0]}: refreshed`,
      );
      if (how[0] === "--provider") assert.equal(after1.provider?.name, "generic");
    }
  },
);
