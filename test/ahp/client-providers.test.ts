/**
 * The AHP client against a real host whose resource names `https://github.com/login/oauth`, signing in with the
 * GitHub preset against the GitHub simulator (test/sims/github.ts, written from GitHub's docs; github.com's origins
 * remapped to it). The host verifies GitHub's opaque tokens the way a GitHub-backed host would: it asks GitHub who
 * the token belongs to (`GET /user`), through the host's custom-verifier option.
 */

import assert from "node:assert/strict";
import { createServer } from "node:http";
import { after, test } from "node:test";
import { type ConnectAhpOptions, connectAhpHost } from "../../src/ahp/client/index.ts";
import { type CredentialStore, openVault } from "../../src/vault/index.ts";
import { type GitHubSimulator, startGitHubSimulator } from "../sims/github.ts";
import { tempDir } from "../support/tmp.ts";
import { GITHUB, OCTO, startOctoHost } from "./client-providers-host.ts";

const GUARD = { timeout: 60_000 };

function vault(): CredentialStore {
  const store = openVault({ env: { AGENTAUTH_HOME: tempDir() } });
  after(() => store.close());
  return store;
}

/** The github.com preset pointed at the simulator; the client id comes from the environment. */
function githubSettings(sim: GitHubSimulator): Partial<ConnectAhpOptions> {
  return {
    dialects: ["official"],
    env: { AGENTAUTH_GITHUB_CLIENT_ID: sim.clientId },
    providers: {
      github: { origins: { "https://github.com": sim.url, "https://api.github.com": sim.url } },
    },
  };
}

test(
  "[AHP-client-provider-github] a resource naming github.com/login/oauth: -32007, GitHub device sign-in through the preset, authenticated calls",
  GUARD,
  async () => {
    const sim = await startGitHubSimulator({
      publicHost: "https://github.com",
      deviceIntervalSeconds: 1,
    });
    after(() => sim.close());
    const url = await startOctoHost(GITHUB, sim);
    const store = vault();

    // Without a sign-in policy the host's -32007 ends in ahp_auth_required, and GitHub is not asked anything.
    const bare = await connectAhpHost(url, { store, ...githubSettings(sim) });
    await assert.rejects(
      bare.request("createSession", { channel: "ahp-session:/one", provider: "octo" }),
      { code: "ahp_auth_required" },
    );
    await bare.close();
    assert.equal(sim.stats().deviceCodes, 0);

    const prompts: { uri: string; covers: string[] }[] = [];
    const client = await connectAhpHost(url, {
      store,
      ...githubSettings(sim),
      login: {
        onDevicePrompt: (prompt, _resource, covers) => {
          prompts.push({ uri: prompt.verificationUri, covers: covers.map((r) => r.id) });
          sim.approveDevice(prompt.userCode);
        },
      },
    });
    try {
      assert.equal(
        await client.request("createSession", { channel: "ahp-session:/one", provider: "octo" }),
        null,
      );
      assert.deepEqual(prompts, [{ uri: "https://github.com/login/device", covers: [OCTO] }]);
      assert.deepEqual(await client.request("octo/whoami"), { subjects: ["1001"] });
      const [status] = await client.status();
      assert.equal(status?.ready, true);
    } finally {
      await client.close();
    }

    // Stored under GitHub's issuer (what the resource advertises), naming the preset and the GitHub account.
    const [record] = await store.list({ issuer: GITHUB });
    assert.equal(record?.resource, OCTO);
    assert.equal(record?.subject, "1001");
    assert.equal(record?.account.login, "alice");
    assert.equal(record?.provider?.name, "github");
    assert.deepEqual(record?.scopes, ["read:user"]);

    // A later connection authenticates from the vault alone: no second sign-in.
    const again = await connectAhpHost(url, { store, ...githubSettings(sim) });
    try {
      assert.deepEqual(await again.request("octo/whoami"), { subjects: ["1001"] });
    } finally {
      await again.close();
    }
    assert.equal(sim.stats().deviceCodes, 1);
  },
);

test(
  "[AHP-client-provider-refresh] an expired GitHub App token is refreshed through the preset the credential names (single-use refresh token)",
  GUARD,
  async () => {
    const sim = await startGitHubSimulator({
      publicHost: "https://github.com",
      deviceIntervalSeconds: 1,
      appKind: "github_app",
    });
    after(() => sim.close());
    const url = await startOctoHost(GITHUB, sim);
    const store = vault();
    const settings = githubSettings(sim);
    const first = await connectAhpHost(url, {
      store,
      ...settings,
      providers: { github: { ...settings.providers?.github, options: { app: "github_app" } } },
      login: { onDevicePrompt: (prompt) => sim.approveDevice(prompt.userCode) },
    });
    await first.authenticate();
    await first.close();
    const [summary] = await store.list({ issuer: GITHUB });
    assert.ok(summary?.has.refreshToken, "a GitHub App sign-in stores a refresh token");
    const record = await store.get(summary);
    assert.ok(record);
    await store.put({ ...record, expiresAt: Date.now() - 1_000 });

    // No sign-in policy and no provider settings: the credential's own provider reference is enough.
    const client = await connectAhpHost(url, { store, dialects: ["official"], env: {} });
    try {
      assert.deepEqual(await client.request("octo/whoami"), { subjects: ["1001"] });
    } finally {
      await client.close();
    }
    assert.equal(sim.stats().refreshGrants, 1);
    const refreshed = await store.get(summary);
    assert.ok(sim.isActive(refreshed?.tokens.accessToken?.reveal() ?? ""));
    assert.notEqual(refreshed?.tokens.refreshToken?.reveal(), record.tokens.refreshToken?.reveal());
  },
);

test(
  "[AHP-client-provider-client-id-missing] GitHub recognised but no client id configured: an error naming the env var and the option; nothing sent, nothing stored, no secret shown",
  GUARD,
  async () => {
    const sim = await startGitHubSimulator({ publicHost: "https://github.com" });
    after(() => sim.close());
    const url = await startOctoHost(GITHUB, sim);
    const store = vault();
    const client = await connectAhpHost(url, {
      store,
      dialects: ["official"],
      env: { AGENTAUTH_GITHUB_CLIENT_SECRET: "gh-secret-never-shown" },
      login: { onDevicePrompt: () => assert.fail("no sign-in may start") },
    });
    try {
      const error = await client.request("octo/whoami").then(
        () => assert.fail("the call must fail"),
        (e: Error & { code?: string }) => e,
      );
      assert.equal(error.code, "ahp_provider_client_id_missing");
      assert.match(
        error.message,
        /Octo API signs in with GitHub \(https:\/\/github\.com\/login\/oauth\)/,
      );
      assert.match(error.message, /AGENTAUTH_GITHUB_CLIENT_ID/);
      assert.match(error.message, /providers: \{ github: \{ clientId \} \}/);
      assert.doesNotMatch(`${error.message} ${JSON.stringify(error)}`, /gh-secret-never-shown/);
    } finally {
      await client.close();
    }
    assert.equal(sim.stats().deviceCodes, 0);
    assert.deepEqual(await store.list({}), []);
  },
);

test(
  "[AHP-client-provider-unknown-server] an authorization server that is neither a preset nor discoverable: ahp_server_unknown naming the server and what to configure",
  GUARD,
  async () => {
    const tried: string[] = [];
    const server = createServer((req, res) => {
      tried.push(req.url ?? "");
      res.writeHead(404, { "content-type": "application/json" }).end('{"message":"Not Found"}');
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    after(() => server.close());
    const { port } = server.address() as { port: number };
    const issuer = `http://127.0.0.1:${port}/oauth`;
    const url = await startOctoHost(issuer);
    const store = vault();
    const client = await connectAhpHost(url, {
      store,
      dialects: ["official"],
      env: {},
      login: { onDevicePrompt: () => assert.fail("no sign-in may start") },
    });
    try {
      const error = await client.request("octo/whoami").then(
        () => assert.fail("the call must fail"),
        (e: Error & { code?: string }) => e,
      );
      assert.equal(error.code, "ahp_server_unknown");
      assert.ok(
        error.message.includes(`signs in at ${issuer}, which is not a provider agentauth knows`),
      );
      assert.match(error.message, /AGENTAUTH_GITHUB_HOST and AGENTAUTH_GITHUB_CLIENT_ID/);
      assert.ok(
        error.message.includes(
          `authorizationServers: { "${issuer}": generic({ issuer: "${issuer}"`,
        ),
      );
    } finally {
      await client.close();
    }
    // Discovery was really tried (RFC 8414 first), and it is what failed.
    assert.ok(tried.includes("/.well-known/oauth-authorization-server/oauth"), tried.join(" "));
    assert.deepEqual(await store.list({}), []);
  },
);
