/**
 * Review #11: an absurd `expires_in` (1e306 s) must not make the expiry Infinity, which the vault refuses AFTER
 * the server rotated the refresh token (losing it). The engine clamps lifetimes to 10 years before storing.
 */

import assert from "node:assert/strict";
import { test } from "node:test";
import { secret } from "../../src/core/secret.ts";
import { MetadataCache, TokenRefresher, toTokenSet } from "../../src/oauth/index.ts";
import { MemoryCredentialStore } from "../../src/vault/index.ts";
import { asMetadata, scriptedServer } from "../support/scripted-server.ts";

const TEN_YEARS_MS = 10 * 365 * 24 * 3600 * 1000;

test("[REVIEW-11-expires-in-clamped-refresh] a refresh answering expires_in 1e306 stores the rotated refresh token with a finite expiry of at most 10 years", async () => {
  const server = await scriptedServer({
    "/.well-known/oauth-authorization-server": (_r, _b, origin) => ({ body: asMetadata(origin) }),
    "/token": () => ({
      body: {
        access_token: "at-new",
        refresh_token: "rt-new",
        token_type: "Bearer",
        expires_in: 1e306,
      },
    }),
  });
  const store = new MemoryCredentialStore();
  const key = { subject: "alice", issuer: server.origin, resource: "" };
  await store.put({
    ...key,
    clientId: "c",
    tokens: { accessToken: secret("at-old"), refreshToken: secret("rt-old") },
    expiresAt: Date.now() - 1,
    scopes: [],
    account: {},
    status: "active",
  });
  const refresher = new TokenRefresher({ store, discovery: { cache: new MetadataCache() } });
  const before = Date.now();
  const token = await refresher.getAccessToken(key);
  assert.equal(token.reveal(), "at-new");
  const stored = await store.get(key);
  assert.equal(stored?.tokens.refreshToken?.reveal(), "rt-new");
  assert.ok(Number.isFinite(stored?.expiresAt));
  assert.ok((stored?.expiresAt ?? 0) <= Date.now() + TEN_YEARS_MS);
  assert.ok((stored?.expiresAt ?? 0) >= before + TEN_YEARS_MS);
  await server.close?.();
});

test("[REVIEW-11-expires-in-clamped-login] the login token set clamps an absurd expires_in and keeps ordinary ones", () => {
  const now = 1_700_000_000_000;
  const huge = toTokenSet(
    { access_token: "a", token_type: "bearer", expires_in: 1e306 } as never,
    undefined,
    now,
  );
  assert.equal(huge.expiresAt, now + TEN_YEARS_MS);
  const usual = toTokenSet(
    { access_token: "a", token_type: "bearer", expires_in: 3600 } as never,
    undefined,
    now,
  );
  assert.equal(usual.expiresAt, now + 3_600_000);
});
