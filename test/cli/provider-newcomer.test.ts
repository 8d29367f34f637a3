/**
 * Issue 21, traps 3 and 4: provider logins the CLI already knows will fail are refused before anything starts,
 * with the fix; `--provider generic` takes plain flags, asks for the documented default scope, and a refusal of
 * the request is reported as the server's refusal, not as the person's.
 */

import assert from "node:assert/strict";
import { test } from "node:test";
import { runCli, startCli } from "../support/cli.ts";
import { useIdp } from "../support/idp.ts";
import { asMetadata, scriptedServer } from "../support/scripted-server.ts";
import { tempDir } from "../support/tmp.ts";

const idp = await useIdp();

function jsonError(stdout: string): { code: string; message: string } {
  return (JSON.parse(stdout) as { error: { code: string; message: string } }).error;
}

test("[CLI-provider-secret-needed] slack without a secret, and github --browser without one, are refused up front with the fix (no URL printed, nothing listens)", {
  // Before the fix each of these started a login that waits for a person: it is cut short here.
  timeout: 30_000,
}, async () => {
  const home = tempDir();
  const slack = await runCli(["login", "--provider", "slack", "--client-id", "123.456", "--json"], {
    AGENTAUTH_HOME: home,
  });
  assert.equal(slack.code, 2, slack.stderr);
  const slackError = jsonError(slack.stdout);
  assert.equal(slackError.code, "provider_client_secret_missing");
  assert.match(slackError.message, /Slack/);
  assert.match(slackError.message, /--client-secret-env/);
  assert.match(slackError.message, /HTTPS/, "the redirect it refuses is named too");
  assert.doesNotMatch(slack.stderr, /https?:\/\/\S+\?/, "no authorization URL was printed");

  const github = await runCli(
    ["login", "--provider", "github", "--client-id", "Iv1.0123456789abcdef", "--browser"],
    { AGENTAUTH_HOME: home },
  );
  assert.equal(github.code, 2, github.stderr);
  assert.match(github.stderr, /client secret/);
  assert.match(github.stderr, /--client-secret-env VAR/);
  assert.match(github.stderr, /--device/, "the flow that needs no secret is offered");
});

test("[CLI-generic-flags] --provider generic: with neither server option it says which to give (not 'not both'); --provider-host points to --issuer; --issuer URL signs in", {
  timeout: 60_000,
}, async () => {
  const home = tempDir();
  const neither = await runCli(["login", "--provider", "generic", "--client-id", "agentauth-cli"], {
    AGENTAUTH_HOME: home,
  });
  assert.equal(neither.code, 2, neither.stderr);
  assert.doesNotMatch(neither.stderr, /not both/);
  assert.match(neither.stderr, /--issuer URL/);
  assert.match(neither.stderr, /--provider-option endpoints=/);

  const host = await runCli(
    ["login", "--provider", "generic", "--client-id", "x", "--provider-host", idp.issuer],
    { AGENTAUTH_HOME: home },
  );
  assert.equal(host.code, 2, host.stderr);
  assert.match(host.stderr, /--issuer/);
  assert.notEqual(host.stderr, neither.stderr);

  const login = startCli(
    [
      "login",
      "--provider",
      "generic",
      "--issuer",
      idp.issuer,
      "--client-id",
      "agentauth-cli",
      "--device",
      "--json",
    ],
    { AGENTAUTH_HOME: home },
  );
  const [url] = await login.waitFor("stderr", /http:\/\/127\.0\.0\.1:\d+\/device\?user_code=\S+/);
  await (await fetch(url)).arrayBuffer();
  const result = await login.exited;
  assert.equal(result.code, 0, result.stderr);
  const record = JSON.parse(result.stdout) as { scopes: string[]; provider?: { name: string } };
  // The documented default (as for --issuer), not the server's fallback for a request without a scope (openid).
  assert.deepEqual(
    [...record.scopes].sort(),
    ["email", "offline_access", "openid", "profile"].sort(),
    result.stdout,
  );
});

test("[CLI-access-denied-request-refused] access_denied that the server explains is reported as the server refusing the request, quoting it, not as the person declining", {
  timeout: 60_000,
}, async () => {
  const server = await scriptedServer();
  server.routes.set("/.well-known/oauth-authorization-server", (_req, _body, origin) => ({
    body: asMetadata(origin, { authorization_response_iss_parameter_supported: true }),
  }));
  server.routes.set("/auth", (req, _body, origin) => {
    const asked = new URL(req.url ?? "/", origin).searchParams;
    const back = new URL(asked.get("redirect_uri") ?? "");
    back.searchParams.set("error", "access_denied");
    back.searchParams.set("error_description", "no scope was granted");
    back.searchParams.set("state", asked.get("state") ?? "");
    back.searchParams.set("iss", origin);
    return { status: 302, headers: { location: back.href } };
  });
  const login = startCli(
    [
      "login",
      "--provider",
      "generic",
      "--issuer",
      server.origin,
      "--client-id",
      "app",
      "--browser",
    ],
    { AGENTAUTH_HOME: tempDir() },
  );
  const [url] = await login.waitFor("stderr", /http:\/\/127\.0\.0\.1:\d+\/auth\?\S+/);
  await (await fetch(url)).arrayBuffer();
  const result = await login.exited;
  assert.equal(result.code, 1, result.stderr);
  assert.match(result.stderr, /no scope was granted/, "the server's own reason");
  assert.match(result.stderr, /refused the request/);
  assert.doesNotMatch(result.stderr, /approve the request to continue/);
  assert.match(result.stderr, /\[access_denied\]/);
});
