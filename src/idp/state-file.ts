/**
 * The embedded server's two files in its data folder, as text (pure: values in, JSON out, and back with checks).
 * `idp-keys.json` holds the signing key and cookie keys; `idp-state.json` a snapshot of the adapter's storage
 * (grants, refresh tokens, sessions, registered clients…) so signed-in users stay signed in across a restart.
 */

import type { AdapterPayload, JWK } from "oidc-provider";
import { AgentAuthError } from "../core/errors.ts";
import type { StoredEntry } from "./memory-adapter.ts";

export const KEYS_FILE = "idp-keys.json";
export const STATE_FILE = "idp-state.json";
const VERSION = 1;
const MIN_COOKIE_KEY_CHARS = 32;

/** A file of the data folder cannot be read or makes no sense: say which, and how to start over. */
export class IdpStateError extends AgentAuthError {
  declare readonly code: "idp_state_unreadable";
  readonly file: string;

  constructor(file: string, message: string) {
    super("idp_state_unreadable", message);
    this.file = file;
  }
}

/** The one wording for a file of the data folder that cannot be used. */
export function unreadable(file: string, why: string): IdpStateError {
  return new IdpStateError(
    file,
    `The authorization server cannot read ${file} (${why}). Delete that file (users then sign in again), ` +
      "or start over with --fresh.",
  );
}

export interface IdpKeys {
  /** The first signs; the others (none yet) would only verify. Private EC P-256 JWKs with `kid`. */
  signingKeys: JWK[];
  cookieKeys: string[];
}

export interface IdpStateSnapshot {
  /** The issuer the entries were made by: tokens and sessions of another issuer are useless here. */
  issuer: string;
  entries: StoredEntry[];
}

export function encodeKeys(keys: IdpKeys): string {
  return `${JSON.stringify({ version: VERSION, ...keys }, null, 2)}\n`;
}

/** `file` is only for the error message. Never echoes the text: it holds private keys. */
export function decodeKeys(text: string, file: string): IdpKeys {
  const value = parseObject(text, file);
  const { signingKeys, cookieKeys } = value;
  if (!Array.isArray(signingKeys) || signingKeys.length === 0 || !signingKeys.every(isSigningKey))
    throw unreadable(file, "no usable ES256 signing key in it");
  if (
    !Array.isArray(cookieKeys) ||
    cookieKeys.length === 0 ||
    !cookieKeys.every((k) => typeof k === "string" && k.length >= MIN_COOKIE_KEY_CHARS)
  )
    throw unreadable(file, "no usable cookie key in it");
  return { signingKeys: signingKeys as JWK[], cookieKeys: cookieKeys as string[] };
}

export function encodeState(snapshot: IdpStateSnapshot): string {
  return JSON.stringify({
    version: VERSION,
    issuer: snapshot.issuer,
    // JSON has no Infinity: entries that never expire are saved with null.
    entries: snapshot.entries.map((e) => [
      e.key,
      e.payload,
      Number.isFinite(e.expiresAt) ? e.expiresAt : null,
    ]),
  });
}

/** Never echoes the text: it holds refresh tokens and session ids. */
export function decodeState(text: string, file: string): IdpStateSnapshot {
  const value = parseObject(text, file);
  if (typeof value.issuer !== "string") throw unreadable(file, "no issuer in it");
  if (!Array.isArray(value.entries)) throw unreadable(file, "no entries in it");
  const entries: StoredEntry[] = [];
  for (const [i, row] of value.entries.entries()) {
    if (!Array.isArray(row) || row.length !== 3)
      throw unreadable(file, `entry ${i} is not [key, payload, expiresAt]`);
    const [key, payload, expiresAt] = row as unknown[];
    if (typeof key !== "string" || !/^[A-Za-z]+:./.test(key))
      throw unreadable(file, `entry ${i} has no model:id key`);
    if (!isRecord(payload)) throw unreadable(file, `entry ${i} has no payload object`);
    if (expiresAt !== null && (typeof expiresAt !== "number" || !Number.isFinite(expiresAt)))
      throw unreadable(file, `entry ${i} has no valid expiry`);
    entries.push({
      key,
      payload: payload as AdapterPayload,
      expiresAt: expiresAt ?? Number.POSITIVE_INFINITY,
    });
  }
  return { issuer: value.issuer, entries };
}

function parseObject(text: string, file: string): Record<string, unknown> {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    // V8's message quotes the text around the fault, and the text holds secrets: say only that it is not JSON.
    throw unreadable(file, "it is not valid JSON");
  }
  if (!isRecord(value)) throw unreadable(file, "it is not a JSON object");
  if (value.version !== VERSION)
    throw unreadable(
      file,
      `format version ${typeof value.version === "number" ? value.version : "missing"}, this agentauth reads ${VERSION}`,
    );
  return value;
}

function isSigningKey(key: unknown): boolean {
  return (
    isRecord(key) &&
    key.kty === "EC" &&
    key.crv === "P-256" &&
    typeof key.kid === "string" &&
    typeof key.d === "string" &&
    typeof key.x === "string" &&
    typeof key.y === "string"
  );
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
