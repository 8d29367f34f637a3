/**
 * The engine with the generic preset: against the embedded authorization server (strict oidc-provider) found by
 * discovery and described by hand-given endpoints, and against a scripted server for a non-standard token
 * endpoint described only by quirks data.
 */

import assert from "node:assert/strict";
import { test } from "node:test";
import { Secret } from "../../src/core/secret.ts";
import {
  type DevicePrompt,
  discoverAuthorizationServer,
  introspectToken,
  login,
  logout,
  TokenEndpointError,
  TokenRefresher,
} from "../../src/oauth/index.ts";
import { type GenericEndpoints, generic, resolveProvider } from "../../src/providers/index.ts";
import { MemoryCredentialStore } from "../../src/vault/index.ts";
import { expireAccessToken } from "../support/credentials.ts";
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
const metadata = await discoverAuthorizationServer(idp.issuer);
const confidential = {
  clientId: CONFIDENTIAL_CLIENT.client_id,
  clientSecret: CONFIDENTIAL_CLIENT.client_secret,
};
const SCOPE = "openid profile email offline_access";

/** The embedded server auto-approves: following the authorization URL lands on our loopback listener. */
async function browse(url: URL): Promise<void> {
  await (await fetch(url)).arrayBuffer();
}

function handGiven(withRevocation: boolean): GenericEndpoints {
  return {
    issuer: metadata.issuer,
    authorization: metadata.authorization_endpoint,
    token: metadata.token_endpoint as string,
    device: metadata.device_authorization_endpoint,
    ...(withRevocation ? { revocation: metadata.revocation_endpoint } : {}),
    jwks: metadata.jwks_uri,
  };
}

/** The embedded server signs ID tokens with ES256; hand-given endpoints must say so (no metadata to read it from). */
const ALGORITHMS = { idTokenAlgorithms: ["ES256"] };

async function refreshTokenActive(token: Secret): Promise<boolean> {
  const client = {
    clientId: confidential.clientId,
    clientSecret: new Secret(confidential.clientSecret),
  };
  const answer = await introspectToken({
    as: metadata,
    client,
    token,
    tokenTypeHint: "refresh_token",
  });
  return answer.active === true;
}

test("[PROV-generic-discovery-login] by discovery: a browser login stores the tokens, the ID token's subject and a ref naming the issuer", async () => {
  const store = new MemoryCredentialStore();
  const provider = generic({ issuer: idp.issuer, clientId: "agentauth-cli", scope: SCOPE });
  const record = await login({ provider, flow: "browser", store, openUrl: browse });
  assert.equal(record.issuer, idp.issuer);
  assert.equal(record.subject, "alice");
  assert.deepEqual(record.provider, {
    name: "generic",
    options: { authMethod: "client_secret_basic", issuer: idp.issuer },
  });
  assert.ok(record.tokens.refreshToken);
  assert.equal(record.tokens.clientSecret, undefined);
});

test("[PROV-generic-discovery-refresh] by discovery: TokenRefresher rebuilds the provider from the stored ref and refreshes once", async () => {
  const store = new MemoryCredentialStore();
  const provider = generic({ issuer: idp.issuer, clientId: "agentauth-cli", scope: SCOPE });
  const record = await expireAccessToken(
    store,
    await login({ provider, flow: "browser", store, openUrl: browse }),
  );
  idp.resetStats();
  const refresher = new TokenRefresher({ store, providers: resolveProvider });
  const tokens = await Promise.all(
    Array.from({ length: 20 }, () => refresher.getAccessToken(record)),
  );
  assert.equal(new Set(tokens.map((t) => t.reveal())).size, 1);
  assert.deepEqual(idp.stats.byGrant.refresh_token, { success: 1, error: 0 });
  assert.notEqual(tokens[0]?.reveal(), record.tokens.accessToken?.reveal());
});

test("[PROV-generic-device] by discovery: a device login completes once the person approves", async () => {
  const store = new MemoryCredentialStore();
  const provider = generic({ issuer: idp.issuer, clientId: "agentauth-cli", scope: SCOPE });
  const record = await login({
    provider,
    flow: "device",
    store,
    onDevicePrompt: async (prompt: DevicePrompt) => {
      await (await fetch(prompt.verificationUriComplete ?? prompt.verificationUri)).arrayBuffer();
    },
  });
  assert.equal(record.subject, "alice");
  assert.equal(record.provider?.name, "generic");
});

test("[PROV-generic-endpoints-confidential] hand-given endpoints, confidential client: login, refresh from the ref with the sealed secret, RFC 7009 logout", async () => {
  const store = new MemoryCredentialStore();
  const provider = generic({
    endpoints: handGiven(true),
    ...confidential,
    ...ALGORITHMS,
    scope: SCOPE,
  });
  assert.deepEqual(provider.flows, ["authorization_code", "device"]);
  const record = await login({ provider, flow: "browser", store, openUrl: browse });
  assert.equal(record.issuer, idp.issuer);
  assert.equal(record.tokens.clientSecret?.reveal(), confidential.clientSecret);
  assert.ok(record.provider?.options?.endpoints);
  assert.equal(JSON.stringify(record.provider).includes(confidential.clientSecret), false);

  await expireAccessToken(store, record);
  idp.resetStats();
  await new TokenRefresher({ store, providers: resolveProvider }).getAccessToken(record);
  assert.deepEqual(idp.stats.byGrant.refresh_token, { success: 1, error: 0 });

  const current = await store.get(record);
  const refreshToken = current?.tokens.refreshToken as Secret;
  assert.equal(await refreshTokenActive(refreshToken), true);
  const result = await logout({ store, key: record, providers: resolveProvider });
  assert.equal(result.revoked, true, String(result.error));
  assert.equal(result.deleted, true);
  assert.equal(await refreshTokenActive(refreshToken), false);
});

test("[PROV-generic-endpoints-no-revocation] without a revocation endpoint, logout deletes locally and names the manage page", async () => {
  const store = new MemoryCredentialStore();
  const provider = generic({
    endpoints: handGiven(false),
    ...confidential,
    ...ALGORITHMS,
    scope: SCOPE,
    manageUrl: "https://id.example.com/apps",
  });
  const record = await login({ provider, flow: "browser", store, openUrl: browse });
  const result = await logout({ store, key: record, providers: resolveProvider });
  assert.equal(result.revoked, false);
  assert.equal(result.deleted, true);
  assert.equal(result.manageUrl, "https://id.example.com/apps");
  assert.equal(await store.get(record), undefined);
  // The server still holds the grant: nothing pretended to revoke it.
  assert.equal(await refreshTokenActive(record.tokens.refreshToken as Secret), true);
});

test("[PROV-generic-endpoints-no-revocation] without a revocation endpoint or a manage page, logout deletes locally and invents no manage URL", () => {
  const provider = generic({ endpoints: handGiven(false), ...confidential, ...ALGORITHMS });
  assert.deepEqual(provider.revocation, { kind: "none" });
});

test("[PROV-generic-wrong-secret] a wrong client secret at the token endpoint is a typed error without the secret, and nothing is stored", async () => {
  const store = new MemoryCredentialStore();
  const provider = generic({
    endpoints: handGiven(true),
    ...ALGORITHMS,
    clientId: confidential.clientId,
    clientSecret: "definitely-not-the-secret",
    scope: SCOPE,
  });
  await assert.rejects(
    login({ provider, flow: "browser", store, openUrl: browse, timeoutMs: 15_000 }),
    (error: unknown) =>
      error instanceof TokenEndpointError &&
      error.oauthError === "invalid_client" &&
      !error.message.includes("definitely-not-the-secret"),
  );
  assert.deepEqual(await store.list(), []);
});
