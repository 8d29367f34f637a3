/**
 * The mistakes a newcomer makes following docs/mcp.md, against the real example MCP server and the embedded
 * authorization server: each one an error that says what to do next, in text and in JSON.
 */

import assert from "node:assert/strict";
import { after, test } from "node:test";
import { startExampleMcpServer } from "../../src/mcp/server/example-server.ts";
import { type CliResult, runCli } from "../support/cli.ts";
import { closedPort } from "../support/closed-port.ts";
import { useIdp } from "../support/idp.ts";
import { tempDir } from "../support/tmp.ts";

const idp = await useIdp();
const server = await startExampleMcpServer({ issuer: idp.issuer });
after(() => server.close());

function env() {
  return { AGENTAUTH_HOME: tempDir() };
}

function jsonError(result: CliResult): { code: string; message: string } {
  assert.equal(result.stderr, "", "under --json the error is on stdout only");
  return (JSON.parse(result.stdout) as { error: { code: string; message: string } }).error;
}

test("[CLI-mcp-newcomer-wrong-url] login at a path the server does not name, or at localhost for a server that names 127.0.0.1: exit 1 with the URL the server names and the command to run", {
  timeout: 60_000,
}, async () => {
  const named = server.url; // http://127.0.0.1:N/mcp, what the server's challenge names
  const wrongPath = named.replace(/\/mcp$/, "/wrong");
  const text = await runCli(["mcp", "login", wrongPath], env());
  assert.equal(text.code, 1, text.stderr);
  assert.match(text.stderr, /\[resource_mismatch\]\n$/);
  assert.ok(
    text.stderr.includes(`agentauth mcp login ${named}`),
    `names the server's own URL: ${text.stderr}`,
  );
  const json = jsonError(await runCli(["mcp", "login", wrongPath, "--json"], env()));
  assert.equal(json.code, "resource_mismatch");
  assert.ok(json.message.includes(`agentauth mcp login ${named}`), json.message);

  const viaLocalhost = named.replace("127.0.0.1", "localhost");
  const cross = await runCli(["mcp", "login", viaLocalhost], env());
  assert.equal(cross.code, 1, cross.stderr);
  assert.match(cross.stderr, /\[resource_metadata_cross_origin\]\n$/);
  assert.ok(
    cross.stderr.includes(`agentauth mcp login ${named}`),
    `names the server's own URL: ${cross.stderr}`,
  );
});

test("[CLI-mcp-newcomer-as-down] the MCP server is up but its authorization server is not: the message says it is the authorization server, text and JSON", {
  timeout: 60_000,
}, async () => {
  const orphan = await startExampleMcpServer({ issuer: `http://127.0.0.1:${await closedPort()}` });
  try {
    const text = await runCli(["mcp", "login", orphan.url], env());
    assert.equal(text.code, 1, text.stderr);
    assert.match(text.stderr, /authorization server/);
    assert.match(text.stderr, /\[network_error\]\n$/);
    const json = jsonError(await runCli(["mcp", "login", orphan.url, "--json"], env()));
    assert.equal(json.code, "network_error");
    assert.match(json.message, /authorization server/);
  } finally {
    await orphan.close();
  }
});

test("[CLI-mcp-newcomer-input] a --scope that is not RFC 6749 scope names and a typo'd flag are usage errors (exit 2) that say what is accepted; the URL example is said once", async () => {
  const scope = await runCli(["mcp", "login", server.url, "--scope", 'read "write'], env());
  assert.equal(scope.code, 2, scope.stderr);
  assert.match(scope.stderr, /--scope takes scope names/);
  const typo = await runCli(["mcp", "login", server.url, "--scpoe", "read"], env());
  assert.equal(typo.code, 2, typo.stderr);
  assert.match(typo.stderr, /unknown option '--scpoe' for 'agentauth mcp login'/);
  assert.match(typo.stderr, /did you mean --scope\?/);
  const typoJson = jsonError(
    await runCli(["mcp", "status", server.url, "--jsno", "--json"], env()),
  );
  assert.equal(typoJson.code, "usage");
  assert.match(typoJson.message, /unknown option '--jsno' for 'agentauth mcp status'.*--json/);
  const bare = await runCli(["mcp", "login", "127.0.0.1:9500/mcp"], env());
  assert.equal(bare.code, 2, bare.stderr);
  assert.equal(bare.stderr.split("e.g. https://mcp.example.com/mcp").length - 1, 1, bare.stderr);
});

test("[CLI-mcp-newcomer-subject] status and logout for a --subject the vault holds nothing for keep the subject in what they say and in the login command they suggest", async () => {
  const home = env();
  const status = await runCli(["mcp", "status", server.url, "--subject", "bob"], home);
  assert.equal(status.code, 3, status.stderr);
  assert.ok(
    status.stdout.includes(`Run 'agentauth mcp login ${server.url} --subject bob'`),
    status.stdout,
  );
  const spaced = await runCli(["mcp", "status", server.url, "--subject", "bob smith"], home);
  assert.ok(spaced.stdout.includes(`--subject 'bob smith'`), spaced.stdout);
  const logout = await runCli(["mcp", "logout", server.url, "--subject", "bob"], home);
  assert.equal(logout.code, 0, logout.stderr);
  assert.match(logout.stdout, /^Not signed in to \S+ as bob; nothing to sign out of\.\n$/);
});
