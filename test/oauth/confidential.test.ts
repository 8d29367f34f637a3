import assert from "node:assert/strict";
import { test } from "node:test";
import { Secret } from "../../src/core/secret.ts";
import { TokenEndpointError, TokenRefresher } from "../../src/oauth/index.ts";
import { MemoryCredentialStore } from "../../src/vault/index.ts";
import { expireAccessToken, loginForTest, TEST_RESOURCE } from "../support/credentials.ts";
import { CONFIDENTIAL_CLIENT, useIdp } from "../support/idp.ts";

const idp = await useIdp({
  clients: [
    {
      ...CONFIDENTIAL_CLIENT,
      grant_types: [...CONFIDENTIAL_CLIENT.grant_types],
      redirect_uris: [...CONFIDENTIAL_CLIENT.redirect_uris],
    },
  ],
});
const confidential = {
  clientId: CONFIDENTIAL_CLIENT.client_id,
  clientSecret: new Secret(CONFIDENTIAL_CLIENT.client_secret),
};

test("[OAUTH-confidential-client] a confidential client (client_secret_basic, with PKCE) signs in and refreshes", async () => {
  const store = new MemoryCredentialStore();
  const record = await expireAccessToken(
    store,
    await loginForTest(idp, store, { resource: TEST_RESOURCE, client: confidential }),
  );
  assert.equal(record.clientId, CONFIDENTIAL_CLIENT.client_id);
  const refresher = new TokenRefresher({ store, clientFor: () => confidential });
  idp.resetStats();
  await refresher.getAccessToken(record);
  assert.deepEqual(idp.stats.byGrant.refresh_token, { success: 1, error: 0 });
});

test("[OAUTH-confidential-wrong-secret] a wrong client secret is a typed invalid_client error that keeps the credential", async () => {
  const store = new MemoryCredentialStore();
  const record = await expireAccessToken(
    store,
    await loginForTest(idp, store, { resource: TEST_RESOURCE, client: confidential }),
  );
  const wrong = { ...confidential, clientSecret: new Secret("not-the-secret") };
  await assert.rejects(
    new TokenRefresher({ store, clientFor: () => wrong }).getAccessToken(record),
    (e: unknown) =>
      e instanceof TokenEndpointError &&
      e.oauthError === "invalid_client" &&
      !e.message.includes("not-the-secret"),
  );
  assert.equal(
    (await store.get(record))?.status,
    "active",
    "a client misconfiguration does not discard the user's credential",
  );
});
