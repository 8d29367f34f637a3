/**
 * The engine with the Linear preset against the Linear simulator (test/sims/linear.ts, written from
 * linear.app/developers/oauth-2-0-authentication): the real origins remapped to the simulator, a PKCE login whose
 * token answer carries scope as an array, the GraphQL viewer, rotating refresh tokens, revocation, hostile answers.
 */

import assert from "node:assert/strict";
import { after, test } from "node:test";
import {
  AuthorizationResponseError,
  LoginRequiredError,
  login,
  logout,
  RateLimitedError,
  TokenEndpointError,
  TokenRefresher,
} from "../../src/oauth/index.ts";
import { linear, presetForIssuer, resolveProvider } from "../../src/providers/index.ts";
import { MemoryCredentialStore } from "../../src/vault/index.ts";
import { type LinearSimulator, startLinearSimulator } from "../sims/linear.ts";
import { expireAccessToken } from "../support/credentials.ts";
import { browse } from "./support.ts";

async function simulator(options = {}): Promise<LinearSimulator> {
  const sim = await startLinearSimulator(options);
  after(() => sim.close());
  return sim;
}

const origins = (sim: LinearSimulator) => ({
  "https://linear.app": sim.url,
  "https://api.linear.app": sim.url,
});
const providerFor = (sim: LinearSimulator, scope?: string) =>
  linear({ clientId: sim.clientId, clientSecret: sim.clientSecret, origins: origins(sim), scope });

function assertNoSecret(error: unknown, sim: LinearSimulator): void {
  const text = `${(error as Error).message} ${JSON.stringify(error)} ${String((error as Error).cause)}`;
  assert.equal(text.includes(sim.clientSecret), false, "the client secret is not in the error");
  for (const value of Object.values(sim.lastTokenRequest()?.params ?? {})) {
    if (value.length >= 16)
      assert.equal(text.includes(value), false, "no request value is in the error");
  }
}

test("[PROV-linear-browser-login] a PKCE login stores the token, the array scope as a list, and the GraphQL viewer", async () => {
  const sim = await simulator();
  const store = new MemoryCredentialStore();
  const record = await login({
    provider: providerFor(sim, "read,issues:create"),
    flow: "browser",
    store,
    openUrl: browse,
  });
  assert.equal(record.issuer, "https://linear.app");
  assert.equal(record.subject, "8f1c2a6e-5d4b-4c3a-9e2f-1a2b3c4d5e6f");
  assert.equal(record.account.login, "alice");
  assert.equal(record.account.email, "alice@example.com");
  assert.deepEqual(record.scopes, ["read", "issues:create"]);
  assert.ok(record.tokens.refreshToken);
  assert.ok(sim.lastTokenRequest()?.params.code_verifier, "PKCE was used");
  assert.equal(sim.lastTokenRequest()?.auth, "post");
  assert.equal(record.provider?.name, "linear");
  assert.ok(sim.isActive(record.tokens.accessToken?.reveal() ?? ""));
});

test("[PROV-linear-scope-string] a comma-separated string scope in the answer is read the same way", async () => {
  const sim = await simulator({ scopeFormat: "string" });
  const store = new MemoryCredentialStore();
  const record = await login({
    provider: providerFor(sim, "read,write"),
    flow: "browser",
    store,
    openUrl: browse,
  });
  assert.deepEqual(record.scopes, ["read", "write"]);
});

test("[PROV-linear-refresh-rotation] 20 callers at expiry refresh once; the rotated refresh token replaces the retired one", async () => {
  const sim = await simulator();
  const store = new MemoryCredentialStore();
  const first = await login({
    provider: providerFor(sim),
    flow: "browser",
    store,
    openUrl: browse,
  });
  const record = await expireAccessToken(store, first);
  const refresher = new TokenRefresher({ store, providers: resolveProvider });
  const tokens = await Promise.all(
    Array.from({ length: 20 }, () => refresher.getAccessToken(record)),
  );
  assert.equal(new Set(tokens.map((t) => t.reveal())).size, 1);
  assert.equal(sim.stats().refreshGrants, 1);
  const stored = await store.get(record);
  assert.notEqual(stored?.tokens.refreshToken?.reveal(), first.tokens.refreshToken?.reveal());
  assert.equal(sim.isRefreshTokenActive(first.tokens.refreshToken?.reveal() ?? ""), false);
  assert.ok(sim.isActive(tokens[0]?.reveal() ?? ""));
});

test("[PROV-linear-revoke] logout revokes at api.linear.app/oauth/revoke, then deletes the credential", async () => {
  const sim = await simulator();
  const store = new MemoryCredentialStore();
  const record = await login({
    provider: providerFor(sim),
    flow: "browser",
    store,
    openUrl: browse,
  });
  const result = await logout({ store, key: record, providers: resolveProvider });
  assert.equal(result.revoked, true, String(result.error));
  assert.deepEqual(result.outcome, { accessToken: "revoked", refreshToken: "revoked" });
  assert.equal(result.deleted, true);
  assert.equal(sim.grantCount(), 0);
  assert.equal(sim.isActive(record.tokens.accessToken?.reveal() ?? ""), false);
  assert.equal(sim.isRefreshTokenActive(record.tokens.refreshToken?.reveal() ?? ""), false);
});

test("[PROV-linear-revoke-public-expired] a public client whose access token Linear no longer accepts: logout never reports the refresh token it could not send as absent; the credential is kept with a typed error saying where to revoke", async () => {
  const sim = await simulator();
  for (const localExpiry of [false, true]) {
    const store = new MemoryCredentialStore();
    const provider = linear({ clientId: sim.clientId, origins: origins(sim) });
    const record = await login({ provider, flow: "browser", store, openUrl: browse });
    const refreshToken = record.tokens.refreshToken?.reveal() ?? "";
    assert.ok(refreshToken, "Linear issued a refresh token");
    // Expired at Linear; here either known (the engine first tries a refresh, which Linear refuses without the
    // client secret) or not (the clocks disagree: the revocation call itself meets the 400).
    sim.advanceTime(2 * 86_400);
    if (localExpiry) await expireAccessToken(store, record);
    const result = await logout({ store, key: record, providers: resolveProvider });
    assert.equal(sim.isRefreshTokenActive(refreshToken), true, "the grant is still live at Linear");
    assert.equal(result.revoked, false, `not reported revoked: ${JSON.stringify(result.outcome)}`);
    assert.equal(result.deleted, false, "kept, so the person can retry or revoke in Linear");
    assert.ok(await store.get(record), "still in the store");
    if (!localExpiry) {
      assert.equal((result.error as { code?: string }).code, "provider_revocation_unconfirmed");
      assert.match(
        String(result.error?.message),
        /Linear .*Settings → Account → Security & access/,
      );
    }
    assertNoSecret(result.error, sim);
  }
});

test("[PROV-linear-revoked-refresh] a refresh token Linear no longer accepts marks the credential login_required", async () => {
  const sim = await simulator();
  const store = new MemoryCredentialStore();
  const first = await login({
    provider: providerFor(sim),
    flow: "browser",
    store,
    openUrl: browse,
  });
  // Someone else used (and so retired) the refresh token.
  const used = await fetch(`${sim.url}/oauth/token`, {
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded" },
    body: new URLSearchParams({
      grant_type: "refresh_token",
      refresh_token: first.tokens.refreshToken?.reveal() ?? "",
      client_id: sim.clientId,
      client_secret: sim.clientSecret,
    }),
  });
  assert.equal(used.status, 200);
  const record = await expireAccessToken(store, first);
  await assert.rejects(
    new TokenRefresher({ store, providers: resolveProvider }).getAccessToken(record),
    (error: unknown) => {
      assert.ok(error instanceof LoginRequiredError, String(error));
      assertNoSecret(error, sim);
      return true;
    },
  );
  assert.equal((await store.get(record))?.status, "login_required");
});

test("[PROV-linear-hostile-answers] an HTML 502, a 200 without a token, Linear's 400 RATELIMITED and a 500 are typed errors; nothing stored, no secret shown", async () => {
  const sim = await simulator();
  const cases = [
    ["html", "server_error"],
    ["no_token", "invalid_response"],
    ["rate_limit", "rate_limited"],
    ["server_error", "server_error"],
  ] as const;
  for (const [fault, code] of cases) {
    const store = new MemoryCredentialStore();
    sim.failNext(fault);
    await assert.rejects(
      login({ provider: providerFor(sim), flow: "browser", store, openUrl: browse }),
      (error: unknown) => {
        assert.ok(error instanceof TokenEndpointError, `${fault}: ${String(error)}`);
        assert.equal(error.code, code, `${fault}: ${error.message}`);
        if (fault === "rate_limit") {
          assert.ok(error instanceof RateLimitedError);
          assert.ok((error.retryAfterMs ?? 0) > 0);
        }
        assertNoSecret(error, sim);
        return true;
      },
    );
    assert.deepEqual(await store.list(), [], `${fault}: nothing stored`);
  }
});

test("[PROV-linear-denial] the person declining is AuthorizationResponseError access_denied, and nothing is stored", async () => {
  const sim = await simulator({ deny: true });
  const store = new MemoryCredentialStore();
  await assert.rejects(
    login({ provider: providerFor(sim), flow: "browser", store, openUrl: browse }),
    (error: unknown) =>
      error instanceof AuthorizationResponseError && error.oauthError === "access_denied",
  );
  assert.deepEqual(await store.list(), []);
  assert.equal(presetForIssuer("https://linear.app")?.preset.name, "linear");
});

test("[PROV-linear-scope-format] space-separated scopes go out comma-separated, as Linear's authorize endpoint wants", async () => {
  const sim = await simulator();
  const store = new MemoryCredentialStore();
  let seen: URL | undefined;
  const record = await login({
    provider: providerFor(sim, "read write"),
    flow: "browser",
    store,
    openUrl: async (url) => {
      seen = url;
      await browse(url);
    },
  });
  assert.equal(seen?.searchParams.get("scope"), "read,write");
  assert.deepEqual(record.scopes, ["read", "write"]);
});
