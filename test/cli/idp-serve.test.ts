import assert from "node:assert/strict";
import { test } from "node:test";
import { cliDeviceLogin, readStoredTokens, runCli, startCli, vaultIdOf } from "../support/cli.ts";
import { tempDir } from "../support/tmp.ts";

const env = { AGENTAUTH_HOME: tempDir() };

test("[CLI-idp-ready-line] idp serve prints one JSON ready line, serves discovery, and exits 0 on SIGTERM", {
  timeout: 30_000,
}, async () => {
  const idp = startCli(["idp", "serve", "--auto-approve-as", "alice"], env);
  const [line] = await idp.waitFor("stdout", /^.*\n/);
  const ready = JSON.parse(line);
  assert.deepEqual(Object.keys(ready), ["event", "issuer"]);
  assert.equal(ready.event, "ready");
  assert.match(ready.issuer, /^http:\/\/127\.0\.0\.1:\d+$/);
  assert.notEqual(new URL(ready.issuer).port, "0");

  const discovery = await fetch(`${ready.issuer}/.well-known/openid-configuration`);
  assert.equal(discovery.status, 200);
  const metadata = (await discovery.json()) as {
    issuer: string;
    device_authorization_endpoint?: string;
  };
  assert.equal(metadata.issuer, ready.issuer);
  assert.equal(metadata.device_authorization_endpoint, `${ready.issuer}/device/auth`);

  idp.kill("SIGTERM");
  const result = await idp.exited;
  assert.equal(result.code, 0, `stderr: ${result.stderr}`);
  assert.equal(result.signal, null);
  assert.equal(result.stdout, line, "stdout holds the ready line and nothing else");
  // Logs go to stderr as JSON lines, never to stdout.
  for (const logLine of result.stderr.trim().split("\n"))
    assert.equal(typeof JSON.parse(logLine).event, "string");
  await assert.rejects(
    fetch(`${ready.issuer}/.well-known/openid-configuration`),
    "the port is closed after exit",
  );
});

test("[CLI-idp-ready-line] --auto-approve-as an unknown user exits 1 with a clear message", async () => {
  const result = await runCli(["idp", "serve", "--auto-approve-as", "nobody"], env);
  assert.equal(result.code, 1);
  assert.equal(result.stdout, "", "no ready line");
  assert.match(result.stderr, /Unknown demo user "nobody"; choose one of alice, bob, carol\./);
  assert.doesNotMatch(result.stderr, /^\s+at /m);
});

test("[CLI-idp-ready-line] stdout stays the ready line alone after a login, an introspection and a revocation", {
  timeout: 60_000,
}, async () => {
  const idp = startCli(
    ["idp", "serve", "--auto-approve-as", "alice", "--device-interval", "1"],
    env,
  );
  const [line] = await idp.waitFor("stdout", /^.*\n/);
  const { issuer } = JSON.parse(line) as { issuer: string };

  const login = await cliDeviceLogin(issuer, env);
  assert.equal(login.code, 0, login.stderr);
  const id = vaultIdOf(login.stdout);
  // The CLI's public client may introspect its own tokens (no client authentication).
  const { accessToken } = await readStoredTokens(env.AGENTAUTH_HOME, id);
  const introspection = await fetch(`${issuer}/token/introspection`, {
    method: "POST",
    body: new URLSearchParams({ client_id: "agentauth-cli", token: accessToken?.reveal() ?? "" }),
  });
  assert.equal(((await introspection.json()) as { active: boolean }).active, true);
  const revoke = await runCli(["vault", "revoke", id], env);
  assert.equal(revoke.code, 0, revoke.stderr);

  idp.kill("SIGTERM");
  const result = await idp.exited;
  assert.equal(result.code, 0, result.stderr);
  assert.equal(result.stdout, line, "nothing but the ready line on stdout");
});
