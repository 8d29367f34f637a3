/**
 * RFC 7591 §3.2.1 registration answers as real servers send them (the MCP conformance suite's authorization server,
 * and many in production): a `client_secret` without `client_secret_expires_at`, a secret handed to a client that
 * registered as public, a method other than the one asked for. The strict embedded server registers and then signs
 * the client in; a proxy in front of its registration endpoint only rewrites the answer.
 */

import assert from "node:assert/strict";
import { test } from "node:test";
import {
  deviceLogin,
  discoverAuthorizationServer,
  registerClient,
  TokenEndpointError,
} from "../../src/oauth/index.ts";
import { useIdp } from "../support/idp.ts";
import { rewritingProxy } from "../support/rewriting-proxy.ts";

const idp = await useIdp();
const as = await discoverAuthorizationServer(idp.issuer);
const registrationPath = new URL(as.registration_endpoint as string).pathname;

const DEVICE_METADATA = {
  client_name: "tolerance test app",
  application_type: "native",
  grant_types: ["urn:ietf:params:oauth:grant-type:device_code", "refresh_token"],
  response_types: [] as string[],
  redirect_uris: [] as string[],
};

/** The device flow with the auto-approving server playing the person: proves the client authenticates. */
async function signsIn(client: Awaited<ReturnType<typeof registerClient>>) {
  const tokens = await deviceLogin({
    as,
    client,
    scope: "openid",
    onPrompt: (p) => void fetch(p.verificationUriComplete ?? "").then((r) => r.arrayBuffer()),
  });
  assert.equal(tokens.subject, "alice");
}

test("[RFC7591-secret-no-expiry] a client_secret without client_secret_expires_at is taken as one that does not expire, and authenticates", async () => {
  const proxy = await rewritingProxy(idp.issuer, {
    [registrationPath]: ({ client_secret_expires_at: _dropped, ...body }) => body,
  });
  const registered = await registerClient({
    as: { ...as, registration_endpoint: `${proxy.origin}${registrationPath}` },
    metadata: { ...DEVICE_METADATA, token_endpoint_auth_method: "client_secret_basic" },
  });
  assert.deepEqual(proxy.paths, [registrationPath]);
  assert.ok(registered.clientSecret, "the secret is kept");
  assert.equal(registered.authMethod, "client_secret_basic");
  assert.equal(registered.clientSecretExpiresAt, undefined, "never expires");
  await signsIn(registered);
});

test("[RFC7591-public-ignores-secret] a public client keeps no secret it did not ask for when the answer names no confidential method", async () => {
  const proxy = await rewritingProxy(idp.issuer, {
    [registrationPath]: ({ token_endpoint_auth_method: _method, ...body }) => ({
      ...body,
      client_secret: "a-secret-nobody-asked-for",
    }),
  });
  const registered = await registerClient({
    as: { ...as, registration_endpoint: `${proxy.origin}${registrationPath}` },
    metadata: { ...DEVICE_METADATA, token_endpoint_auth_method: "none" },
  });
  assert.equal(registered.clientSecret, undefined);
  assert.equal(registered.authMethod, "none");
  await signsIn(registered);
});

test("[RFC7591-answered-method] the method the server registered wins over the one asked for (§3.2.1: the answer holds the registered values)", async () => {
  const registered = await registerClient({
    as,
    metadata: { ...DEVICE_METADATA, token_endpoint_auth_method: "client_secret_post" },
  });
  assert.equal(registered.authMethod, "client_secret_post");
  const proxy = await rewritingProxy(idp.issuer, {
    [registrationPath]: (body) => ({ ...body, token_endpoint_auth_method: "client_secret_post" }),
  });
  const switched = await registerClient({
    as: { ...as, registration_endpoint: `${proxy.origin}${registrationPath}` },
    metadata: { ...DEVICE_METADATA, token_endpoint_auth_method: "client_secret_basic" },
  });
  assert.equal(switched.authMethod, "client_secret_post");
});

test("[RFC7591-answer-strict] an answer agentauth cannot use is a typed error: no client_id, an unknown method, a confidential method without a secret", async () => {
  const cases: [string, (body: Record<string, unknown>) => Record<string, unknown>][] = [
    ["no client_id", ({ client_id: _id, ...body }) => body],
    ["unknown method", (body) => ({ ...body, token_endpoint_auth_method: "tls_client_auth" })],
    [
      "confidential without a secret",
      ({ client_secret: _s, ...body }) => ({
        ...body,
        token_endpoint_auth_method: "client_secret_basic",
      }),
    ],
  ];
  for (const [name, rewrite] of cases) {
    const proxy = await rewritingProxy(idp.issuer, { [registrationPath]: rewrite });
    await assert.rejects(
      registerClient({
        as: { ...as, registration_endpoint: `${proxy.origin}${registrationPath}` },
        metadata: { ...DEVICE_METADATA, token_endpoint_auth_method: "client_secret_basic" },
      }),
      (e: unknown) =>
        e instanceof TokenEndpointError &&
        (e.code === "invalid_response" || e.code === "registration_unusable") &&
        !e.message.includes("secret-"),
      name,
    );
  }
});
