/**
 * A GitHub token revoked at GitHub while an AHP connection holds it: the host re-verifies it on use (GET /user
 * answers 401), answers -32007, and the client, which never re-sends a token the host refused, signs in again
 * through the GitHub preset (an OAuth App token has no refresh token) and retries the command once.
 */

import assert from "node:assert/strict";
import { after, test } from "node:test";
import { connectAhpHost } from "../../src/ahp/client/index.ts";
import { openVault } from "../../src/vault/index.ts";
import { startGitHubSimulator } from "../sims/github.ts";
import { tempDir } from "../support/tmp.ts";
import { GITHUB, startOctoHost } from "./client-providers-host.ts";

test("[AHP-client-provider-revoked-relogin] a GitHub token revoked at GitHub: -32007 on the next call, a new device sign-in through the preset, one retry succeeds", {
  timeout: 60_000,
}, async () => {
  const sim = await startGitHubSimulator({
    publicHost: "https://github.com",
    deviceIntervalSeconds: 1,
  });
  after(() => sim.close());
  const url = await startOctoHost(GITHUB, sim);
  const store = openVault({ env: { AGENTAUTH_HOME: tempDir() } });
  after(() => store.close());
  let prompts = 0;
  const client = await connectAhpHost(url, {
    store,
    dialects: ["official"],
    env: { AGENTAUTH_GITHUB_CLIENT_ID: sim.clientId },
    providers: {
      github: { origins: { "https://github.com": sim.url, "https://api.github.com": sim.url } },
    },
    login: {
      onDevicePrompt: (prompt) => {
        prompts++;
        sim.approveDevice(prompt.userCode);
      },
    },
  });
  after(() => client.close());
  assert.deepEqual(await client.request("octo/whoami"), { subjects: ["1001"] });
  const [summary] = await store.list({ issuer: GITHUB });
  assert.ok(summary);
  const first = (await store.get(summary))?.tokens.accessToken?.reveal() ?? "";
  assert.ok(sim.isActive(first));

  // The person revokes the token at GitHub (REST "Delete an app token", Basic client credentials).
  const basic = Buffer.from(`${sim.clientId}:${sim.clientSecret}`).toString("base64");
  const revoked = await fetch(`${sim.url}/applications/${sim.clientId}/token`, {
    method: "DELETE",
    headers: { authorization: `Basic ${basic}`, "content-type": "application/json" },
    body: JSON.stringify({ access_token: first }),
  });
  assert.equal(revoked.status, 204);
  assert.equal(sim.isActive(first), false);

  assert.deepEqual(await client.request("octo/whoami"), { subjects: ["1001"] });
  assert.equal(prompts, 2);
  const second = (await store.get(summary))?.tokens.accessToken?.reveal() ?? "";
  assert.notEqual(second, first);
  assert.ok(sim.isActive(second));
  assert.equal(
    (await store.list({ issuer: GITHUB })).length,
    1,
    "the new sign-in replaced the record",
  );
});
