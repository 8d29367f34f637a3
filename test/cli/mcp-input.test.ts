import assert from "node:assert/strict";
import { test } from "node:test";
import { Secret } from "../../src/core/secret.ts";
import { openVault } from "../../src/vault/index.ts";
import { type CliResult, runCli, startCli } from "../support/cli.ts";
import { closedPort } from "../support/closed-port.ts";
import { asMetadata, type Route, scriptedServer } from "../support/scripted-server.ts";
import { tempDir } from "../support/tmp.ts";

// Every terminal escape sequence starts with a C0/C1 control character; bidi overrides reorder what a person reads.
// biome-ignore lint/suspicious/noControlCharactersInRegex: detecting them is the point.
const UNSAFE = /[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/;
const ESC = "\u001b";
const STACK_FRAME = /^\s+at /m;

function env() {
  return { AGENTAUTH_HOME: tempDir() };
}

function assertUsage(result: CliResult, mentions: RegExp): void {
  assert.equal(result.code, 2, result.stderr);
  assert.equal(result.stdout, "");
  assert.match(result.stderr, /^agentauth: /);
  assert.match(result.stderr, mentions);
  assert.doesNotMatch(result.stderr, STACK_FRAME);
}

function jsonError(result: CliResult): { code: string; message: string } {
  assert.equal(result.stderr, "", "under --json the error is on stdout only");
  const parsed = JSON.parse(result.stdout) as { error: { code: string; message: string } };
  assert.equal(typeof parsed.error.message, "string");
  return parsed.error;
}

function assertClean(result: CliResult): void {
  const printed = result.stdout + result.stderr;
  assert.doesNotMatch(printed, UNSAFE, JSON.stringify(printed));
  assert.doesNotMatch(printed, STACK_FRAME);
}

test("[CLI-mcp-input] a missing, non-http, credential- or query-carrying or plain-http non-loopback server URL is a usage error (exit 2) that never echoes the URL", async () => {
  for (const sub of ["login", "status", "logout"]) {
    assertUsage(
      await runCli(["mcp", sub], env()),
      new RegExp(`mcp ${sub} needs the MCP server's URL`),
    );
  }
  assertUsage(
    await runCli(["mcp", "login", "ftp://127.0.0.1/mcp"], env()),
    /absolute http\(s\) URL/,
  );
  assertUsage(await runCli(["mcp", "status", "not a url"], env()), /absolute http\(s\) URL/);
  assertUsage(
    await runCli(["mcp", "login", "javascript:alert(1)"], env()),
    /absolute http\(s\) URL/,
  );
  const withPassword = await runCli(
    ["mcp", "login", "https://alice:hunter2-secret@mcp.example.test/mcp"],
    env(),
  );
  assertUsage(withPassword, /must not carry a user name or password/);
  assert.ok(!withPassword.stderr.includes("hunter2-secret"), "the password is not echoed");
  assert.ok(!withPassword.stderr.includes("alice"), "nor the user name");
  const withQuery = await runCli(
    ["mcp", "status", "https://mcp.example.test/mcp?api_key=sk-query-secret"],
    env(),
  );
  assertUsage(withQuery, /must not carry a query/);
  assert.ok(!withQuery.stderr.includes("sk-query-secret"), "the query is not echoed");
  assertUsage(
    await runCli(["mcp", "logout", "http://mcp.example.test/mcp"], env()),
    /must use https:\/\//,
  );
  assertUsage(
    await runCli(["mcp", "login", "http://127.0.0.1:1/mcp", "http://127.0.0.1:2/mcp"], env()),
    /takes one <server-url>, not 2/,
  );
  assertUsage(await runCli(["mcp", "bogus"], env()), /unknown mcp command 'bogus'/);
  assertUsage(
    await runCli(["mcp"], env()),
    /needs a subcommand: login, status, logout, proxy, example-server/,
  );
  assertUsage(
    await runCli(["mcp", "status", "http://127.0.0.1:1/mcp", "--scope", "read"], env()),
    /--scope goes with 'mcp login'/,
  );
  assertUsage(
    await runCli(["mcp", "login", "http://127.0.0.1:1/mcp", "--subject", " "], env()),
    /--subject needs a value/,
  );
});

test("[CLI-mcp-input] under --json a usage error is JSON on stdout with a stable code", async () => {
  const cases: [string[], string][] = [
    [["mcp", "login", "--json"], "usage"],
    [["mcp", "status", "ftp://x/mcp", "--json"], "invalid_server_url"],
    [
      ["mcp", "login", "https://u:secret-pw@mcp.example.test/mcp", "--json"],
      "server_url_credentials",
    ],
    [["mcp", "logout", "http://mcp.example.test/mcp", "--json"], "insecure_server_url"],
    [["mcp", "login", "https://mcp.example.test/mcp?secret-pw", "--json"], "server_url_query"],
  ];
  for (const [args, code] of cases) {
    const result = await runCli(args, env());
    assert.equal(result.code, 2, result.stdout);
    assert.equal(jsonError(result).code, code, args.join(" "));
    assert.ok(!result.stdout.includes("secret-pw"));
  }
});

test("[CLI-mcp-login-unreachable] an unreachable MCP server: exit 1, typed mcp_server_unreachable, text and JSON", async () => {
  const url = `http://127.0.0.1:${await closedPort()}/mcp`;
  const text = await runCli(["mcp", "login", url], env());
  assert.equal(text.code, 1, text.stderr);
  assert.match(
    text.stderr,
    /^agentauth: Could not reach the MCP server at http:\/\/127\.0\.0\.1:\d+: nothing is listening/,
  );
  assert.match(text.stderr, /\[mcp_server_unreachable\]\n$/);
  assertClean(text);
  const json = await runCli(["mcp", "login", url, "--json"], env());
  assert.equal(json.code, 1);
  assert.equal(jsonError(json).code, "mcp_server_unreachable");
});

test("[CLI-mcp-login-not-protected] a server that answers without a 401 has nothing to sign in to; a 404 says to check the URL", async () => {
  const open = await scriptedServer({
    "/mcp": () => ({ body: { jsonrpc: "2.0", id: 1, result: {} } }),
  });
  const result = await runCli(["mcp", "login", `${open.origin}/mcp`], env());
  assert.equal(result.code, 1, result.stderr);
  assert.match(
    result.stderr,
    /answered without asking for a sign-in \(HTTP 200\): it is not protected, so there is nothing to sign in to/,
  );
  assert.match(result.stderr, /\[mcp_server_not_protected\]/);
  const json = await runCli(["mcp", "login", `${open.origin}/mcp`, "--json"], env());
  assert.equal(jsonError(json).code, "mcp_server_not_protected");

  const missing = await runCli(["mcp", "login", `${open.origin}/not-mcp`, "--json"], env());
  assert.equal(missing.code, 1);
  const error = jsonError(missing);
  assert.equal(error.code, "mcp_probe_failed");
  assert.match(error.message, /HTTP 404 .*MCP endpoint/);
});

/** An MCP server and its authorization server in one scripted origin, with `as` overriding the AS metadata. */
async function hostileStack(
  as: (origin: string) => Record<string, unknown>,
  prm: Record<string, unknown> = {},
) {
  const routes: Record<string, Route> = {
    "/mcp": (_req, _body, origin) => ({
      status: 401,
      headers: {
        "www-authenticate": `Bearer resource_metadata="${origin}/.well-known/oauth-protected-resource/mcp", scope="read"`,
      },
      body: { error: `unauthorized${ESC}[2J` },
    }),
    "/.well-known/oauth-protected-resource/mcp": (_req, _body, origin) => ({
      body: { resource: `${origin}/mcp`, authorization_servers: [origin], ...prm },
    }),
    "/.well-known/oauth-authorization-server": (_req, _body, origin) => ({
      body: asMetadata(origin, as(origin)),
    }),
  };
  return scriptedServer(routes);
}

test("[CLI-mcp-peer-text] escape sequences in the authorization server's metadata never reach the terminal", {
  timeout: 30_000,
}, async (t) => {
  // An issuer that does not match (and carries an OSC 8 hyperlink and a title change): refused, and said cleanly.
  const wrongIssuer = await hostileStack(() => ({
    issuer: `http://127.0.0.1:1${ESC}]8;;http://evil.test${ESC}\\${ESC}]0;pwned\u0007\u202e`,
  }));
  const refused = await runCli(["mcp", "login", `${wrongIssuer.origin}/mcp`], env());
  assert.equal(refused.code, 1, refused.stderr);
  t.diagnostic(`refused: ${JSON.stringify(refused.stderr)}`);
  assertClean(refused);
  const refusedJson = await runCli(["mcp", "login", `${wrongIssuer.origin}/mcp`, "--json"], env());
  assert.equal(refusedJson.code, 1);
  assert.doesNotMatch(jsonError(refusedJson).message, UNSAFE);

  // Hostile endpoint and scopes: the printed authorization URL is the parsed, escaped one.
  const hostile = await hostileStack(
    (origin) => ({ authorization_endpoint: `${origin}/auth${ESC}[2J\u009b1m` }),
    { scopes_supported: [`read${ESC}[31m`] },
  );
  const login = startCli(
    ["mcp", "login", `${hostile.origin}/mcp`, "--client-id", "cli", "--scope", `read`],
    env(),
  );
  await login.waitFor("stderr", /Open this URL in your browser/);
  await login.waitFor("stderr", /\n {2}\S+\n\n/);
  login.kill("SIGINT");
  const result = await login.exited;
  assert.equal(result.code, 130, result.stderr);
  assertClean(result);
  assert.match(result.stderr, /\/auth%1B\[2J/, "the escape is shown percent-encoded");
});

async function putRecord(
  home: string,
  fields: {
    issuer: string;
    resource: string;
    subject?: string;
    scopes?: string[];
    expiresAt?: number;
    refreshToken?: boolean;
    status?: "active" | "login_required";
  },
) {
  const vault = openVault({ env: { AGENTAUTH_HOME: home } });
  try {
    return await vault.put({
      subject: fields.subject ?? "default",
      issuer: fields.issuer,
      resource: fields.resource,
      clientId: "cli",
      tokens: {
        accessToken: new Secret("at-secret-0123456789abcdef"),
        ...(fields.refreshToken === false
          ? {}
          : { refreshToken: new Secret("rt-secret-0123456789abcdef") }),
      },
      expiresAt: fields.expiresAt ?? Date.now() + 3_600_000,
      scopes: fields.scopes ?? ["read"],
      account: {},
      status: fields.status ?? "active",
    });
  } finally {
    await vault.close();
  }
}

test("[CLI-mcp-status-peer-text] status reads the vault only (an unreachable issuer is fine) and prints what a peer sent without control characters", async () => {
  const home = tempDir();
  const resource = "https://mcp.example.test/mcp";
  await putRecord(home, {
    issuer: `http://127.0.0.1:${await closedPort()}${ESC}]0;pwned\u0007`,
    resource,
    subject: `alice${ESC}[2J\u202e`,
    scopes: [`read${ESC}[31m`, "write"],
  });
  const text = await runCli(["mcp", "status", resource], { AGENTAUTH_HOME: home });
  assert.equal(text.code, 0, text.stderr);
  assertClean(text);
  assert.match(text.stdout, /^Signed in to https:\/\/mcp\.example\.test\/mcp as alice \[2J at /);
  assert.match(text.stdout, /scopes: read \[31m write\n/);
  const json = await runCli(["mcp", "status", resource, "--json"], { AGENTAUTH_HOME: home });
  assert.equal(json.code, 0);
  assertClean(json);
  const parsed = JSON.parse(json.stdout);
  assert.doesNotMatch(JSON.stringify(parsed.credentials[0].subject), /\\u001b/);
  for (const out of [text, json]) assert.ok(!(out.stdout + out.stderr).includes("secret-0123"));
});

test("[CLI-mcp-logout-no-revocation] an authorization server without a revocation endpoint: the token is forgotten locally, and the output says so", async () => {
  const as = await scriptedServer({
    "/.well-known/oauth-authorization-server": (_req, _body, origin) => ({
      body: asMetadata(origin, { revocation_endpoint: undefined }),
    }),
  });
  const home = tempDir();
  const resource = "https://mcp.example.test/mcp";
  const record = await putRecord(home, { issuer: as.origin, resource });
  const result = await runCli(["mcp", "logout", resource], { AGENTAUTH_HOME: home });
  assert.equal(result.code, 0, result.stderr);
  assert.match(
    result.stdout,
    /has no revocation endpoint; the tokens were only forgotten locally and stay valid there until they expire/,
  );
  const json = await runCli(["mcp", "status", resource, "--json"], { AGENTAUTH_HOME: home });
  assert.equal(json.code, 3);
  assert.deepEqual(JSON.parse(json.stdout).credentials, []);
  assert.ok(!as.requests.some((r) => r.path === "/revoke"), "nothing was sent for revocation");
  assert.ok(record.id);
});

test("[CLI-mcp-logout-failure] a revocation the authorization server refuses (hostile description) keeps the credential, exit 1, said cleanly", async () => {
  const as = await scriptedServer({
    "/.well-known/oauth-authorization-server": (_req, _body, origin) => ({
      body: asMetadata(origin),
    }),
    "/revoke": () => ({
      status: 400,
      body: { error: "invalid_request", error_description: `no${ESC}]0;pwned\u0007 way` },
    }),
  });
  const home = tempDir();
  const resource = "https://mcp.example.test/mcp";
  const record = await putRecord(home, { issuer: as.origin, resource });
  const text = await runCli(["mcp", "logout", resource], { AGENTAUTH_HOME: home });
  assert.equal(text.code, 1, text.stdout);
  assertClean(text);
  assert.match(
    text.stderr,
    new RegExp(`could not revoke ${record.id} at .*The credential is kept`),
  );
  assert.match(text.stderr, new RegExp(`agentauth vault delete ${record.id}`));
  const json = await runCli(["mcp", "logout", resource, "--json"], { AGENTAUTH_HOME: home });
  assert.equal(json.code, 1);
  assertClean(json);
  const parsed = JSON.parse(json.stdout);
  assert.equal(parsed.error.code, "revocation_failed");
  assert.equal(parsed.credentials[0].deleted, false);
  const status = await runCli(["mcp", "status", resource], { AGENTAUTH_HOME: home });
  assert.equal(status.code, 0, "still signed in: nothing was deleted");
  for (const out of [text, json, status]) {
    assert.ok(!(out.stdout + out.stderr).includes("secret-0123"), "no token printed");
  }
});

test("[CLI-mcp-login-no-metadata] a 401 that leads to no usable metadata (none published, or on another origin): exit 1 with a typed code, nothing followed", async () => {
  const server = await scriptedServer({
    "/mcp": () => ({ status: 401 }),
    "/cross": () => ({
      status: 401,
      headers: {
        "www-authenticate":
          'Bearer resource_metadata="http://127.0.0.2:1/.well-known/oauth-protected-resource"',
      },
    }),
  });
  const none = await runCli(["mcp", "login", `${server.origin}/mcp`, "--json"], env());
  assert.equal(none.code, 1);
  // No metadata anywhere: the 2025-03-26 fallback (its default /register) was tried too, and the code says none was found.
  assert.equal(jsonError(none).code, "metadata_not_found");
  assert.ok(
    server.requests.some((r) => r.path === "/.well-known/oauth-protected-resource/mcp"),
    "the path-aware well-known URL was tried",
  );
  const cross = await runCli(["mcp", "login", `${server.origin}/cross`], env());
  assert.equal(cross.code, 1);
  assert.match(
    cross.stderr,
    /another origin; agentauth does not follow it.*\[resource_metadata_cross_origin\]\n$/,
  );
});

test("[CLI-mcp-status-expired] status exits 3 when the stored credential cannot give a token without a new sign-in", async () => {
  const issuer = "https://as.example.test";
  const cases = [
    {
      resource: "https://a.example.test/mcp",
      fields: { expiresAt: Date.now() - 60_000, refreshToken: false },
      says: /^Sign-in expired \(no refresh token\) to .*\n {2}scopes: read\n {2}access token: expired \d{4}-/,
    },
    {
      resource: "https://b.example.test/mcp",
      fields: { status: "login_required" as const },
      says: /^Sign-in expired \(the refresh token was refused\) to /,
    },
  ];
  for (const { resource, fields, says } of cases) {
    const home = tempDir();
    await putRecord(home, { issuer, resource, ...fields });
    const text = await runCli(["mcp", "status", resource], { AGENTAUTH_HOME: home });
    assert.equal(text.code, 3, text.stdout);
    assert.match(text.stdout, says);
    assert.match(text.stdout, /Run 'agentauth mcp login https:\/\/\S+' to sign in again\.\n$/);
    const json = await runCli(["mcp", "status", resource, "--json"], { AGENTAUTH_HOME: home });
    assert.equal(json.code, 3);
    const parsed = JSON.parse(json.stdout);
    assert.equal(parsed.signedIn, false);
    assert.equal(parsed.credentials[0].usable, false);
  }
  // The control: an expired access token with a refresh token held is still signed in (it refreshes on use).
  const home = tempDir();
  const resource = "https://c.example.test/mcp";
  await putRecord(home, { issuer, resource, expiresAt: Date.now() - 60_000 });
  const fine = await runCli(["mcp", "status", resource], { AGENTAUTH_HOME: home });
  assert.equal(fine.code, 0, fine.stdout);
  assert.match(
    fine.stdout,
    /^Signed in to .*\n.*\n {2}access token: expired .*; refresh token: held\n/,
  );
});
