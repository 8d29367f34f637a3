import assert from "node:assert/strict";
import { test } from "node:test";
import {
  authorizationRedirect,
  authorizationUrl,
  LOOPBACK_REDIRECT,
  pkce,
  tokenRequest,
} from "../support/authorize.ts";
import { useIdp } from "../support/idp.ts";

const idp = await useIdp();

/** The authorization response at the client's redirect_uri, as a plain map of its query parameters. */
async function callbackParams(url: URL): Promise<Record<string, string>> {
  const callback = await authorizationRedirect(url);
  assert.equal(
    `${callback.origin}${callback.pathname}`,
    LOOPBACK_REDIRECT,
    "the answer goes to the client",
  );
  return Object.fromEntries(callback.searchParams);
}

test("[IDP-pkce-required] discovery advertises S256 and nothing else", async () => {
  const metadata = (await (
    await fetch(`${idp.issuer}/.well-known/openid-configuration`)
  ).json()) as Record<string, unknown>;
  assert.deepEqual(metadata.code_challenge_methods_supported, ["S256"]);
});

test("[IDP-pkce-required] an S256 authorization request gets a code (control)", async () => {
  const { challenge } = await pkce();
  const params = await callbackParams(authorizationUrl(idp.issuer, challenge));
  assert.ok(params.code, JSON.stringify(params));
  assert.equal(params.error, undefined);
});

test("[IDP-pkce-required] an authorization request without code_challenge is refused with invalid_request", async () => {
  const url = authorizationUrl(idp.issuer, "", {
    code_challenge: undefined,
    code_challenge_method: undefined,
  });
  const params = await callbackParams(url);
  assert.equal(params.error, "invalid_request");
  assert.match(params.error_description ?? "", /PKCE/);
  assert.equal(params.code, undefined);
  assert.equal(params.state, url.searchParams.get("state"));
});

test("[IDP-pkce-required] code_challenge_method=plain is refused", async () => {
  const { verifier } = await pkce();
  const params = await callbackParams(
    authorizationUrl(idp.issuer, verifier, { code_challenge_method: "plain" }),
  );
  assert.equal(params.error, "invalid_request");
  assert.match(params.error_description ?? "", /code_challenge_method/);
  assert.equal(params.code, undefined);
});

test("[IDP-pkce-required] a code redeemed with the wrong code_verifier is refused with invalid_grant", async () => {
  const { challenge } = await pkce();
  const params = await callbackParams(authorizationUrl(idp.issuer, challenge));
  const wrong = await pkce();
  const answer = await tokenRequest(idp.issuer, {
    grant_type: "authorization_code",
    code: params.code ?? "",
    redirect_uri: LOOPBACK_REDIRECT,
    code_verifier: wrong.verifier,
  });
  assert.equal(answer.status, 400);
  assert.equal(answer.body.error, "invalid_grant");
  assert.equal(answer.body.access_token, undefined);
});
