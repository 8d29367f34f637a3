import assert from "node:assert/strict";
import { test } from "node:test";
import { createRemoteJWKSet, decodeProtectedHeader, jwtVerify } from "jose";
import {
  authorizationRedirect,
  authorizationUrl,
  authorizeAndRedeem,
  pkce,
  tokenRequest,
} from "../support/authorize.ts";
import { useIdp } from "../support/idp.ts";

const idp = await useIdp();
const RESOURCE = "https://api.example.test/";

async function refresh(refreshToken: string) {
  return tokenRequest(idp.issuer, { grant_type: "refresh_token", refresh_token: refreshToken });
}

async function userinfo(accessToken: string): Promise<Response> {
  const response = await fetch(`${idp.issuer}/me`, {
    headers: { authorization: `Bearer ${accessToken}` },
  });
  await response.arrayBuffer();
  return response;
}

test("[IDP-refresh-rotation-reuse] every refresh rotates the token; reusing a rotated one kills the whole family", async () => {
  const initial = await authorizeAndRedeem(idp.issuer);
  assert.equal(initial.status, 200);
  const rt1 = String(initial.body.refresh_token);

  const first = await refresh(rt1);
  assert.equal(first.status, 200, JSON.stringify(first.body));
  const rt2 = String(first.body.refresh_token);
  assert.notEqual(rt2, rt1, "a new refresh token every time");
  const second = await refresh(rt2);
  assert.equal(second.status, 200, "a rotated token works once");
  const rt3 = String(second.body.refresh_token);
  assert.notEqual(rt3, rt2);
  const accessToken = String(second.body.access_token);
  assert.equal((await userinfo(accessToken)).status, 200, "the newest access token works");

  const reuse = await refresh(rt2);
  assert.equal(reuse.status, 400);
  assert.equal(reuse.body.error, "invalid_grant");
  // RFC 9700 §4.14.2: the reuse may be an attacker's, so the newest token (rt3) dies with the grant.
  const afterReuse = await refresh(rt3);
  assert.equal(afterReuse.status, 400);
  assert.equal(afterReuse.body.error, "invalid_grant");
  assert.equal(
    (await userinfo(accessToken)).status,
    401,
    "the family's access tokens are revoked as well",
  );
});

test("[IDP-jwt-access-token] with a resource indicator the access token is an RFC 9068 JWT for that audience", async () => {
  const answer = await authorizeAndRedeem(
    idp.issuer,
    { scope: "openid read", resource: RESOURCE },
    { resource: RESOURCE },
  );
  assert.equal(answer.status, 200, JSON.stringify(answer.body));
  const token = String(answer.body.access_token);
  assert.equal(decodeProtectedHeader(token).typ, "at+jwt");
  const jwks = createRemoteJWKSet(new URL(`${idp.issuer}/jwks`));
  const { payload } = await jwtVerify(token, jwks, {
    issuer: idp.issuer,
    audience: RESOURCE,
    typ: "at+jwt",
  });
  assert.equal(payload.aud, RESOURCE);
  assert.equal(payload.sub, "alice");
  assert.equal(payload.scope, "read");
});

test("[IDP-jwt-access-token] without a resource indicator the access token is opaque", async () => {
  const answer = await authorizeAndRedeem(idp.issuer, { scope: "openid" });
  assert.equal(answer.status, 200);
  const token = String(answer.body.access_token);
  assert.notEqual(token.split(".").length, 3, "not a JWS compact serialization");
  assert.throws(() => decodeProtectedHeader(token));
});

test("[IDP-jwt-access-token] a resource with a fragment is refused with invalid_target", async () => {
  const { challenge } = await pkce();
  const callback = await authorizationRedirect(
    authorizationUrl(idp.issuer, challenge, { scope: "openid read", resource: `${RESOURCE}#frag` }),
  );
  assert.equal(callback.searchParams.get("error"), "invalid_target");
  assert.equal(callback.searchParams.get("code"), null);
});

test("[IDP-iss-param] the authorization response carries iss (RFC 9207), on success and on error", async () => {
  const metadata = (await (
    await fetch(`${idp.issuer}/.well-known/openid-configuration`)
  ).json()) as Record<string, unknown>;
  assert.equal(metadata.authorization_response_iss_parameter_supported, true);
  const { challenge } = await pkce();
  const url = authorizationUrl(idp.issuer, challenge);
  const success = await authorizationRedirect(url);
  assert.ok(success.searchParams.get("code"));
  assert.equal(success.searchParams.get("iss"), idp.issuer);
  assert.equal(success.searchParams.get("state"), url.searchParams.get("state"));
  const failure = await authorizationRedirect(
    authorizationUrl(idp.issuer, challenge, { code_challenge_method: "plain" }),
  );
  assert.ok(failure.searchParams.get("error"));
  assert.equal(failure.searchParams.get("iss"), idp.issuer);
});
