/**
 * Issue 21, trap 6: the wording and small wrongs a newcomer meets in the first hour, each against the real parts
 * (the CLI as a process, the embedded authorization server, the example AHP host, the example RAP tool and a
 * runtime, a real vault).
 */

import assert from "node:assert/strict";
import { join } from "node:path";
import { test } from "node:test";
import { openVault } from "../../src/vault/index.ts";
import { REPO_ROOT, runCli, startCli } from "../support/cli.ts";
import { loginForTest } from "../support/credentials.ts";
import { useIdp } from "../support/idp.ts";
import { tempDir } from "../support/tmp.ts";

const idp = await useIdp();
const port = new URL(idp.issuer).port;

async function ready(args: string[], env: NodeJS.ProcessEnv) {
  const server = startCli(args, env);
  const [line] = await server.waitFor("stdout", /^\{"event":"ready".*\}$/m);
  return { server, ready: JSON.parse(line) as { url: string } };
}

test("[CLI-acp-login-wording] acp login names the agent and the method in plain words: no 'signing in with Sign in', no 'To sign in to Sign in'", {
  timeout: 60_000,
}, async () => {
  const agent = [
    process.execPath,
    join(REPO_ROOT, "src", "cli", "main.ts"),
    "acp",
    "example-agent",
    "--issuer",
    idp.issuer,
  ];
  const login = startCli(["acp", "login", "--", ...agent], { AGENTAUTH_HOME: tempDir() });
  const [, url] = await login.waitFor("stderr", /Open: (\S+)/);
  await (await fetch(url as string)).arrayBuffer();
  const result = await login.exited;
  assert.equal(result.code, 0, result.stderr);
  assert.doesNotMatch(result.stderr, /with Sign in|to Sign in|\(Sign in\)/, result.stderr);
  assert.match(result.stderr, /To sign in to agentauth.example.agent:/);
});

test("[CLI-login-issuer-localhost] login --issuer http://localhost:PORT says the server's issuer is http://127.0.0.1:PORT and to use that", async () => {
  const result = await runCli(["login", "--issuer", `http://localhost:${port}`, "--device"], {
    AGENTAUTH_HOME: tempDir(),
  });
  assert.equal(result.code, 1);
  assert.ok(result.stderr.includes(`http://127.0.0.1:${port}`), result.stderr);
  assert.match(result.stderr, /--issuer http:\/\/127\.0\.0\.1:\d+/);
  assert.match(result.stderr, /\[issuer_mismatch\]/);
});

test("[CLI-ahp-status-hint] ahp status names the real host URL in its hint (no literal <ws-url>); ahp login --stay says it keeps renewing and how to stop", {
  timeout: 90_000,
}, async () => {
  const home = tempDir();
  const host = await ready(
    ["ahp", "host", "serve", "--example", "--issuer", idp.issuer, "--port", "0"],
    { AGENTAUTH_HOME: home },
  );
  const status = await runCli(["ahp", "status", host.ready.url], { AGENTAUTH_HOME: home });
  assert.doesNotMatch(status.stdout + status.stderr, /<ws-url>/);
  assert.ok(status.stdout.includes(`ahp login --resource`), status.stdout);
  assert.ok(status.stdout.includes(host.ready.url), status.stdout);

  const stay = startCli(["ahp", "login", "--stay", host.ready.url], { AGENTAUTH_HOME: home });
  const [url] = await stay.waitFor("stderr", /http:\/\/127\.0\.0\.1:\d+\/device\?user_code=\S+/);
  await (await fetch(url)).arrayBuffer();
  await stay.waitFor("stdout", /Authenticated/);
  const [said] = await stay.waitFor("stderr", /renew[^\n]*\n?[^\n]*Ctrl-C[^\n]*/i);
  assert.match(said, /before (it|they|each) expires?/i);
  stay.kill("SIGINT");
  await stay.exited;
  host.server.kill("SIGINT");
  await host.server.exited;
});

test("[CLI-mcp-status-trailing-slash] mcp status .../mcp/ points to the credential stored for .../mcp", {
  timeout: 60_000,
}, async () => {
  const home = tempDir();
  const store = openVault({ env: { AGENTAUTH_HOME: home } });
  await loginForTest(idp, store, { resource: "http://127.0.0.1:9500/mcp", subject: "alice" });
  await store.close();
  const result = await runCli(["mcp", "status", "http://127.0.0.1:9500/mcp/"], {
    AGENTAUTH_HOME: home,
  });
  assert.equal(result.code, 0, result.stdout);
  assert.match(result.stdout, /kept for http:\/\/127\.0\.0\.1:9500\/mcp\b(?!\/)/);
  assert.match(result.stdout, /agentauth mcp status http:\/\/127\.0\.0\.1:9500\/mcp(?!\/)/);
  // The other way round: a sign-in kept for .../mcp/, asked for .../mcp.
  const other = tempDir();
  const otherStore = openVault({ env: { AGENTAUTH_HOME: other } });
  await loginForTest(idp, otherStore, { resource: "http://127.0.0.1:9500/mcp/", subject: "alice" });
  await otherStore.close();
  const twin = await runCli(["mcp", "status", "http://127.0.0.1:9500/mcp"], {
    AGENTAUTH_HOME: other,
  });
  assert.equal(twin.code, 0, twin.stdout);
  assert.match(twin.stdout, /kept for http:\/\/127\.0\.0\.1:9500\/mcp\//);
});

test("[CLI-vault-list-columns] vault list shows the subject, and client registrations as one short line each (not 200-column rows)", {
  timeout: 60_000,
}, async () => {
  const home = tempDir();
  const store = openVault({ env: { AGENTAUTH_HOME: home } });
  await loginForTest(idp, store, { subject: "alice", resource: "https://api.example.test/" });
  await storeRegistration(store);
  await store.close();
  const result = await runCli(["vault", "list"], { AGENTAUTH_HOME: home });
  assert.equal(result.code, 0, result.stderr);
  const [header, ...rows] = result.stdout.split("\n");
  assert.match(header ?? "", /\bSUBJECT\b/);
  assert.ok(
    rows.some((row) => /\balice\b/.test(row)),
    result.stdout,
  );
  for (const line of result.stdout.split("\n")) {
    assert.ok(line.length <= 160, `a line of ${line.length} columns: ${line}`);
  }
  assert.doesNotMatch(result.stdout, /urn:agentauth:registration:[0-9a-f]{64}/);
  assert.match(result.stdout, /client registration/i);
});

test("[VAULT-get-wrong-argument] vault.get with an id string is a typed usage error that names getById, not a disk failure", async () => {
  const store = openVault({ env: { AGENTAUTH_HOME: tempDir() } });
  try {
    await assert.rejects(
      store.get("Qm9iLWlk3x" as never),
      (error: Error & { code?: string }) =>
        error.code === "vault_input_invalid" &&
        /getById/.test(error.message) &&
        !/disk|corrupt|damaged/i.test(error.message),
    );
  } finally {
    await store.close();
  }
});

test("[IDP-device-done-wording] the device sign-in's done page does not send a console user to a terminal", async () => {
  const { html } = await deviceDonePage();
  assert.doesNotMatch(html, /terminal/i);
  assert.match(html, /close this page/i);
});

test("[CLI-rap-inspect-newcomer] rap inspect: aligned columns; a .well-known/rap-toolset URL is understood; a runtime's URL is said to be a runtime", {
  timeout: 90_000,
}, async () => {
  const home = tempDir();
  const tool = await ready(
    ["rap", "tool", "serve", "--example", "--issuer", idp.issuer, "--port", "0"],
    { AGENTAUTH_HOME: home },
  );
  const base = tool.ready.url.replace(/\/$/, "");
  const plain = await runCli(["rap", "inspect", base], { AGENTAUTH_HOME: home });
  assert.equal(plain.code, 0, plain.stderr);
  const rows = plain.stdout.split("\n").filter((line) => line.startsWith("  "));
  assert.ok(rows.length >= 2, plain.stdout);
  const column = (row: string) => row.search(/(requires auth|no auth)/);
  assert.equal(new Set(rows.map(column)).size, 1, `aligned:\n${plain.stdout}`);

  const wellKnown = await runCli(["rap", "inspect", `${base}/.well-known/rap-toolset`], {
    AGENTAUTH_HOME: home,
  });
  assert.equal(wellKnown.code, 0, wellKnown.stderr);
  assert.equal(wellKnown.stdout, plain.stdout);

  const runtime = await ready(
    ["rap", "runtime", "serve", "--toolset", base, "--port", "0", "--db", join(home, "rt.db")],
    { AGENTAUTH_HOME: home },
  );
  const wrong = await runCli(["rap", "inspect", runtime.ready.url], { AGENTAUTH_HOME: home });
  assert.equal(wrong.code, 1);
  assert.match(wrong.stderr, /RAP runtime/);
  assert.doesNotMatch(wrong.stderr, /HMAC|secret/i);
  assert.match(wrong.stderr, /--toolset/, "where the tool's URL is to be found");
  runtime.server.kill("SIGINT");
  tool.server.kill("SIGINT");
  await Promise.all([runtime.server.exited, tool.server.exited]);
});

/** A dynamic client registration stored the way the MCP client stores one (registration-store.ts). */
async function storeRegistration(store: ReturnType<typeof openVault>): Promise<void> {
  const { discoverAuthorizationServer, storedRegistration } = await import(
    "../../src/oauth/index.ts"
  );
  await storedRegistration({
    store,
    as: await discoverAuthorizationServer(idp.issuer),
    metadata: {
      client_name: "first-hour test",
      redirect_uris: ["http://127.0.0.1/callback"],
      grant_types: ["authorization_code", "refresh_token"],
      token_endpoint_auth_method: "none",
    },
  });
}

/** Runs a device sign-in at the auto-approving server and returns the page a person sees at the end. */
async function deviceDonePage(): Promise<{ html: string }> {
  const start = await fetch(`${idp.issuer}/device/auth`, {
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded" },
    body: new URLSearchParams({ client_id: "agentauth-cli", scope: "openid" }),
  });
  const answer = (await start.json()) as { verification_uri_complete: string };
  const page = await fetch(answer.verification_uri_complete);
  return { html: await page.text() };
}
