import assert from "node:assert/strict";
import { after, test } from "node:test";
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { agentAuthProvider } from "../../src/mcp/index.ts";
import { startExampleMcpServer } from "../../src/mcp/server/example-server.ts";
import { REGISTRATION_SUBJECT } from "../../src/oauth/index.ts";
import { openVault } from "../../src/vault/index.ts";
import { tokenRequest } from "../support/authorize.ts";
import { type CliResult, runCli, startCli } from "../support/cli.ts";
import { useIdp } from "../support/idp.ts";
import { scriptedServer } from "../support/scripted-server.ts";
import { tempDir } from "../support/tmp.ts";

const idp = await useIdp();
const server = await startExampleMcpServer({ issuer: idp.issuer });
after(() => server.close());

/** `agentauth mcp login`, with the test as the person: it opens the printed URL; the embedded server auto-approves. */
async function mcpLogin(
  env: NodeJS.ProcessEnv,
  extra: string[] = [],
): Promise<{ result: CliResult; url: URL }> {
  const login = startCli(["mcp", "login", server.url, ...extra], env);
  const [, href] = await login.waitFor(
    "stderr",
    /Open this URL in your browser to sign in to \S+:\n\n {2}(\S+)\n/,
  );
  const url = new URL(href ?? "");
  const page = await fetch(url);
  await page.arrayBuffer();
  return { result: await login.exited, url };
}

async function stored(home: string) {
  const vault = openVault({ env: { AGENTAUTH_HOME: home } });
  try {
    const [summary] = await vault.list({ resource: server.url });
    assert.ok(summary, "a credential for the server");
    const record = await vault.getById(summary.id);
    assert.ok(record);
    return record;
  } finally {
    await vault.close();
  }
}

function assertNoToken(outputs: CliResult[], secrets: (string | undefined)[]): void {
  for (const output of outputs) {
    for (const secret of secrets) {
      if (!secret) continue;
      for (const needle of [secret, secret.slice(0, 16)]) {
        assert.ok(!output.stdout.includes(needle), "a token leaked to stdout");
        assert.ok(!output.stderr.includes(needle), "a token leaked to stderr");
      }
    }
  }
}

test("[CLI-mcp-login] mcp login discovers the authorization server from the 401, signs in with PKCE and resource = the server URL, stores the tokens; a real MCP client then uses them", {
  timeout: 60_000,
}, async (t) => {
  const home = tempDir();
  const env = { AGENTAUTH_HOME: home };
  const before = await runCli(["mcp", "status", server.url], env);
  assert.equal(before.code, 3, before.stderr);
  assert.match(before.stdout, /^Not signed in to http:\/\/127\.0\.0\.1:\d+\/mcp: /);
  assert.match(before.stdout, /Run 'agentauth mcp login http:\/\/127\.0\.0\.1:\d+\/mcp'/);

  const { result, url } = await mcpLogin(env);
  assert.equal(result.code, 0, result.stderr);
  assert.equal(`${url.origin}${url.pathname}`, `${idp.issuer}/auth`);
  assert.equal(url.searchParams.get("resource"), server.url);
  assert.equal(url.searchParams.get("code_challenge_method"), "S256");
  assert.deepEqual(url.searchParams.get("scope")?.split(" ").sort(), ["offline_access", "read"]);
  const clientId = url.searchParams.get("client_id");
  assert.ok(clientId && clientId !== "agentauth-cli", "registered dynamically without --client-id");
  assert.match(
    result.stdout,
    /^Signed in to http:\/\/127\.0\.0\.1:\d+\/mcp as default at http:\/\/127\.0\.0\.1:\d+; the server accepted the token\.\n/,
  );

  const record = await stored(home);
  assert.equal(record.issuer, idp.issuer);
  assert.equal(record.subject, "default", "no ID token: the subject agentauth login would use");
  assert.equal(record.clientId, clientId);
  assert.ok(record.tokens.refreshToken, "offline_access was asked for");

  const status = await runCli(["mcp", "status", server.url], env);
  assert.equal(status.code, 0, status.stderr);
  assert.match(status.stdout, /^Signed in to \S+ as default at http:\/\/127\.0\.0\.1:\d+\n/);
  assert.match(status.stdout, /scopes: read\b/);
  assert.match(
    status.stdout,
    /access token: expires \d{4}-\d\d-\d\dT[\d:.]+Z; refresh token: held/,
  );
  assert.ok(status.stdout.includes(`vault id: ${record.id}`));

  const json = await runCli(["mcp", "status", server.url, "--json"], env);
  assert.equal(json.code, 0, json.stderr);
  const parsed = JSON.parse(json.stdout);
  assert.equal(parsed.server, server.url);
  assert.equal(parsed.signedIn, true);
  assert.equal(parsed.credentials.length, 1);
  const [view] = parsed.credentials;
  assert.equal(view.id, record.id);
  assert.equal(view.subject, "default");
  assert.equal(view.issuer, idp.issuer);
  assert.equal(view.clientId, clientId);
  assert.equal(view.refreshToken, true);
  assert.equal(view.expired, false);
  assert.equal(view.expiresAt, new Date(record.expiresAt ?? 0).toISOString());
  assert.ok(!("tokens" in view) && !("accessToken" in view));

  // What the CLI stored is what a program on this machine uses: the official client, agentAuthProvider, same vault.
  const vault = openVault({ env });
  t.after(() => vault.close());
  const provider = agentAuthProvider({ serverUrl: server.url, store: vault, subject: "default" });
  const client = new Client({ name: "agentauth-test", version: "1.0.0" });
  // Unknown issuer until the first 401 names it: the provider learns it and finds the stored credential.
  await client.connect(
    new StreamableHTTPClientTransport(new URL(server.url), {
      authProvider: provider,
      fetch: provider.fetch,
    }),
  );
  t.after(() => client.close());
  const answer = await client.callTool({ name: "whoami", arguments: {} });
  const seen = JSON.parse((answer.content as { text: string }[])[0]?.text ?? "{}");
  assert.equal(seen.subject, "alice", "the server sees the signed-in user");
  assert.ok(seen.scopes.includes("read"));

  assertNoToken(
    [before, result, status, json],
    [record.tokens.accessToken?.reveal(), record.tokens.refreshToken?.reveal()],
  );
});

test("[CLI-mcp-login-options] --subject, --client-id and --scope: a pre-registered client, the named subject, and the step-up tool's scope granted up front", {
  timeout: 60_000,
}, async () => {
  const home = tempDir();
  const env = { AGENTAUTH_HOME: home };
  const { result, url } = await mcpLogin(env, [
    "--subject",
    "work",
    "--client-id",
    "agentauth-cli",
    "--scope",
    "read write",
    "--json",
  ]);
  assert.equal(result.code, 0, result.stderr);
  assert.equal(url.searchParams.get("client_id"), "agentauth-cli");
  assert.deepEqual(url.searchParams.get("scope")?.split(" ").sort(), [
    "offline_access",
    "read",
    "write",
  ]);
  const out = JSON.parse(result.stdout);
  assert.equal(out.server, server.url);
  assert.equal(out.signedIn, true);
  assert.equal(out.credential.subject, "work");
  assert.equal(out.credential.clientId, "agentauth-cli");
  assert.ok(out.credential.scopes.includes("write"));
  const record = await stored(home);
  assert.equal(record.subject, "work");
  assertNoToken(
    [result],
    [record.tokens.accessToken?.reveal(), record.tokens.refreshToken?.reveal()],
  );

  // --subject filters status: another subject is not signed in.
  const other = await runCli(["mcp", "status", server.url, "--subject", "someone-else"], env);
  assert.equal(other.code, 3);
  assert.match(other.stdout, /Not signed in to \S+ as someone-else/);
});

test("[CLI-mcp-logout] mcp logout revokes at the authorization server (the old refresh token is refused afterwards), deletes, and is idempotent", {
  timeout: 60_000,
}, async () => {
  const home = tempDir();
  const env = { AGENTAUTH_HOME: home };
  const { result } = await mcpLogin(env);
  assert.equal(result.code, 0, result.stderr);
  const record = await stored(home);
  const refreshToken = record.tokens.refreshToken?.reveal();
  assert.ok(refreshToken);
  // The control, signed in the same way and never signed out: the same refresh request succeeds.
  const controlHome = tempDir();
  assert.equal((await mcpLogin({ AGENTAUTH_HOME: controlHome })).result.code, 0);
  const control = await stored(controlHome);

  const out = await runCli(["mcp", "logout", server.url], env);
  assert.equal(out.code, 0, out.stderr);
  assert.match(
    out.stdout,
    /^Signed out of http:\/\/127\.0\.0\.1:\d+\/mcp as default: revoked at http:\/\/127\.0\.0\.1:\d+ and deleted\.\n$/,
  );

  const refresh = await tokenRequest(idp.issuer, {
    grant_type: "refresh_token",
    refresh_token: refreshToken,
    client_id: record.clientId,
  });
  assert.equal(refresh.status, 400, JSON.stringify(refresh.body));
  assert.equal(refresh.body.error, "invalid_grant");
  const live = await tokenRequest(idp.issuer, {
    grant_type: "refresh_token",
    refresh_token: control.tokens.refreshToken?.reveal() ?? "",
    client_id: control.clientId,
  });
  assert.equal(live.status, 200, JSON.stringify(live.body));

  const again = await runCli(["mcp", "logout", server.url], env);
  assert.equal(again.code, 0, again.stderr);
  assert.match(again.stdout, /^Not signed in to \S+; nothing to sign out of\.\n$/);
  const againJson = await runCli(["mcp", "logout", server.url, "--json"], env);
  assert.equal(againJson.code, 0);
  assert.deepEqual(JSON.parse(againJson.stdout), { server: server.url, credentials: [] });

  const status = await runCli(["mcp", "status", server.url, "--json"], env);
  assert.equal(status.code, 3);
  assert.deepEqual(JSON.parse(status.stdout), {
    server: server.url,
    signedIn: false,
    credentials: [],
  });
  assertNoToken([out, again, status], [refreshToken, record.tokens.accessToken?.reveal()]);
});

test("[CLI-mcp-logout] --json reports what was revoked", { timeout: 60_000 }, async () => {
  const home = tempDir();
  const env = { AGENTAUTH_HOME: home };
  assert.equal((await mcpLogin(env)).result.code, 0);
  const record = await stored(home);
  const out = await runCli(["mcp", "logout", server.url, "--json"], env);
  assert.equal(out.code, 0, out.stderr);
  assert.deepEqual(JSON.parse(out.stdout), {
    server: server.url,
    credentials: [
      { id: record.id, subject: "default", issuer: idp.issuer, revoked: true, deleted: true },
    ],
  });
});

test("[CLI-mcp-login-device] --device signs in with the device flow (RFC 8628): the URL and code are printed, the resource is bound, the server accepts the token", {
  timeout: 60_000,
}, async () => {
  const home = tempDir();
  const env = { AGENTAUTH_HOME: home };
  const login = startCli(["mcp", "login", server.url, "--device"], env);
  const [complete] = await login.waitFor(
    "stderr",
    /http:\/\/127\.0\.0\.1:\d+\/device\?user_code=[A-Z]{4}-[A-Z]{4}/,
  );
  const userCode = new URL(complete).searchParams.get("user_code");
  assert.ok(login.output().stderr.includes(`and enter the code\n\n  ${userCode}\n`));
  assert.ok(!login.output().stderr.includes("Open this URL in your browser"), "no browser flow");
  // RFC 8628 §5.4: the prompt names the authorization server's host.
  assert.match(
    login.output().stderr,
    /To sign in to .* \(authorization server 127\.0\.0\.1:\d+\), open/,
  );
  await (await fetch(complete)).arrayBuffer();
  const result = await login.exited;
  assert.equal(result.code, 0, result.stderr);
  assert.match(result.stdout, /the server accepted the token\.\n/);
  const record = await stored(home);
  assert.equal(record.resource, server.url);
  assert.ok(record.tokens.refreshToken);
  assertNoToken(
    [result],
    [record.tokens.accessToken?.reveal(), record.tokens.refreshToken?.reveal()],
  );
});

test("[CLI-mcp-login-token-refused] a server that refuses the token it just had issued: exit 1, mcp_token_refused with its challenge, the credential kept", {
  timeout: 60_000,
}, async () => {
  const refusing = await scriptedServer({
    "/mcp": (req, _body, origin) => ({
      status: 401,
      headers: {
        "www-authenticate": req.headers.authorization
          ? `Bearer error="invalid_token", error_description="wrong audience", resource_metadata="${origin}/.well-known/oauth-protected-resource/mcp"`
          : `Bearer resource_metadata="${origin}/.well-known/oauth-protected-resource/mcp", scope="read"`,
      },
    }),
    "/.well-known/oauth-protected-resource/mcp": (_req, _body, origin) => ({
      body: { resource: `${origin}/mcp`, authorization_servers: [idp.issuer] },
    }),
  });
  const home = tempDir();
  const env = { AGENTAUTH_HOME: home };
  const login = startCli(["mcp", "login", `${refusing.origin}/mcp`, "--json"], env);
  const [, href] = await login.waitFor(
    "stderr",
    /in your browser to sign in to \S+:\n\n {2}(\S+)\n/,
  );
  await (await fetch(href ?? "")).arrayBuffer();
  const result = await login.exited;
  assert.equal(result.code, 1, result.stderr);
  const { error } = JSON.parse(result.stdout);
  assert.equal(error.code, "mcp_token_refused");
  assert.match(error.message, /refused the new token \(HTTP 401 invalid_token: wrong audience\)/);
  // No "run it again in a minute": a verifier fetches an authorization server's new signing keys at once.
  assert.match(error.message, /; check that the server trusts that authorization server\.$/);
  const status = await runCli(["mcp", "status", `${refusing.origin}/mcp`], env);
  assert.equal(status.code, 0, "the credential is kept: status shows it");
});

test("[CLI-mcp-login-one-registration] mcp login twice over one vault registers one client; logout keeps the registration; vault list shows it as a client registration without its secrets; vault delete removes it", {
  timeout: 90_000,
}, async () => {
  const home = tempDir();
  const env = { AGENTAUTH_HOME: home };
  const before = idp.memory().registrations;
  const first = await mcpLogin(env);
  assert.equal(first.result.code, 0, first.result.stderr);
  const second = await mcpLogin(env);
  assert.equal(second.result.code, 0, second.result.stderr);
  assert.equal(idp.memory().registrations, before + 1, "one registration at the server");
  const clientId = first.url.searchParams.get("client_id");
  assert.ok(clientId);
  assert.equal(second.url.searchParams.get("client_id"), clientId);

  const logout = await runCli(["mcp", "logout", server.url], env);
  assert.equal(logout.code, 0, logout.stderr);
  const vault = openVault({ env });
  let registration: Awaited<ReturnType<typeof vault.getById>>;
  try {
    const [summary] = await vault.list({ subject: REGISTRATION_SUBJECT });
    assert.ok(summary, "the registration outlives the sign-out");
    registration = await vault.getById(summary.id);
  } finally {
    await vault.close();
  }
  assert.equal(registration?.clientId, clientId);
  const rat = registration?.tokens.accessToken?.reveal();
  assert.ok(rat, "the registration access token is kept, sealed");

  const table = await runCli(["vault", "list"], env);
  assert.equal(table.code, 0, table.stderr);
  // One short line after the table (issue 21), not a 200-column row with its URN.
  assert.match(table.stdout, /client registration \(agentauth CLI\) at http:\/\/127\.0\.0\.1:\d+/);
  assert.doesNotMatch(table.stdout, /urn:agentauth:registration:[0-9a-f]+/);
  const json = await runCli(["vault", "list", "--json"], env);
  assert.equal(json.code, 0, json.stderr);
  assertNoToken([first.result, second.result, logout, table, json], [rat]);

  const third = await mcpLogin(env);
  assert.equal(third.result.code, 0, third.result.stderr);
  assert.equal(third.url.searchParams.get("client_id"), clientId, "the kept registration is used");
  assert.equal(idp.memory().registrations, before + 1);

  // Not a sign-in: `agentauth token` refuses it rather than printing the registration access token.
  const token = await runCli(["token", registration?.id ?? ""], env);
  assert.notEqual(token.code, 0);
  assert.match(token.stderr, /is a client registration agentauth keeps/);
  assertNoToken([token], [rat]);

  const deleted = await runCli(["vault", "delete", registration?.id ?? ""], env);
  assert.equal(deleted.code, 0, deleted.stderr);
  const fourth = await mcpLogin(env);
  assert.equal(fourth.result.code, 0, fourth.result.stderr);
  assert.notEqual(fourth.url.searchParams.get("client_id"), clientId);
  assert.equal(idp.memory().registrations, before + 2);

  // `vault revoke` on a registration: an RFC 7592 delete at the server (the embedded one has no such endpoint and
  // says 404), then it is forgotten; never a credential's revocation.
  const revoked = await runCli(["vault", "revoke", registration?.id ?? "", "--json"], env);
  assert.equal(revoked.code, 0, revoked.stderr);
  assert.deepEqual(JSON.parse(revoked.stdout), {
    id: registration?.id,
    revoked: false,
    deleted: true,
  });
  const left = await runCli(["vault", "list", "--json"], env);
  assert.ok(!left.stdout.includes(REGISTRATION_SUBJECT), "the registration is gone");
});

test("[CLI-mcp-login-reserved-subject] --subject in agentauth's reserved namespace is refused (invalid_subject), nothing is stored", {
  timeout: 30_000,
}, async () => {
  const home = tempDir();
  const env = { AGENTAUTH_HOME: home };
  const out = await runCli(["mcp", "login", server.url, "--subject", REGISTRATION_SUBJECT], env);
  assert.notEqual(out.code, 0);
  assert.match(out.stderr, /agentauth's own vault records; choose another subject/);
  const list = await runCli(["vault", "list", "--json"], env);
  assert.deepEqual(list.code === 0 ? JSON.parse(list.stdout) : [], []);
});
