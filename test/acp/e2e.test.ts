import assert from "node:assert/strict";
import { join } from "node:path";
import { test } from "node:test";
import { discoverAuthorizationServer, introspectToken } from "../../src/oauth/index.ts";
import { openVault } from "../../src/vault/index.ts";
import { REPO_ROOT, runCli, startCli } from "../support/cli.ts";
import { useIdp } from "../support/idp.ts";
import { tempDir } from "../support/tmp.ts";

const idp = await useIdp();

test("[ACP-e2e-cli] acp login -- agentauth acp example-agent signs in; status says authenticated with the account; logout brings it back", async () => {
  const home = tempDir();
  const env = { AGENTAUTH_HOME: home };
  const agent = [
    process.execPath,
    join(REPO_ROOT, "src", "cli", "main.ts"),
    "acp",
    "example-agent",
    "--issuer",
    idp.issuer,
  ];

  const before = await runCli(["acp", "status", "--json", "--", ...agent], env);
  assert.equal(before.code, 0, before.stderr);
  const initial = JSON.parse(before.stdout);
  assert.equal(initial.state, "unauthenticated");
  assert.equal(initial.source, "auth/status");
  assert.equal(initial.protocolVersion, 1);
  assert.equal(initial.agent.name, "agentauth-example-agent");
  assert.deepEqual(initial.capabilities, { logout: true, status: true, getAuthState: true });
  assert.deepEqual(
    initial.authMethods.map((m: { id: string; type: string }) => [m.id, m.type]),
    [
      ["oauth", "agent"],
      ["api-key", "agent"],
      ["terminal-login", "terminal"],
    ],
  );

  const login = startCli(["acp", "login", "--", ...agent], env);
  const [, url] = await login.waitFor("stderr", /Open: (\S+)/);
  assert.ok(url?.startsWith(idp.issuer), "the URL points at the authorization server");
  await (await fetch(url as string)).arrayBuffer(); // the person approves (auto-approve plays them)
  const done = await login.exited;
  assert.equal(done.code, 0, done.stderr);

  const after = JSON.parse((await runCli(["acp", "status", "--json", "--", ...agent], env)).stdout);
  assert.equal(after.state, "authenticated");
  assert.equal(after.accounts[0]?.email, "alice@example.test");
  assert.equal(after.accounts[0]?.active, true);

  const store = openVault({ env });
  const [summary] = await store.list();
  const record = summary ? await store.get(summary) : undefined;
  await store.close();
  assert.ok(record?.tokens.refreshToken);
  for (const output of [done.stdout, done.stderr, before.stdout]) {
    assert.ok(
      !output.includes(record.tokens.refreshToken.reveal()) &&
        !output.includes(record.tokens.accessToken?.reveal() ?? "x"),
    );
  }

  const logout = await runCli(["acp", "logout", "--", ...agent], env);
  assert.equal(logout.code, 0, logout.stderr);
  const final = JSON.parse((await runCli(["acp", "status", "--json", "--", ...agent], env)).stdout);
  assert.equal(final.state, "unauthenticated");
  const as = await discoverAuthorizationServer(idp.issuer);
  const info = await introspectToken({
    as,
    client: { clientId: "agentauth-example-agent" },
    token: record.tokens.refreshToken,
    tokenTypeHint: "refresh_token",
  });
  assert.equal(info.active, false, "logout revoked the refresh token at the authorization server");
});
