/**
 * Callback capabilities: each call gets its own unguessable callback URL, `{publicBaseUrl}/callback/{token}`, where
 * token = base64url(JSON {g, i, x}) "." base64url(HMAC-SHA256(key, payload)). Only holders of the runtime's key can
 * mint one, so a third party cannot inject results; the token names exactly one (group_id, id) and expires.
 * The payload is not secret (ids and an expiry): the MAC is what makes the URL a capability.
 */

import { createHmac, randomBytes, timingSafeEqual } from "node:crypto";
import { chmodSync, readFileSync } from "node:fs";
import type { Secret } from "../../core/secret.ts";
import { createSecretFileSync } from "../../core/secret-file.ts";
import { CallbackKeyError } from "./errors.ts";

export const KEY_BYTES = 32;
export const CALLBACK_PATH_PREFIX = "/callback/";

export interface CallClaims {
  groupId: string;
  id: string;
  /** Expiry, milliseconds since the epoch. */
  exp: number;
}

export type TokenCheck =
  | { ok: true; claims: CallClaims }
  | { ok: false; reason: "malformed" | "bad_signature" | "expired"; claims?: CallClaims };

// Domain separation: a MAC made with this key for anything else can never verify as a callback token.
const CONTEXT = "agentauth-rap-callback-v1\n";

function mac(key: Uint8Array, payload: string): Buffer {
  return createHmac("sha256", key).update(CONTEXT).update(payload).digest();
}

export function signCallToken(key: Uint8Array, claims: CallClaims): string {
  const payload = Buffer.from(
    JSON.stringify({ g: claims.groupId, i: claims.id, x: claims.exp }),
    "utf8",
  ).toString("base64url");
  return `${payload}.${mac(key, payload).toString("base64url")}`;
}

/** Pure: checks the MAC in constant time, then the shape, then the expiry. */
export function verifyCallToken(key: Uint8Array, token: string, now: number): TokenCheck {
  const dot = token.indexOf(".");
  if (dot <= 0 || dot !== token.lastIndexOf(".")) return { ok: false, reason: "malformed" };
  const payload = token.slice(0, dot);
  const tag = token.slice(dot + 1);
  if (!/^[A-Za-z0-9_-]+$/.test(payload) || !/^[A-Za-z0-9_-]{43}$/.test(tag)) {
    return { ok: false, reason: "malformed" };
  }
  const expected = mac(key, payload);
  const given = Buffer.from(tag, "base64url");
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) {
    return { ok: false, reason: "bad_signature" };
  }
  let decoded: unknown;
  try {
    decoded = JSON.parse(Buffer.from(payload, "base64url").toString("utf8"));
  } catch {
    return { ok: false, reason: "malformed" };
  }
  const { g, i, x } = (decoded ?? {}) as { g?: unknown; i?: unknown; x?: unknown };
  if (typeof g !== "string" || typeof i !== "string" || typeof x !== "number") {
    return { ok: false, reason: "malformed" };
  }
  const claims = { groupId: g, id: i, exp: x };
  if (now >= x) return { ok: false, reason: "expired", claims };
  return { ok: true, claims };
}

/** The callback URL for one call under `publicBaseUrl` (which may carry a path prefix). */
export function callbackUrl(publicBaseUrl: string, token: string): string {
  return `${publicBaseUrl.replace(/\/+$/, "")}${CALLBACK_PATH_PREFIX}${token}`;
}

/** Accepts a provided key (raw bytes, or base64/base64url text in a Secret); at least 32 bytes. */
export function keyFrom(value: Uint8Array | Secret): Uint8Array {
  const bytes =
    value instanceof Uint8Array ? value : Buffer.from(value.reveal().trim(), "base64url");
  if (bytes.length < KEY_BYTES) {
    throw new CallbackKeyError(
      "rap_callback_key_invalid",
      `The RAP runtime's callback key must be at least ${KEY_BYTES} bytes (base64url when given as text); ` +
        `generate one with: node -e "console.log(require('crypto').randomBytes(32).toString('base64url'))"`,
    );
  }
  return new Uint8Array(bytes);
}

/**
 * Reads the key file, creating it (owner-only) when missing. Restarting with the same file keeps every callback URL already handed to tools valid.
 */
export function loadOrCreateKeyFile(path: string): Uint8Array {
  // Created whole or not at all, and only if missing: two runtimes starting at once agree on one key, and nobody
  // ever reads a half-written file (core/secret-file.ts).
  try {
    createSecretFileSync(path, `${randomBytes(KEY_BYTES).toString("base64url")}\n`);
  } catch (error) {
    throw keyFileError(path, error);
  }
  try {
    chmodSync(path, 0o600);
    const text = readFileSync(path, "utf8").trim();
    return keyFrom(Buffer.from(text, "base64url"));
  } catch (error) {
    if (error instanceof CallbackKeyError) throw error;
    throw keyFileError(path, error);
  }
}

function keyFileError(path: string, cause: unknown): CallbackKeyError {
  return new CallbackKeyError(
    "rap_callback_key_invalid",
    `Cannot read or create the RAP runtime's callback key at ${path} (${(cause as Error).message}). Check the ` +
      "folder is writable; deleting the file makes a new key but invalidates every callback URL already issued.",
    { cause },
  );
}
