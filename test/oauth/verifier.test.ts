import assert from "node:assert/strict";
import { test } from "node:test";
import { Secret } from "../../src/core/secret.ts";
import {
  createTokenVerifier,
  discoverAuthorizationServer,
  findBearerChallenge,
  parseWwwAuthenticate,
  revokeTokens,
  TokenVerificationError,
} from "../../src/oauth/index.ts";
import { MemoryCredentialStore } from "../../src/vault/index.ts";
import { loginForTest, TEST_RESOURCE } from "../support/credentials.ts";
import { CONFIDENTIAL_CLIENT, useIdp } from "../support/idp.ts";

const OPAQUE_RESOURCE = "https://opaque.example.test/";
const idp = await useIdp({
  opaqueResources: [OPAQUE_RESOURCE],
  clients: [
    {
      ...CONFIDENTIAL_CLIENT,
      grant_types: [...CONFIDENTIAL_CLIENT.grant_types],
      redirect_uris: [...CONFIDENTIAL_CLIENT.redirect_uris],
    },
  ],
});
const store = new MemoryCredentialStore();
const record = await loginForTest(idp, store, { resource: TEST_RESOURCE, scope: "openid read" });
const token = record.tokens.accessToken as Secret;
const PRM = "https://api.example.test/.well-known/oauth-protected-resource";

function refusal(status: number, error: string | undefined) {
  return (e: unknown) => {
    assert.ok(e instanceof TokenVerificationError, String(e));
    assert.equal(e.challenge.status, status);
    const bearer = findBearerChallenge(parseWwwAuthenticate(e.challenge.header));
    assert.ok(bearer, "a Bearer challenge");
    assert.equal(bearer.parameters.error, error);
    assert.equal(bearer.parameters.resource_metadata, PRM);
    assert.ok(
      !e.message.includes(token.reveal()) && !e.challenge.header.includes(token.reveal()),
      "no token echoed",
    );
    return true;
  };
}

test("[RFC9068-jwt-valid] a JWT access token for our resource is accepted with its subject and scopes", async () => {
  const verifier = createTokenVerifier({
    issuer: idp.issuer,
    audience: TEST_RESOURCE,
    resourceMetadataUrl: PRM,
  });
  const verified = await verifier.verify(`Bearer ${token.reveal()}`, ["read"]);
  assert.equal(verified.subject, "alice");
  assert.equal(verified.clientId, "agentauth-cli");
  assert.deepEqual(verified.scopes, ["read"]);
});

test("[RFC6750-S3.1-missing] no credentials: 401 with a challenge and no error code", async () => {
  const verifier = createTokenVerifier({
    issuer: idp.issuer,
    audience: TEST_RESOURCE,
    resourceMetadataUrl: PRM,
  });
  await assert.rejects(verifier.verify(undefined), refusal(401, undefined));
  await assert.rejects(verifier.verify("Basic dXNlcjpwYXNz"), refusal(401, undefined));
});

test("[RFC6750-S3.1-invalid-request] a malformed Authorization header is 400 invalid_request", async () => {
  const verifier = createTokenVerifier({
    issuer: idp.issuer,
    audience: TEST_RESOURCE,
    resourceMetadataUrl: PRM,
  });
  for (const header of [
    "Bearer",
    "Bearer a b",
    'Bearer "quoted"',
    `Bearer ${"a".repeat(10)}\u0000`,
  ]) {
    await assert.rejects(verifier.verify(header), refusal(400, "invalid_request"), header);
  }
});

test("[RFC8707-audience] a token issued for another resource is 401 invalid_token", async () => {
  const verifier = createTokenVerifier({
    issuer: idp.issuer,
    audience: "https://other.example.test/",
    resourceMetadataUrl: PRM,
  });
  await assert.rejects(verifier.verify(`Bearer ${token.reveal()}`), refusal(401, "invalid_token"));
});

test("[RFC6750-invalid-token] forged, tampered and garbage tokens are 401 invalid_token", async () => {
  const verifier = createTokenVerifier({
    issuer: idp.issuer,
    audience: TEST_RESOURCE,
    resourceMetadataUrl: PRM,
  });
  const [h, p, s] = token.reveal().split(".");
  const payload = JSON.parse(Buffer.from(p ?? "", "base64url").toString());
  const tampered = `${h}.${Buffer.from(JSON.stringify({ ...payload, sub: "mallory" })).toString("base64url")}.${s}`;
  for (const bad of [tampered, "not-a-jwt", `${h}.${p}.`, "e30.e30.e30"]) {
    await assert.rejects(verifier.verify(`Bearer ${bad}`), refusal(401, "invalid_token"));
  }
});

test("[RFC6750-insufficient-scope] a token lacking a required scope is 403 with the scope named", async () => {
  const verifier = createTokenVerifier({
    issuer: idp.issuer,
    audience: TEST_RESOURCE,
    resourceMetadataUrl: PRM,
    requiredScopes: ["write"],
  });
  await assert.rejects(verifier.verify(`Bearer ${token.reveal()}`), (e: unknown) => {
    refusal(403, "insufficient_scope")(e);
    const bearer = findBearerChallenge(
      parseWwwAuthenticate((e as TokenVerificationError).challenge.header),
    );
    assert.equal(bearer?.parameters.scope, "write");
    return true;
  });
});

test("[RFC9068-expired] an expired JWT access token is 401 invalid_token", async () => {
  const shortIdp = await useIdp({ accessTokenTtlSeconds: 1 });
  const shortStore = new MemoryCredentialStore();
  const short = await loginForTest(shortIdp, shortStore, {
    resource: TEST_RESOURCE,
    scope: "openid read",
  });
  const verifier = createTokenVerifier({
    issuer: shortIdp.issuer,
    audience: TEST_RESOURCE,
    resourceMetadataUrl: PRM,
    clockToleranceSeconds: 0,
  });
  await new Promise((r) => setTimeout(r, 2100));
  await assert.rejects(
    verifier.verify(`Bearer ${short.tokens.accessToken?.reveal()}`),
    (e: unknown) =>
      e instanceof TokenVerificationError &&
      e.bearerError === "invalid_token" &&
      /expired/.test(e.message),
  );
});

test("[RFC7662-introspection] introspection mode accepts a live token and refuses it once the grant is revoked", async () => {
  const own = await loginForTest(idp, new MemoryCredentialStore(), {
    resource: OPAQUE_RESOURCE,
    scope: "openid read",
  });
  assert.equal(own.tokens.accessToken?.reveal().split(".").length, 1, "an opaque token");
  const client = {
    clientId: CONFIDENTIAL_CLIENT.client_id,
    clientSecret: new Secret(CONFIDENTIAL_CLIENT.client_secret),
  };
  const verifier = createTokenVerifier({
    issuer: idp.issuer,
    audience: OPAQUE_RESOURCE,
    resourceMetadataUrl: PRM,
    method: { kind: "introspection", client },
  });
  const verified = await verifier.verifyToken(own.tokens.accessToken as Secret);
  assert.equal(verified.subject, "alice");
  const other = createTokenVerifier({
    issuer: idp.issuer,
    audience: "https://other.example.test/",
    resourceMetadataUrl: PRM,
    method: { kind: "introspection", client },
  });
  await assert.rejects(
    other.verifyToken(own.tokens.accessToken as Secret),
    refusal(401, "invalid_token"),
  );
  const as = await discoverAuthorizationServer(idp.issuer);
  await revokeTokens({
    as,
    client: { clientId: "agentauth-cli" },
    refreshToken: own.tokens.refreshToken,
    accessToken: own.tokens.accessToken,
  });
  await assert.rejects(
    verifier.verifyToken(own.tokens.accessToken as Secret),
    refusal(401, "invalid_token"),
  );
});
