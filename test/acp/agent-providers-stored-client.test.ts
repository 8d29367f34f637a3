/**
 * Review #1 (adapters), the ACP agent kit's side: a stored credential whose provider reference matches none of the
 * kit's methods (same preset and client id, other options: the github.com preset with origins sent elsewhere) is
 * refreshed through the catalogue with the STORED client; the method's configured secret never goes there. The
 * GitHub simulator (test/sims/github.ts) plays the place the stored reference points at, on a real socket.
 */

import assert from "node:assert/strict";
import { after, test } from "node:test";
import { createAgentAuth } from "../../src/acp/agent/index.ts";
import { methodProviders } from "../../src/acp/agent/oauth-method.ts";
import { Secret } from "../../src/core/secret.ts";
import { login } from "../../src/oauth/index.ts";
import { github } from "../../src/providers/index.ts";
import { MemoryCredentialStore } from "../../src/vault/index.ts";
import { startGitHubSimulator } from "../sims/github.ts";

const CONFIGURED_SECRET = "configured-secret-of-the-agent-0123456789";

test("[ACP-provider-stored-client] a credential whose provider ref matches no method refreshes with the stored client; the configured secret is never sent", async () => {
  const sim = await startGitHubSimulator({
    appKind: "github_app",
    deviceIntervalSeconds: 1,
    publicHost: "https://github.com",
  });
  after(() => sim.close());
  const origins = { "https://github.com": sim.url, "https://api.github.com": sim.url };
  const store = new MemoryCredentialStore();
  const configured = github({
    clientId: sim.clientId,
    clientSecret: new Secret(CONFIGURED_SECRET),
    app: "github_app",
  });
  const auth = createAgentAuth({
    name: "t",
    store,
    methods: [{ kind: "oauth", id: "github", provider: configured }],
  });
  // Signed in under the agent's subject with the preset remapped and the app's real secret (another program).
  const record = await login({
    provider: github({
      clientId: sim.clientId,
      clientSecret: sim.clientSecret,
      app: "github_app",
      origins,
    }),
    flow: "device",
    store,
    subject: auth.credentials.subject,
    onDevicePrompt: (p) => sim.approveDevice(p.userCode),
  });
  await store.put({ ...record, expiresAt: Date.now() - 60_000 });
  const before = sim.stats().refreshGrants;
  const token = await auth.getAccessToken();
  assert.ok(token, "the kit refreshed the credential");
  assert.equal(sim.stats().refreshGrants, before + 1);
  assert.ok(!JSON.stringify(sim.lastTokenRequest()).includes(CONFIGURED_SECRET));
  // The resolver, handed the configured client for a ref no method has, keeps no secret.
  const rebuilt = methodProviders([{ kind: "oauth", id: "github", provider: configured }])(
    record.provider ?? { name: "github" },
    configured.client,
  );
  assert.equal(rebuilt.client.clientSecret, undefined);
});
