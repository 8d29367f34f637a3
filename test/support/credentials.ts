/** Test support: a real credential in a store, obtained by a real browser-style login against the embedded server. */

import type { RunningIdp } from "../../src/idp/index.ts";
import { login, type OAuthClient } from "../../src/oauth/index.ts";
import type { CredentialRecord, CredentialStore } from "../../src/vault/index.ts";

export const TEST_RESOURCE = "https://api.example.test/";

/** Runs the authorization code flow with PKCE through the loopback listener; the auto-approving server plays the person. */
export async function loginForTest(
  idp: RunningIdp,
  store: CredentialStore,
  options: { resource?: string; scope?: string; client?: OAuthClient; subject?: string } = {},
): Promise<CredentialRecord> {
  return login({
    issuer: idp.issuer,
    client: options.client ?? { clientId: "agentauth-cli" },
    flow: "browser",
    store,
    scope: options.scope ?? "openid profile email offline_access read",
    resource: options.resource,
    subject: options.subject,
    // If the server refuses before redirecting, fail the test instead of waiting for a browser that never comes.
    timeoutMs: 15_000,
    openUrl: async (url) => {
      const response = await fetch(url);
      await response.arrayBuffer();
    },
  });
}

/** Makes the stored access token due for refresh without touching the tokens themselves. */
export async function expireAccessToken(
  store: CredentialStore,
  record: CredentialRecord,
): Promise<CredentialRecord> {
  const { id: _id, version, createdAt: _c, updatedAt: _u, ...input } = record;
  const updated = await store.compareAndSwap(version, { ...input, expiresAt: Date.now() - 1000 });
  if (!updated) throw new Error("could not expire the test credential");
  return updated;
}
