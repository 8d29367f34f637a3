/**
 * Issue 22 §5: tool instances sharing a database must share their configuration (the OAuth client, the protected
 * API's resource, the vault key, the invocation secret). An instance started with another value than
 * the live instances refuses to start, saying what to set, instead of failing sign-ins at random later; the example
 * tool's API keeps one resource across restarts, so a restart does not make everyone sign in again.
 */

import assert from "node:assert/strict";
import { join } from "node:path";
import { test } from "node:test";
import { EXAMPLE_TOOL_CLIENT_ID } from "../../src/idp/index.ts";
import { generateVaultKey } from "../../src/vault/index.ts";
import { type CliProcess, startCli } from "../support/cli.ts";
import { useIdp } from "../support/idp.ts";
import { skipWithoutPostgres, testPostgres } from "../support/postgres.ts";
import { tempDir } from "../support/tmp.ts";
import { keyedSink } from "./fixtures/keyed-sink.ts";
import { invocation, post } from "./tool-fixture.ts";
import { authorize } from "./tool-oauth-fixture.ts";

const PG = await testPostgres();
const idp = await useIdp();

function serve(env: Record<string, string>, args: string[]): CliProcess {
  return startCli(["rap", "tool", "serve", "--example", "--issuer", idp.issuer, ...args], env);
}

async function ready(cli: CliProcess): Promise<{ url: string }> {
  return JSON.parse((await cli.waitFor("stdout", /^\{.*"event":"ready".*\}$/m))[0]);
}

test("[RAP-tool-shared-config] an instance whose client id, API resource, vault key or invocation secret differs from the live instances' refuses to start and says what to set; with none live, its configuration is the one", async (t) => {
  if (skipWithoutPostgres(t, PG)) return;
  const database = await PG.freshDatabase();
  const shared = tempDir();
  const key = generateVaultKey();
  const env = (vaultKey = key) => ({
    AGENTAUTH_HOME: tempDir(),
    AGENTAUTH_DATABASE_URL: database,
    AGENTAUTH_VAULT_KEY: vaultKey,
  });
  const secret = join(shared, "rap-invocation.secret");
  const base = ["--client-id", EXAMPLE_TOOL_CLIENT_ID, "--invocation-secret-file", secret];
  const first = serve(env(), base);
  await ready(first);

  const refusals: [string, Record<string, string>, string[], RegExp][] = [
    [
      "a dynamically registered client",
      env(),
      ["--invocation-secret-file", secret],
      /client id.*--client-id.*agentauth-example-tool/s,
    ],
    [
      "another API resource",
      env(),
      [...base, "--api-resource", "https://other.example/api"],
      /resource.*--api-resource/s,
    ],
    [
      "another invocation secret",
      env(),
      ["--client-id", EXAMPLE_TOOL_CLIENT_ID, "--invocation-secret-file", join(tempDir(), "s")],
      /invocation secret.*--invocation-secret-file/s,
    ],
    ["another vault key", env(generateVaultKey()), base, /AGENTAUTH_VAULT_KEY/],
  ];
  for (const [what, environment, args, says] of refusals) {
    const cli = serve(environment, args);
    // An instance that starts anyway is stopped at once (the assertion below then fails), not waited for.
    void cli.waitFor("stdout", /"event":"ready"/).then(
      () => cli.kill("SIGKILL"),
      () => {},
    );
    const result = await cli.exited;
    assert.equal(result.code, 1, `${what}: refused\n${result.stdout}\n${result.stderr}`);
    assert.match(result.stderr, /rap_tool_config_mismatch/, what);
    assert.match(result.stderr, says, what);
    assert.ok(!result.stdout.includes('"ready"'), `${what}: never ready`);
  }
  const same = serve(env(), base);
  await ready(same);

  // Once no instance with the old configuration is alive, a new one may start with another.
  for (const cli of [first, same]) {
    cli.kill("SIGKILL");
    await cli.exited;
  }
  const changed = serve(env(), [...base, "--api-resource", "https://other.example/api"]);
  await ready(changed);
  changed.kill("SIGTERM");
  assert.equal((await changed.exited).code, 0);
});

test("[RAP-example-api-stable-resource] rap tool serve --example keeps its API's resource across restarts: after a restart whoami runs with the stored token, no new sign-in", async (t) => {
  const home = tempDir();
  const sink = await keyedSink();
  const args = ["--invocation-auth", "none"];
  const first = serve({ AGENTAUTH_HOME: home }, args);
  const one = await ready(first);
  const body = invocation(sink.url, { operation: "whoami", arguments: {}, user_id: "u-rhea" });
  assert.equal((await post(`${one.url}/invoke`, body)).status, 200);
  const oauth = await sink.waitFor((d) => d.message.id === body.id);
  assert.equal(oauth.message.type, "oauth");
  const signedIn = await authorize(String(oauth.message.auth_url));
  assert.equal(signedIn.status, 200, signedIn.page);
  await sink.waitFor((d) => d.message.id === body.id && d.message.type === "tool_result");
  first.kill("SIGTERM");
  await first.exited;

  const second = serve({ AGENTAUTH_HOME: home }, args);
  t.after(() => second.kill("SIGKILL"));
  const two = await ready(second);
  const again = invocation(sink.url, { operation: "whoami", arguments: {}, user_id: "u-rhea" });
  assert.equal((await post(`${two.url}/invoke`, again)).status, 200);
  const answer = await sink.waitFor((d) => d.message.id === again.id);
  assert.equal(answer.message.type, "tool_result", "the stored grant still fits: no sign-in");
  assert.match(String(answer.message.text), /^You are alice at the demo API/);
  second.kill("SIGTERM");
  assert.equal((await second.exited).code, 0);
});
