/**
 * Presets whose documentation names no RFC 8707 `resource` parameter never send one (Entra v2.0 refuses it with
 * AADSTS901002; others may too), while the credential is still keyed by the resource the caller named. Checked
 * on the wire against the GitLab and Notion simulators: the authorization URL and the token request.
 */

import assert from "node:assert/strict";
import { after, test } from "node:test";
import { login, TokenRefresher } from "../../src/oauth/index.ts";
import { gitlab, notion, PRESETS, resolveProvider } from "../../src/providers/index.ts";
import { MemoryCredentialStore } from "../../src/vault/index.ts";
import { startGitLabSimulator } from "../sims/gitlab.ts";
import { startNotionSimulator } from "../sims/notion.ts";
import { expireAccessToken } from "../support/credentials.ts";
import { browse } from "./support.ts";

const RESOURCE = "https://mcp.example.test/";

test("[PROV-no-resource-param] every preset but generic declares it sends no resource indicator", () => {
  for (const preset of PRESETS) {
    const provider = preset.fromRef(
      {
        name: preset.name,
        options: preset.name === "generic" ? { issuer: "https://as.example.test" } : {},
      },
      { clientId: "id", clientSecret: undefined },
    );
    assert.equal(provider.resourceIndicators === false, preset.name !== "generic", preset.name);
  }
});

for (const [name, start] of [
  [
    "gitlab",
    async () => {
      const sim = await startGitLabSimulator();
      return {
        sim,
        provider: gitlab({ clientId: sim.clientId, clientSecret: sim.clientSecret, host: sim.url }),
      };
    },
  ],
  [
    "notion",
    async () => {
      const sim = await startNotionSimulator();
      return {
        sim,
        provider: notion({
          clientId: sim.clientId,
          clientSecret: sim.clientSecret,
          origins: { "https://api.notion.com": sim.url },
        }),
      };
    },
  ],
] as const) {
  test(`[PROV-no-resource-param] ${name}: a login for a resource sends no resource, and stores under it`, async () => {
    const { sim, provider } = await start();
    after(() => sim.close());
    const store = new MemoryCredentialStore();
    let asked: URL | undefined;
    const record = await login({
      provider,
      flow: "browser",
      store,
      resource: RESOURCE,
      openUrl: async (url) => {
        asked = url;
        await browse(url);
      },
    });
    assert.equal(asked?.searchParams.has("resource"), false);
    assert.equal("resource" in (sim.lastTokenRequest()?.params ?? {}), false);
    assert.equal(record.resource, RESOURCE);
    if (record.tokens.refreshToken) {
      await expireAccessToken(store, record);
      await new TokenRefresher({ store, providers: resolveProvider }).getAccessToken(record);
      assert.equal(sim.lastTokenRequest()?.grantType, "refresh_token");
      assert.equal("resource" in (sim.lastTokenRequest()?.params ?? {}), false);
    }
  });
}
