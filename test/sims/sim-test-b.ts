/** Raw-fetch helpers for the tests of helper B's simulators: PKCE pairs, form and JSON posts, following one authorization redirect, and verifying an RS256 ID token against a JWKS with node:crypto. */
import assert from "node:assert/strict";
import { createHash, createPublicKey, createVerify, randomBytes } from "node:crypto";

export const REDIRECT = "http://127.0.0.1:45678/callback";

export function pkce(): { verifier: string; challenge: string } {
  const verifier = randomBytes(32).toString("base64url");
  return { verifier, challenge: createHash("sha256").update(verifier).digest("base64url") };
}

/** GETs an authorization URL without following redirects and returns the 302 Location. */
export async function authorizeAt(
  origin: string,
  path: string,
  params: Record<string, string>,
): Promise<URL> {
  const url = new URL(path, origin);
  for (const [k, v] of Object.entries(params)) url.searchParams.set(k, v);
  const res = await fetch(url, { redirect: "manual" });
  assert.equal(res.status, 302, `authorize answered ${res.status}: ${await res.text()}`);
  return new URL(res.headers.get("location")!);
}

export async function postForm(
  url: string,
  params: Record<string, string>,
  headers: Record<string, string> = {},
): Promise<{ status: number; headers: Headers; body: Record<string, unknown>; text: string }> {
  const res = await fetch(url, {
    method: "POST",
    headers: {
      "content-type": "application/x-www-form-urlencoded",
      accept: "application/json",
      ...headers,
    },
    body: new URLSearchParams(params).toString(),
  });
  return read(res);
}

export async function postJson(
  url: string,
  body: unknown,
  headers: Record<string, string> = {},
): Promise<{ status: number; headers: Headers; body: Record<string, unknown>; text: string }> {
  const res = await fetch(url, {
    method: "POST",
    headers: { "content-type": "application/json", accept: "application/json", ...headers },
    body: JSON.stringify(body),
  });
  return read(res);
}

export async function getJson(
  url: string,
  headers: Record<string, string> = {},
): Promise<{ status: number; headers: Headers; body: Record<string, unknown>; text: string }> {
  return read(await fetch(url, { headers }));
}

async function read(res: Response) {
  const text = await res.text();
  let body: Record<string, unknown> = {};
  try {
    body = JSON.parse(text) as Record<string, unknown>;
  } catch {}
  return { status: res.status, headers: res.headers, body, text };
}

export function basic(id: string, secret: string): string {
  return `Basic ${Buffer.from(`${encodeURIComponent(id)}:${encodeURIComponent(secret)}`).toString("base64")}`;
}

/** Verifies an RS256 JWT's signature with the JWKS key named by its `kid` and returns its claims. */
export function verifyJwt(
  jwt: string,
  jwks: { keys: Record<string, unknown>[] },
): Record<string, unknown> {
  const [h, p, s] = jwt.split(".");
  assert.ok(h && p && s, "a JWT has three parts");
  const header = JSON.parse(Buffer.from(h, "base64url").toString()) as { alg: string; kid: string };
  assert.equal(header.alg, "RS256");
  const jwk = jwks.keys.find((k) => k.kid === header.kid);
  assert.ok(jwk, "the JWKS holds the signing key");
  const key = createPublicKey({ key: jwk as import("node:crypto").JsonWebKey, format: "jwk" });
  const ok = createVerify("RSA-SHA256")
    .update(`${h}.${p}`)
    .verify(key, Buffer.from(s, "base64url"));
  assert.ok(ok, "the signature verifies");
  return JSON.parse(Buffer.from(p, "base64url").toString()) as Record<string, unknown>;
}
