/**
 * A verifier meets a token signed with a key it does not hold: after the authorization server rotated its keys (here:
 * the embedded server restarted on the same issuer URL with new in-memory keys) it refetches the JWKS at once
 * instead of refusing valid tokens until its copy is a minute old; tokens with made-up `kid`s make at most one fetch
 * per cooldown.
 */

import assert from "node:assert/strict";
import { generateKeyPairSync, randomBytes, sign } from "node:crypto";
import { after, test } from "node:test";
import type { Secret } from "../../src/core/secret.ts";
import { type RunningIdp, startIdp } from "../../src/idp/index.ts";
import {
  createTokenVerifier,
  discoverAuthorizationServer,
  MetadataCache,
  TokenVerificationError,
} from "../../src/oauth/index.ts";
import { JWKS_REFETCH_COOLDOWN_SECONDS } from "../../src/oauth/verifier.ts";
import { MemoryCredentialStore } from "../../src/vault/index.ts";
import { loginForTest, TEST_RESOURCE } from "../support/credentials.ts";

const running = new Set<RunningIdp>();
after(async () => {
  for (const idp of running) await idp.close();
});

async function start(port?: number): Promise<RunningIdp> {
  const idp = await startIdp({ autoApproveAs: "alice", port });
  running.add(idp);
  return idp;
}

/** Stops the server and starts a new one on the same port: same issuer URL, new signing keys (kept in memory). */
async function restart(idp: RunningIdp): Promise<RunningIdp> {
  await idp.close();
  running.delete(idp);
  return start(idp.port);
}

async function accessToken(idp: RunningIdp): Promise<Secret> {
  const record = await loginForTest(idp, new MemoryCredentialStore(), {
    resource: TEST_RESOURCE,
    scope: "openid read",
  });
  return record.tokens.accessToken as Secret;
}

function kidOf(token: Secret): string {
  const header = JSON.parse(
    Buffer.from(token.reveal().split(".")[0] ?? "", "base64url").toString(),
  );
  return header.kid;
}

/** Counts GET requests to the JWKS URL made through the global fetch (what oauth4webapi uses). */
let jwksUri = "";
let jwksFetches = 0;
const realFetch = globalThis.fetch;
globalThis.fetch = (input, init) => {
  const url = input instanceof Request ? input.url : String(input);
  if (jwksUri && url === jwksUri) jwksFetches++;
  return realFetch(input, init);
};
after(() => {
  globalThis.fetch = realFetch;
});

let idp = await start();
jwksUri = String((await discoverAuthorizationServer(idp.issuer)).jwks_uri);
const issuer = idp.issuer;

/** A well-formed RFC 9068 token for our resource, signed by a key the authorization server never had. */
function forgedToken(): string {
  const { privateKey } = generateKeyPairSync("ec", { namedCurve: "P-256" });
  const now = Math.floor(Date.now() / 1000);
  const part = (value: object) => Buffer.from(JSON.stringify(value)).toString("base64url");
  const input = `${part({ alg: "ES256", typ: "at+jwt", kid: randomBytes(8).toString("hex") })}.${part(
    {
      iss: issuer,
      aud: TEST_RESOURCE,
      sub: "mallory",
      client_id: "agentauth-cli",
      scope: "read",
      iat: now,
      exp: now + 300,
      jti: randomBytes(8).toString("hex"),
    },
  )}`;
  const signature = sign("sha256", Buffer.from(input), {
    key: privateKey,
    dsaEncoding: "ieee-p1363",
  });
  return `${input}.${signature.toString("base64url")}`;
}

/** Each verifier discovers with its own metadata cache, so no test sees another's key set through a shared object. */
function newVerifier() {
  return createTokenVerifier({
    issuer,
    audience: TEST_RESOURCE,
    discovery: { cache: new MetadataCache() },
  });
}

function invalidToken(e: unknown) {
  assert.ok(e instanceof TokenVerificationError, String(e));
  assert.equal(e.code, "invalid_token");
  assert.equal(e.bearerError, "invalid_token");
  assert.equal(e.challenge.status, 401);
  return true;
}

test("[OAUTH-verifier-key-rotation] after the authorization server restarts with new keys, its first new token is accepted", async (t) => {
  const verifier = newVerifier();
  const oldToken = await accessToken(idp);
  const before = jwksFetches;
  assert.equal((await verifier.verifyToken(oldToken)).subject, "alice");
  assert.equal(jwksFetches - before, 1, "the first verification fetches the key set");

  idp = await restart(idp);
  assert.equal(idp.issuer, issuer, "same issuer URL");
  const newToken = await accessToken(idp);
  assert.notEqual(kidOf(newToken), kidOf(oldToken), "the restarted server signs with a new key");

  const refetchedAt = performance.now();
  const verified = await verifier.verifyToken(newToken, ["read"]);
  assert.equal(verified.subject, "alice", "accepted on the first call");
  assert.equal(jwksFetches - before, 2, "one refetch for the new key");

  // The old key is gone from the server: its token is refused, and (within the cooldown) without another fetch.
  await assert.rejects(verifier.verifyToken(oldToken), invalidToken);
  const elapsed = (performance.now() - refetchedAt) / 1000;
  t.diagnostic(`refetch to old-token refusal: ${elapsed.toFixed(2)} s`);
  if (elapsed < JWKS_REFETCH_COOLDOWN_SECONDS) {
    assert.equal(jwksFetches - before, 2, "no fetch for the old key within the cooldown");
  }
  assert.equal((await verifier.verifyToken(newToken)).subject, "alice", "the new key set is kept");
});

test("[OAUTH-verifier-key-rotation] concurrent verifications of a token with a new key share one JWKS fetch", async () => {
  const verifier = newVerifier();
  assert.equal((await verifier.verifyToken(await accessToken(idp))).subject, "alice");
  idp = await restart(idp);
  const newToken = await accessToken(idp);
  const before = jwksFetches;
  const results = await Promise.all(
    Array.from({ length: 8 }, () => verifier.verifyToken(newToken, ["read"])),
  );
  assert.deepEqual(
    results.map((r) => r.subject),
    Array(8).fill("alice"),
    "every verification accepted",
  );
  assert.equal(jwksFetches - before, 1, "one fetch for all of them");
});

test("[OAUTH-verifier-key-rotation] tokens with unknown kids are refused invalid_token and fetch the JWKS at most once per cooldown", async (t) => {
  const verifier = newVerifier();
  const good = await accessToken(idp);
  assert.equal((await verifier.verifyToken(good)).subject, "alice");
  const before = jwksFetches;
  const startedAt = performance.now();
  for (let i = 0; i < 20; i++) {
    await assert.rejects(verifier.verify(`Bearer ${forgedToken()}`), invalidToken);
  }
  const concurrent = Array.from({ length: 20 }, () => verifier.verify(`Bearer ${forgedToken()}`));
  for (const attempt of concurrent) await assert.rejects(attempt, invalidToken);
  const elapsed = (performance.now() - startedAt) / 1000;
  const fetches = jwksFetches - before;
  t.diagnostic(`40 forged tokens: ${fetches} JWKS fetch(es) in ${elapsed.toFixed(2)} s`);
  assert.ok(
    fetches >= 1,
    "an unknown kid does refetch once (the cache was not refreshed early before)",
  );
  assert.ok(
    fetches <= 1 + Math.floor(elapsed / JWKS_REFETCH_COOLDOWN_SECONDS),
    `at most one fetch per ${JWKS_REFETCH_COOLDOWN_SECONDS} s cooldown, saw ${fetches} in ${elapsed.toFixed(2)} s`,
  );
  assert.equal((await verifier.verifyToken(good)).subject, "alice", "valid tokens still pass");
});

test("[OAUTH-verifier-key-rotation] a token whose kid is known but whose signature is forged is refused without a fetch", async () => {
  const verifier = newVerifier();
  const good = await accessToken(idp);
  assert.equal((await verifier.verifyToken(good)).subject, "alice");
  const [header, payload, signature] = good.reveal().split(".");
  const flipped = Buffer.from(signature ?? "", "base64url");
  flipped.writeUInt8(flipped.readUInt8(0) ^ 1, 0);
  const before = jwksFetches;
  await assert.rejects(
    verifier.verify(`Bearer ${header}.${payload}.${flipped.toString("base64url")}`),
    invalidToken,
  );
  assert.equal(jwksFetches - before, 0, "a bad signature is not an unknown key: no refetch");
});
