import assert from "node:assert/strict";
import { test } from "node:test";
import { Secret } from "../../src/core/secret.ts";
import {
  deviceLogin,
  discoverAuthorizationServer,
  introspectToken,
  logout,
  registerClient,
  revokeTokens,
  TokenEndpointError,
} from "../../src/oauth/index.ts";
import { MemoryCredentialStore } from "../../src/vault/index.ts";
import { loginForTest, TEST_RESOURCE } from "../support/credentials.ts";
import { useIdp } from "../support/idp.ts";

const idp = await useIdp();
const as = await discoverAuthorizationServer(idp.issuer);
const cli = { clientId: "agentauth-cli" };

test("[RFC7009-logout-revokes] logout revokes at the server (introspection then says inactive) and deletes the record", async () => {
  const store = new MemoryCredentialStore();
  const record = await loginForTest(idp, store, { resource: TEST_RESOURCE });
  const rt = record.tokens.refreshToken as Secret;
  assert.equal(
    (await introspectToken({ as, client: cli, token: rt, tokenTypeHint: "refresh_token" })).active,
    true,
  );
  const key = { subject: record.subject, issuer: record.issuer, resource: record.resource };
  const result = await logout({ store, key });
  assert.deepEqual(
    { found: result.found, revoked: result.revoked, deleted: result.deleted },
    { found: true, revoked: true, deleted: true },
  );
  // oidc-provider cannot revoke self-contained JWT access tokens (RFC 7009 §2.2.1); revoking the refresh token ended the grant.
  assert.deepEqual(result.outcome, { refreshToken: "revoked", accessToken: "unsupported" });
  assert.equal(
    (await introspectToken({ as, client: cli, token: rt, tokenTypeHint: "refresh_token" })).active,
    false,
  );
  assert.equal(await store.get(key), undefined);
  // Idempotent: a second logout finds nothing and does not fail.
  assert.deepEqual(await logout({ store, key }), { found: false, revoked: false, deleted: false });
});

test("[RFC7009-logout-unreachable] when the server cannot be reached the record is kept unless deletion is forced", async () => {
  const other = await useIdp();
  const store = new MemoryCredentialStore();
  const record = await loginForTest(other, store);
  const key = { subject: record.subject, issuer: record.issuer, resource: record.resource };
  await other.close();
  const { MetadataCache } = await import("../../src/oauth/index.ts");
  const kept = await logout({ store, key, discovery: { cache: new MetadataCache() } });
  assert.equal(kept.revoked, false);
  assert.equal(kept.deleted, false);
  assert.equal((kept.error as { code?: string }).code, "network_error");
  assert.ok(await store.get(key));
  const forced = await logout({
    store,
    key,
    deleteOnRevokeFailure: true,
    discovery: { cache: new MetadataCache() },
  });
  assert.equal(forced.deleted, true);
  assert.equal(await store.get(key), undefined);
});

test("[RFC7009-unsupported] a server without a revocation endpoint gives a typed error", async () => {
  await assert.rejects(
    revokeTokens({
      as: { ...as, revocation_endpoint: undefined },
      client: cli,
      refreshToken: new Secret("x"),
    }),
    (e: unknown) => e instanceof TokenEndpointError && e.code === "revocation_unsupported",
  );
});

test("[RFC7591-dcr-public] a public native client registers itself and can then sign in with the device flow", async () => {
  const registered = await registerClient({
    as,
    metadata: {
      client_name: "registered test app",
      application_type: "native",
      token_endpoint_auth_method: "none",
      grant_types: ["urn:ietf:params:oauth:grant-type:device_code", "refresh_token"],
      response_types: [],
      redirect_uris: [],
    },
  });
  assert.ok(registered.clientId);
  assert.equal(registered.clientSecret, undefined);
  assert.ok(registered.registrationAccessToken, "RFC 7592 management token");
  const tokens = await deviceLogin({
    as,
    client: registered,
    scope: "openid",
    onPrompt: (p) => {
      setTimeout(
        () => void fetch(p.verificationUriComplete ?? "").then((r) => r.arrayBuffer()),
        200,
      );
    },
  });
  assert.equal(tokens.subject, "alice");
});

test("[RFC7591-dcr-confidential] a confidential registration returns a secret that never prints", async () => {
  const registered = await registerClient({
    as,
    metadata: {
      redirect_uris: ["http://127.0.0.1/callback"],
      token_endpoint_auth_method: "client_secret_basic",
    },
  });
  assert.ok(registered.clientSecret);
  assert.equal(registered.authMethod, "client_secret_basic");
  assert.ok(!JSON.stringify(registered).includes(registered.clientSecret.reveal()));
});

test("[RFC7591-dcr-invalid] invalid client metadata is a typed error carrying the server's error code", async () => {
  await assert.rejects(
    registerClient({ as, metadata: { redirect_uris: ["not a url"] } }),
    (e: unknown) => e instanceof TokenEndpointError && e.oauthError === "invalid_redirect_uri",
  );
  await assert.rejects(
    registerClient({ as: { ...as, registration_endpoint: undefined }, metadata: {} }),
    (e: unknown) => e instanceof TokenEndpointError && e.code === "registration_unsupported",
  );
});
