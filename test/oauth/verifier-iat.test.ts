/**
 * Issue 20 §1.8: the token verifier accepted an access token whose `iat` (issued at) was an hour in the future: a
 * token minted by an issuer whose clock is wrong, or minted ahead of time to be used later, passed as fresh. Issue
 * times beyond the allowed clock skew (`clockToleranceSeconds`, default 5 s) are now refused with 401 invalid_token,
 * for RFC 9068 JWTs and for introspection answers (RFC 7662 `iat`) alike. The authorization server here is a
 * scripted one on loopback that signs what the test asks for with its own key and publishes the key in its JWKS:
 * no real server issues a future `iat` on purpose.
 */

import assert from "node:assert/strict";
import { generateKeyPairSync, randomBytes, sign } from "node:crypto";
import { test } from "node:test";
import { Secret } from "../../src/core/secret.ts";
import {
  createTokenVerifier,
  MetadataCache,
  TokenVerificationError,
} from "../../src/oauth/index.ts";
import { asMetadata, scriptedServer } from "../support/scripted-server.ts";

const RESOURCE = "https://api.example.test/";
const { privateKey, publicKey } = generateKeyPairSync("ec", { namedCurve: "P-256" });
const KID = "k1";
/** What the introspection endpoint answers next. */
let introspection: Record<string, unknown> = { active: false };
const as = await scriptedServer({
  "/.well-known/oauth-authorization-server": (_req, _body, origin) => ({
    body: asMetadata(origin, {
      jwks_uri: `${origin}/jwks`,
      introspection_endpoint: `${origin}/introspect`,
    }),
  }),
  "/jwks": () => ({
    body: {
      keys: [{ ...publicKey.export({ format: "jwk" }), kid: KID, alg: "ES256", use: "sig" }],
    },
  }),
  "/introspect": () => ({ body: introspection }),
});

const now = () => Math.floor(Date.now() / 1000);

/** An RFC 9068 access token for RESOURCE, signed by the scripted server's key, with `claims` overriding. */
function jwt(claims: Record<string, unknown>): Secret {
  const part = (value: object) => Buffer.from(JSON.stringify(value)).toString("base64url");
  const input = `${part({ alg: "ES256", typ: "at+jwt", kid: KID })}.${part({
    iss: as.origin,
    aud: RESOURCE,
    sub: "mallory",
    client_id: "c1",
    scope: "read",
    iat: now(),
    exp: now() + 7200,
    jti: randomBytes(8).toString("hex"),
    ...claims,
  })}`;
  const signature = sign("sha256", Buffer.from(input), {
    key: privateKey,
    dsaEncoding: "ieee-p1363",
  });
  return new Secret(`${input}.${signature.toString("base64url")}`);
}

function verifier(options: { clockToleranceSeconds?: number; introspection?: boolean } = {}) {
  return createTokenVerifier({
    issuer: as.origin,
    audience: RESOURCE,
    discovery: { cache: new MetadataCache() },
    ...(options.clockToleranceSeconds === undefined
      ? {}
      : { clockToleranceSeconds: options.clockToleranceSeconds }),
    ...(options.introspection
      ? {
          method: {
            kind: "introspection" as const,
            client: { clientId: "rs", clientSecret: new Secret("s") },
          },
        }
      : {}),
  });
}

function issuedInTheFuture(e: unknown): boolean {
  assert.ok(e instanceof TokenVerificationError, String(e));
  assert.equal(e.code, "invalid_token");
  assert.equal(e.bearerError, "invalid_token");
  assert.equal(e.challenge.status, 401);
  assert.match(e.message, /issued in the future/);
  assert.match(e.message, /clock/);
  return true;
}

test("[RFC9068-iat-future] a JWT access token issued an hour (or a minute) in the future is refused with 401 invalid_token; one inside the clock skew is accepted", async () => {
  const v = verifier();
  // Positive control: the same server, key and claims with a present iat are accepted.
  assert.equal((await v.verifyToken(jwt({}))).subject, "mallory");
  assert.equal((await v.verifyToken(jwt({ iat: now() + 2 }))).subject, "mallory", "inside 5 s");
  await assert.rejects(v.verifyToken(jwt({ iat: now() + 3600 })), issuedInTheFuture);
  await assert.rejects(v.verifyToken(jwt({ iat: now() + 60 })), issuedInTheFuture);
  // The tolerance is the verifier's setting.
  const lenient = verifier({ clockToleranceSeconds: 120 });
  assert.equal((await lenient.verifyToken(jwt({ iat: now() + 60 }))).subject, "mallory");
  await assert.rejects(lenient.verifyToken(jwt({ iat: now() + 3600 })), issuedInTheFuture);
});

test("[RFC7662-iat-future] an introspection answer whose iat is an hour in the future is refused the same way", async () => {
  const v = verifier({ introspection: true });
  const token = new Secret("opaque-token-value");
  const answer = { active: true, aud: RESOURCE, sub: "mallory", client_id: "c1", scope: "read" };
  introspection = { ...answer, iat: now(), exp: now() + 600 };
  assert.equal((await v.verifyToken(token)).subject, "mallory", "positive control");
  introspection = { ...answer, iat: now() + 3600, exp: now() + 7200 };
  await assert.rejects(v.verifyToken(token), issuedInTheFuture);
  introspection = { ...answer, exp: now() + 600 }; // no iat: nothing to judge (RFC 7662 makes it optional)
  assert.equal((await v.verifyToken(token)).subject, "mallory");
});
