import assert from "node:assert/strict";
import { test } from "node:test";
import { inspect } from "node:util";
import { createLogger } from "../../src/core/log.ts";
import {
  completeAuthorization,
  discoverAuthorizationServer,
  logout,
  MemoryPendingStore,
  type PendingAuthorization,
  startAuthorization,
  TokenRefresher,
} from "../../src/oauth/index.ts";
import { MemoryCredentialStore } from "../../src/vault/index.ts";
import { expireAccessToken, TEST_RESOURCE } from "../support/credentials.ts";
import { useIdp } from "../support/idp.ts";

test("[SECRETS-never-leak] no token, code or verifier appears in any log line, error or printed record of a full run", async () => {
  const idp = await useIdp();
  const lines: string[] = [];
  const logger = createLogger({ write: (l) => lines.push(l), level: "debug" });
  const printed: string[] = [];
  const print = (value: unknown) =>
    printed.push(JSON.stringify(value) ?? "", inspect(value, { depth: 10 }), String(value));

  const as = await discoverAuthorizationServer(idp.issuer);
  const client = { clientId: "agentauth-cli" };
  const inner = new MemoryPendingStore<PendingAuthorization>();
  let verifier = "";
  const pending = {
    create: inner.create.bind(inner),
    size: inner.size.bind(inner),
    consume: (s: string | null | undefined) => {
      const value = inner.consume(s);
      verifier = value.codeVerifier.reveal();
      print(value);
      return value;
    },
  };
  const redirectUri = "http://127.0.0.1:9/callback";
  const started = await startAuthorization({
    as,
    client,
    redirectUri,
    scope: "openid email offline_access read",
    resource: TEST_RESOURCE,
    pending,
  });
  const callback = new URL(
    (await fetch(started.url, { redirect: "manual" })).headers.get("location") ?? "",
  );
  const code = callback.searchParams.get("code") ?? "";
  const tokens = await completeAuthorization({ as, client, callback, pending });
  print(tokens);

  const store = new MemoryCredentialStore();
  const stored = await store.put({
    subject: "alice",
    issuer: as.issuer,
    resource: TEST_RESOURCE,
    clientId: client.clientId,
    tokens: {
      accessToken: tokens.accessToken,
      refreshToken: tokens.refreshToken,
      idToken: tokens.idToken,
      tokenType: "Bearer",
    },
    expiresAt: tokens.expiresAt,
    scopes: tokens.scopes,
    account: tokens.account,
    status: "active",
  });
  print(stored);
  print(await store.list());
  await expireAccessToken(store, stored);
  const key = { subject: "alice", issuer: as.issuer, resource: TEST_RESOURCE };
  const refresher = new TokenRefresher({ store, logger });
  const fresh = await refresher.getCredential(key);
  print(fresh);
  // Failures too: a replayed callback and a refresh after the grant is revoked.
  try {
    await completeAuthorization({ as, client, callback, pending });
  } catch (error) {
    print(error);
    logger.error("replay", { error });
  }
  const secrets = [
    tokens.accessToken.reveal(),
    tokens.refreshToken?.reveal(),
    tokens.idToken?.reveal(),
    fresh.tokens.accessToken?.reveal(),
    fresh.tokens.refreshToken?.reveal(),
    code,
    verifier,
  ];
  await logout({ store, key });
  await store.put({
    ...key,
    clientId: client.clientId,
    tokens: { refreshToken: fresh.tokens.refreshToken },
    scopes: [],
    account: {},
    status: "active",
    expiresAt: 0,
  });
  try {
    await refresher.getAccessToken(key);
  } catch (error) {
    print(error);
    logger.error("refresh", {
      error,
      refresh_token: fresh.tokens.refreshToken?.reveal(),
      nested: { access_token: tokens.accessToken.reveal() },
    });
  }

  const everything = [...lines, ...printed].join("\n");
  assert.ok(lines.length >= 2 && printed.length >= 10, "the run produced output to search");
  for (const value of secrets) {
    assert.ok(value && value.length > 10, "each secret is known");
    assert.ok(!everything.includes(value), "a secret leaked into output");
  }
  assert.ok(code && verifier);
});
