import assert from "node:assert/strict";
import { test } from "node:test";
import {
  AuthorizationResponseError,
  completeAuthorization,
  DiscoveryError,
  discoverAuthorizationServer,
  introspectToken,
  listenOnLoopback,
  MemoryPendingStore,
  type PendingAuthorization,
  startAuthorization,
  TokenEndpointError,
} from "../../src/oauth/index.ts";
import { TEST_RESOURCE } from "../support/credentials.ts";
import { useIdp } from "../support/idp.ts";

const idp = await useIdp();
const as = await discoverAuthorizationServer(idp.issuer);
const client = { clientId: "agentauth-cli" };
const REDIRECT = "http://127.0.0.1:9/callback";

/** Starts a flow and lets the auto-approving server answer; returns the callback URL without following it. */
async function authorize(
  pending: MemoryPendingStore<PendingAuthorization>,
  scope = "openid email offline_access read",
) {
  const started = await startAuthorization({
    as,
    client,
    redirectUri: REDIRECT,
    scope,
    resource: TEST_RESOURCE,
    pending,
  });
  const response = await fetch(started.url, { redirect: "manual" });
  assert.equal(response.status, 303);
  return { started, callback: new URL(response.headers.get("location") ?? "") };
}

test("[RFC7636-S256-always] the authorization URL carries an S256 challenge, a 256-bit state, nonce and resource", async () => {
  const pending = new MemoryPendingStore<PendingAuthorization>();
  const { url, state } = await startAuthorization({
    as,
    client,
    redirectUri: REDIRECT,
    scope: "openid",
    resource: TEST_RESOURCE,
    pending,
  });
  assert.equal(url.searchParams.get("code_challenge_method"), "S256");
  assert.match(url.searchParams.get("code_challenge") ?? "", /^[A-Za-z0-9_-]{43}$/);
  assert.equal(url.searchParams.get("state"), state);
  assert.ok(Buffer.from(state, "base64url").length >= 16, "state has at least 128 random bits");
  assert.ok(url.searchParams.get("nonce"));
  assert.equal(url.searchParams.get("resource"), TEST_RESOURCE);
  assert.equal(pending.size(), 1);
});

test("[RFC6749-code-flow] a full code flow yields tokens, a JWT access token for the resource, and the account", async () => {
  const pending = new MemoryPendingStore<PendingAuthorization>();
  const { callback } = await authorize(pending);
  assert.equal(callback.searchParams.get("iss"), idp.issuer, "RFC 9207 iss is present");
  const tokens = await completeAuthorization({ as, client, callback, pending });
  assert.equal(tokens.subject, "alice");
  assert.equal(tokens.account.email, "alice@example.test");
  assert.ok(tokens.refreshToken);
  const [, payload] = tokens.accessToken.reveal().split(".");
  assert.equal(
    JSON.parse(Buffer.from(payload ?? "", "base64url").toString()).aud,
    TEST_RESOURCE,
    "RFC 8707: aud = resource",
  );
  assert.equal(pending.size(), 0, "state is single use");
});

test("[STATE-replay-refused] a replayed callback is refused before any token request", async () => {
  const pending = new MemoryPendingStore<PendingAuthorization>();
  const { callback } = await authorize(pending);
  await completeAuthorization({ as, client, callback, pending });
  idp.resetStats();
  await assert.rejects(
    completeAuthorization({ as, client, callback, pending }),
    (e: unknown) => e instanceof AuthorizationResponseError && e.code === "state_invalid",
  );
  assert.deepEqual(idp.stats.byGrant, {}, "nothing reached the token endpoint");
});

test("[STATE-altered-refused] an altered or missing state is refused", async () => {
  const pending = new MemoryPendingStore<PendingAuthorization>();
  const { callback } = await authorize(pending);
  const state = callback.searchParams.get("state") ?? "";
  for (const forged of [
    `${state.slice(0, -1)}${state.endsWith("A") ? "B" : "A"}`,
    "",
    "x".repeat(10_000),
  ]) {
    const altered = new URL(callback);
    altered.searchParams.set("state", forged);
    await assert.rejects(
      completeAuthorization({ as, client, callback: altered, pending }),
      (e: unknown) => e instanceof AuthorizationResponseError && e.code === "state_invalid",
    );
  }
  const missing = new URL(callback);
  missing.searchParams.delete("state");
  await assert.rejects(
    completeAuthorization({ as, client, callback: missing, pending }),
    AuthorizationResponseError,
  );
  // The genuine callback still works: failed attempts did not consume it.
  await completeAuthorization({ as, client, callback, pending });
});

test("[STATE-expiry] an expired state is refused", async () => {
  const pending = new MemoryPendingStore<PendingAuthorization>({ ttlMs: 1 });
  const { callback } = await authorize(pending);
  await new Promise((r) => setTimeout(r, 5));
  await assert.rejects(
    completeAuthorization({ as, client, callback, pending }),
    (e: unknown) => e instanceof AuthorizationResponseError && e.code === "state_invalid",
  );
});

test("[RFC9207-iss-mismatch] a callback whose iss names another server, or lacks iss, is refused", async () => {
  for (const mutate of [
    (u: URL) => u.searchParams.set("iss", "https://evil.example"),
    (u: URL) => u.searchParams.delete("iss"),
  ]) {
    const pending = new MemoryPendingStore<PendingAuthorization>();
    const { callback } = await authorize(pending);
    mutate(callback);
    idp.resetStats();
    await assert.rejects(
      completeAuthorization({ as, client, callback, pending }),
      (e: unknown) => e instanceof AuthorizationResponseError && e.code === "iss_mismatch",
    );
    assert.deepEqual(idp.stats.byGrant, {});
  }
});

test("[RFC6749-code-replay] a replayed authorization code is refused by the server and the first tokens are revoked", async () => {
  // A pending store that remembers what it handed out, so the same code can be presented again with its verifier.
  const inner = new MemoryPendingStore<PendingAuthorization>();
  let consumed: PendingAuthorization | undefined;
  const pending = {
    create: inner.create.bind(inner),
    size: inner.size.bind(inner),
    consume: (s: string | null | undefined) => (consumed = inner.consume(s)),
  };
  const { callback } = await authorize(pending as MemoryPendingStore<PendingAuthorization>);
  const first = await completeAuthorization({ as, client, callback, pending });
  assert.ok(consumed && first.refreshToken);
  const replay = new URL(callback);
  replay.searchParams.set("state", inner.create(consumed));
  await assert.rejects(
    completeAuthorization({ as, client, callback: replay, pending }),
    (e: unknown) => e instanceof TokenEndpointError && e.oauthError === "invalid_grant",
  );
  const info = await introspectToken({
    as,
    client,
    token: first.refreshToken,
    tokenTypeHint: "refresh_token",
  });
  assert.equal(info.active, false, "oidc-provider revokes the grant when a code is replayed");
});

test("[PKCE-downgrade-refused] an authorization server that does not advertise S256 is refused before any request", async () => {
  const pending = new MemoryPendingStore<PendingAuthorization>();
  for (const methods of [undefined, ["plain"]]) {
    const weak = { ...as, code_challenge_methods_supported: methods };
    await assert.rejects(
      startAuthorization({ as: weak, client, redirectUri: REDIRECT, pending }),
      (e: unknown) => e instanceof DiscoveryError && e.code === "pkce_unsupported",
    );
  }
  assert.equal(pending.size(), 0);
});

test("[PKCE-server-enforced] the embedded server refuses an authorization request without PKCE", async () => {
  const url = new URL(as.authorization_endpoint ?? "");
  url.search = new URLSearchParams({
    client_id: "agentauth-cli",
    redirect_uri: REDIRECT,
    response_type: "code",
    scope: "openid",
    state: "s",
  }).toString();
  const response = await fetch(url, { redirect: "manual" });
  const location = new URL(response.headers.get("location") ?? "http://x/");
  assert.equal(location.searchParams.get("error"), "invalid_request");
  assert.equal(location.searchParams.get("code"), null);
});

test("[OAUTH-access-denied] an error response with a valid state becomes a typed access_denied error", async () => {
  const pending = new MemoryPendingStore<PendingAuthorization>();
  const { state } = await startAuthorization({
    as,
    client,
    redirectUri: REDIRECT,
    scope: "openid",
    pending,
  });
  const callback = new URL(REDIRECT);
  callback.search = new URLSearchParams({
    error: "access_denied",
    error_description: "user said no",
    state,
    iss: as.issuer,
  }).toString();
  await assert.rejects(
    completeAuthorization({ as, client, callback, pending }),
    (e: unknown) =>
      e instanceof AuthorizationResponseError &&
      e.code === "access_denied" &&
      e.oauthError === "access_denied",
  );
});

test("[RFC8252-loopback] the loopback listener ignores requests without the expected state and resolves on the right one", async () => {
  const listener = await listenOnLoopback();
  try {
    const wait = listener.waitForCallback("expected-state-value", { timeoutMs: 5000 });
    const wrong = await fetch(`${listener.redirectUri}?code=stolen&state=other`);
    assert.equal(wrong.status, 400);
    const other = await fetch(listener.redirectUri.replace("/callback", "/elsewhere"));
    assert.equal(other.status, 400);
    const right = await fetch(`${listener.redirectUri}?code=abc&state=expected-state-value`);
    assert.equal(right.status, 200);
    const url = await wait;
    assert.equal(url.searchParams.get("code"), "abc");
  } finally {
    await listener.close();
  }
});

test("[RFC8252-loopback-cancel] waiting for the browser can be cancelled", async () => {
  const listener = await listenOnLoopback();
  try {
    const controller = new AbortController();
    const wait = listener.waitForCallback("s", { signal: controller.signal });
    controller.abort();
    await assert.rejects(wait, (e: unknown) => (e as { code?: string }).code === "cancelled");
  } finally {
    await listener.close();
  }
});
