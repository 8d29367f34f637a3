/**
 * The example agent is its own OAuth client with its own vault entries: it signs in as the public client
 * `agentauth-example-agent` and stores under the subject `acp-agent:agentauth-example-agent`, so neither its
 * login nor its logout touches the credential of the user's own `agentauth login` (client `agentauth-cli`).
 */

import assert from "node:assert/strict";
import { join } from "node:path";
import { test } from "node:test";
import { createAgentAuth } from "../../src/acp/agent/index.ts";
import { discoverAuthorizationServer, introspectToken } from "../../src/oauth/index.ts";
import { MemoryCredentialStore } from "../../src/vault/index.ts";
import { cliDeviceLogin, REPO_ROOT, readStoredTokens, runCli, vaultIdOf } from "../support/cli.ts";
import { useIdp } from "../support/idp.ts";
import { tempDir } from "../support/tmp.ts";
import {
  initializeV1,
  oauthLogin,
  startAgent,
  vaultSummaries,
  vaultTokens,
} from "./fixtures/agent-process.ts";

const idp = await useIdp();
const as = await discoverAuthorizationServer(idp.issuer);
const TIMEOUT = { timeout: 60_000 };

async function active(clientId: string, token: { reveal(): string }): Promise<boolean> {
  const info = await introspectToken({
    as,
    client: { clientId },
    token: token as never,
    tokenTypeHint: "refresh_token",
  });
  return info.active;
}

test(
  "[ACP-example-own-credentials] a credential stored by agentauth login survives acp logout of the example agent",
  TIMEOUT,
  async (t) => {
    const home = tempDir();
    const env = { AGENTAUTH_HOME: home };
    const cliLogin = await cliDeviceLogin(idp.issuer, env);
    assert.equal(cliLogin.code, 0, cliLogin.stderr);
    const cliId = vaultIdOf(cliLogin.stdout);
    const cliTokens = await readStoredTokens(home, cliId);
    assert.ok(cliTokens.refreshToken);

    // The agent does not borrow the user's CLI credential: it is a different client.
    const agent = startAgent(t, { issuer: idp.issuer, home });
    await initializeV1(agent);
    assert.deepEqual(await agent.call("auth/status", {}), {
      state: "unauthenticated",
      accounts: [],
    });

    // Its own login adds a second entry, under its own client id and subject, and leaves the CLI's untouched.
    assert.deepEqual((await oauthLogin(agent)).response.result, {});
    await agent.close();
    const both = await vaultSummaries(home);
    assert.equal(both.length, 2, "two credentials: the CLI's and the agent's");
    const mine = both.find((s) => s.id !== cliId);
    assert.equal(mine?.clientId, "agentauth-example-agent");
    assert.equal(mine?.subject, "acp-agent:agentauth-example-agent");
    assert.equal(mine?.issuer, both.find((s) => s.id === cliId)?.issuer);
    assert.deepEqual(
      (await readStoredTokens(home, cliId)).refreshToken?.reveal(),
      cliTokens.refreshToken.reveal(),
      "the agent's login did not overwrite the CLI's credential",
    );
    const [agentTokens] = (await vaultTokens(home)).filter(
      (tokens) => tokens.refreshToken?.reveal() !== cliTokens.refreshToken?.reveal(),
    );
    assert.ok(agentTokens?.refreshToken);

    const command = [
      process.execPath,
      join(REPO_ROOT, "src", "cli", "main.ts"),
      "acp",
      "example-agent",
      "--issuer",
      idp.issuer,
    ];
    const logout = await runCli(["acp", "logout", "--", ...command], env);
    assert.equal(logout.code, 0, logout.stderr);

    const left = await vaultSummaries(home);
    assert.deepEqual(
      left.map((s) => [s.id, s.clientId]),
      [[cliId, "agentauth-cli"]],
      "only the agent's own credential was deleted",
    );
    assert.equal(
      await active("agentauth-cli", cliTokens.refreshToken),
      true,
      "the CLI's token still works",
    );
    assert.equal(
      await active("agentauth-example-agent", agentTokens.refreshToken),
      false,
      "the agent revoked its own refresh token",
    );
  },
);

test(
  "[ACP-example-own-credentials-apikey] API keys are stored under the agent's subject, not a shared 'default'",
  TIMEOUT,
  async (t) => {
    const home = tempDir();
    const agent = startAgent(t, { issuer: idp.issuer, home });
    await initializeV1(agent);
    await agent.call("authenticate", {
      methodId: "api-key",
      _meta: { "api-key": { apiKey: `echo-${crypto.randomUUID()}` } },
    });
    const [stored] = await vaultSummaries(home);
    assert.equal(stored?.subject, "acp-agent:agentauth-example-agent");
    assert.equal(stored?.issuer, "apikey:api-key");
  },
);

test("[ACP-kit-name-checked] the kit refuses a missing or hostile agent name (it keys the vault), at construction", () => {
  for (const name of [undefined, "", "a b", "x".repeat(101), "evil\u001b[2J", "a:b", 42]) {
    assert.throws(
      () =>
        createAgentAuth({
          name: name as never,
          methods: [],
          store: new MemoryCredentialStore(),
        }),
      (error: Error) => error instanceof TypeError && /^name must be/.test(error.message),
    );
  }
  assert.equal(
    createAgentAuth({ name: "my-agent", methods: [], store: new MemoryCredentialStore() })
      .credentials.subject,
    "acp-agent:my-agent",
  );
});
