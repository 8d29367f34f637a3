import assert from "node:assert/strict";
import { existsSync, readdirSync, statSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";
import type { CredentialSummary } from "../../src/vault/index.ts";
import {
  type CliResult,
  cliDeviceLogin,
  readStoredTokens,
  runCli,
  startCli,
  vaultIdOf,
} from "../support/cli.ts";
import { useIdp } from "../support/idp.ts";
import { tempDir } from "../support/tmp.ts";

const idp = await useIdp();
const LOGGED_IN_AS_ALICE =
  /^Logged in as Alice Liddell <alice@example\.test> at http:\/\/127\.0\.0\.1:\d+; vault id \S+\.\n$/;

/** Lists the vault through the CLI and returns the parsed summaries. */
async function vaultList(
  env: NodeJS.ProcessEnv,
): Promise<{ result: CliResult; rows: CredentialSummary[] }> {
  const result = await runCli(["vault", "list", "--json"], env);
  assert.equal(result.code, 0, result.stderr);
  return { result, rows: JSON.parse(result.stdout) as CredentialSummary[] };
}

/** No command output may contain any of the stored tokens, whole or in part. */
async function assertNoTokenPrinted(home: string, id: string, outputs: CliResult[]): Promise<void> {
  const tokens = await readStoredTokens(home, id);
  const values = [tokens.accessToken, tokens.refreshToken, tokens.idToken].map((s) => s?.reveal());
  assert.ok(values[0] && values[1], "the vault holds an access and a refresh token");
  for (const output of outputs) {
    for (const value of values) {
      if (!value) continue;
      // The first 16 characters are enough to catch a truncated or wrapped print.
      for (const needle of [value, value.slice(0, 16)]) {
        assert.ok(!output.stdout.includes(needle), "a token leaked to stdout");
        assert.ok(!output.stderr.includes(needle), "a token leaked to stderr");
      }
    }
  }
}

test("[CLI-login-device] login --device prints the verification URL, completes once it is opened, and stores the tokens", {
  timeout: 60_000,
}, async () => {
  const home = tempDir();
  const env = { AGENTAUTH_HOME: home };
  const login = startCli(["login", "--issuer", idp.issuer, "--device"], env);
  const [url] = await login.waitFor(
    "stderr",
    /http:\/\/127\.0\.0\.1:\d+\/device\?user_code=([A-Z]{4}-[A-Z]{4})/,
  );
  const userCode = new URL(url).searchParams.get("user_code");
  assert.ok(
    login.output().stderr.includes(`\n  ${userCode}\n`),
    "the code is shown on its own for typing",
  );
  assert.ok(
    login.output().stderr.includes(`${idp.issuer}/device\n`),
    "the plain verification URI is shown",
  );

  const page = await fetch(url);
  assert.equal(page.status, 200);
  assert.match(await page.text(), /You are signed in to <strong>agentauth CLI<\/strong>/);

  const result = await login.exited;
  assert.equal(result.code, 0, result.stderr);
  assert.match(result.stdout, LOGGED_IN_AS_ALICE);
  const id = vaultIdOf(result.stdout);

  const list = await vaultList(env);
  assert.equal(list.rows.length, 1);
  const [row] = list.rows;
  assert.equal(row?.id, id);
  assert.equal(row?.issuer, idp.issuer);
  assert.equal(row?.subject, "alice");
  assert.equal(row?.clientId, "agentauth-cli");
  assert.equal(row?.account.email, "alice@example.test");
  assert.equal(row?.has.refreshToken, true);
  assert.equal(row?.has.accessToken, true);
  assert.ok(!("tokens" in (row ?? {})), "a listing carries no token field");

  const table = await runCli(["vault", "list"], env);
  assert.equal(table.code, 0);
  // ID, SUBJECT, ACCOUNT (the e-mail when the server gives no login), ISSUER.
  assert.match(
    table.stdout,
    new RegExp(`^${id} +alice +alice@example\\.test +${idp.issuer} `, "m"),
  );

  await assertNoTokenPrinted(home, id, [result, list.result, table]);
});

test("[CLI-login-browser] login --browser prints the authorization URL; opening it redirects to the CLI's loopback listener", {
  timeout: 60_000,
}, async () => {
  const home = tempDir();
  const env = { AGENTAUTH_HOME: home };
  const login = startCli(["login", "--issuer", idp.issuer, "--browser"], env);
  const [, href] = await login.waitFor(
    "stderr",
    /Open this URL in your browser to sign in:\s+(\S+)\n/,
  );
  const url = new URL(href ?? "");
  assert.equal(`${url.origin}${url.pathname}`, `${idp.issuer}/auth`);
  assert.equal(url.searchParams.get("client_id"), "agentauth-cli");
  assert.equal(url.searchParams.get("response_type"), "code");
  assert.equal(url.searchParams.get("code_challenge_method"), "S256");
  assert.ok(url.searchParams.get("code_challenge"));
  assert.ok(url.searchParams.get("state"));
  const redirectUri = new URL(url.searchParams.get("redirect_uri") ?? "");
  assert.equal(redirectUri.hostname, "127.0.0.1");
  assert.notEqual(redirectUri.port, "");

  // The auto-approving server answers with a redirect to the loopback listener, which fetch follows.
  const page = await fetch(url);
  assert.equal(page.status, 200);
  assert.equal(
    new URL(page.url).origin,
    redirectUri.origin,
    "the journey ends at the CLI's listener",
  );
  assert.match(await page.text(), /You can close this window/);

  const result = await login.exited;
  assert.equal(result.code, 0, result.stderr);
  assert.match(result.stdout, LOGGED_IN_AS_ALICE);
  const id = vaultIdOf(result.stdout);
  const list = await vaultList(env);
  assert.deepEqual(
    list.rows.map((r) => [r.id, r.account.email, r.has.refreshToken]),
    [[id, "alice@example.test", true]],
  );
  await assertNoTokenPrinted(home, id, [result, list.result]);
  await assert.rejects(
    fetch(redirectUri.origin),
    "the loopback listener is closed after the login",
  );
});

test("[CLI-home] a login writes only under AGENTAUTH_HOME: an owner-only folder, vault.db and a 0600 key file", {
  timeout: 60_000,
}, async () => {
  const home = join(tempDir(), "nested", "agentauth-home");
  const decoy = tempDir();
  // Point every other place state could go at an empty folder, and check it stays empty.
  const env = {
    AGENTAUTH_HOME: home,
    HOME: decoy,
    XDG_DATA_HOME: join(decoy, "xdg"),
    XDG_CONFIG_HOME: join(decoy, "config"),
  };
  const result = await cliDeviceLogin(idp.issuer, env);
  assert.equal(result.code, 0, result.stderr);

  assert.equal(statSync(home).mode & 0o777, 0o700);
  assert.ok(existsSync(join(home, "vault.db")));
  assert.equal(statSync(join(home, "vault.key")).mode & 0o777, 0o600);
  assert.deepEqual(readdirSync(decoy), []);
});

test("[CLI-login-reserved-subject] --subject in agentauth's reserved namespace is refused (invalid_subject) before any sign-in starts; nothing is stored", {
  timeout: 60_000,
}, async () => {
  const home = tempDir();
  const env = { AGENTAUTH_HOME: home };
  for (const flow of ["--device", "--browser"]) {
    const login = startCli(
      [
        "login",
        "--issuer",
        idp.issuer,
        flow,
        "--subject",
        "agentauth:client:https://x.example/",
        "--json",
      ],
      env,
    );
    // Either it ends at once, or it shows a sign-in link (the failure: it started a sign-in for that subject).
    const started = login.waitFor("stderr", /http:\/\/127\.0\.0\.1:\d+\/(device|auth)/).then(
      () => "started",
      () => "ended",
    );
    const outcome = await Promise.race([login.exited.then(() => "ended"), started]);
    if (outcome === "started") login.kill("SIGKILL");
    assert.equal(outcome, "ended", `${flow}: a sign-in was started for a reserved subject`);
    const result = await login.exited;
    assert.equal(result.code, 1, result.stderr);
    const error = JSON.parse(result.stdout).error as { code: string; message: string };
    assert.equal(error.code, "invalid_subject");
    assert.match(error.message, /agentauth's own vault records; choose another subject/);
  }
  assert.deepEqual((await vaultList(env)).rows, []);
});
