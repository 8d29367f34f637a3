/**
 * Review #1 (adapters): a RAP tool refreshing a stored credential whose provider reference matches none of its
 * configured presets (same preset name and client id, other options: here the github.com preset with its origins
 * sent elsewhere) rebuilds it from the stored reference with the STORED client only. The tool's configured client
 * secret is never handed to a catalog provider it did not configure. The GitHub simulator (test/sims/github.ts)
 * plays the place the stored reference points at, on a real loopback socket.
 */

import assert from "node:assert/strict";
import { after, test } from "node:test";
import { Secret } from "../../src/core/index.ts";
import { login, TokenRefresher } from "../../src/oauth/index.ts";
import { github } from "../../src/providers/index.ts";
import { toolProviders } from "../../src/rap/tool/providers.ts";
import { configuredClient, configuredResolver } from "../../src/rap/tool/stored-credentials.ts";
import { MemoryCredentialStore } from "../../src/vault/index.ts";
import { startGitHubSimulator } from "../sims/github.ts";

const CONFIGURED_SECRET = "configured-secret-of-the-tool-0123456789";

test("[RAP-prov-stored-client] a credential whose provider ref matches no configured preset refreshes with the stored client; the configured secret is never sent", async () => {
  const sim = await startGitHubSimulator({
    appKind: "github_app",
    deviceIntervalSeconds: 1,
    publicHost: "https://github.com",
  });
  after(() => sim.close());
  const origins = { "https://github.com": sim.url, "https://api.github.com": sim.url };
  const store = new MemoryCredentialStore();
  // Signed in elsewhere (the CLI, another program) with the github.com preset remapped, and the app's secret.
  const record = await login({
    provider: github({
      clientId: sim.clientId,
      clientSecret: sim.clientSecret,
      app: "github_app",
      origins,
    }),
    flow: "device",
    store,
    onDevicePrompt: (p) => sim.approveDevice(p.userCode),
  });
  // The tool configures the plain github.com preset, same client id, another secret.
  const providers = toolProviders({
    github: github({
      clientId: sim.clientId,
      clientSecret: new Secret(CONFIGURED_SECRET),
      app: "github_app",
    }),
  });
  const refresher = new TokenRefresher({
    store,
    providers: configuredResolver(providers),
    clientFor: (r) => configuredClient(providers, r),
  });
  const fresh = await refresher.forceRefresh(record);
  assert.notEqual(fresh.tokens.accessToken?.reveal(), record.tokens.accessToken?.reveal());
  const sent = JSON.stringify(sim.lastTokenRequest());
  assert.ok(
    !sent.includes(CONFIGURED_SECRET),
    "the configured secret did not go to the stored origins",
  );
  // The resolver itself: handed the configured client for a ref it was not configured with, it keeps no secret.
  const configured = providers.get("github")?.client;
  assert.ok(configured);
  const rebuilt = configuredResolver(providers)(record.provider ?? { name: "github" }, configured);
  assert.equal(rebuilt.client.clientSecret, undefined, "the configured secret is not handed over");
});
