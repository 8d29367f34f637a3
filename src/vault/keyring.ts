/** Vault encryption keys: a current key that seals new writes, plus older keys kept so rows sealed under them stay readable. */

import { createHash, createSecretKey, type KeyObject, randomBytes } from "node:crypto";
import { VaultKeyError } from "./errors.ts";

const KEY_BYTES = 32;
const inspectCustom = Symbol.for("nodejs.util.inspect.custom");

/**
 * The key id: 16 hex characters of SHA-256 over the raw key. Derived, not assigned, so the same key has the same id
 * in every process and every key source, and a row names the key it needs without revealing it.
 */
export function keyId(key: Uint8Array): string {
  return createHash("sha256").update(key).digest("hex").slice(0, 16);
}

/** 32 fresh random bytes, as the base64 that AGENTAUTH_VAULT_KEY and the key file hold. */
export function generateVaultKey(): string {
  return randomBytes(KEY_BYTES).toString("base64");
}

/**
 * Decodes base64 or base64url (padded or not) of exactly 32 bytes. Strict: Buffer.from(_, "base64") silently skips
 * junk, which would turn a typo into a different key. `source` names where the text came from, for the message;
 * the text itself never appears in the error.
 */
export function parseVaultKey(text: string, source = "AGENTAUTH_VAULT_KEY"): Buffer {
  const invalid = (why: string) =>
    new VaultKeyError(
      "vault_key_invalid",
      `${source} is not a valid vault key (${why}). It must be base64 or base64url of exactly ${KEY_BYTES} ` +
        "random bytes; generate one with `openssl rand -base64 32`.",
    );
  if (typeof text !== "string") throw invalid("not a string");
  const normalized = text
    .trim()
    .replaceAll("-", "+")
    .replaceAll("_", "/")
    .replace(/={0,2}$/, "");
  if (normalized === "") throw invalid("empty");
  if (!/^[A-Za-z0-9+/]+$/.test(normalized)) throw invalid("not base64 or base64url");
  const bytes = Buffer.from(normalized, "base64");
  if (bytes.length !== KEY_BYTES) throw invalid(`decodes to ${bytes.length} bytes`);
  // Non-canonical trailing bits would let two different strings name the same key; refuse them.
  if (bytes.toString("base64").replace(/=+$/, "") !== normalized)
    throw invalid("non-canonical encoding");
  return bytes;
}

/**
 * Holds the keys as KeyObjects (which never print their bytes) and prints only key ids, so a keyring can sit in a
 * log line or an error's cause without leaking.
 */
export class Keyring {
  readonly currentKid: string;
  readonly #keys: Map<string, KeyObject>;

  /** `current` seals new writes; `older` keys only open rows written before a rotation. */
  constructor(current: Uint8Array, older: Iterable<Uint8Array> = []) {
    this.#keys = new Map();
    for (const key of [current, ...older]) {
      if (key.length !== KEY_BYTES) {
        throw new VaultKeyError("vault_key_invalid", `A vault key must be ${KEY_BYTES} bytes.`);
      }
      this.#keys.set(keyId(key), createSecretKey(key));
    }
    this.currentKid = keyId(current);
  }

  get current(): { kid: string; key: KeyObject } {
    return { kid: this.currentKid, key: this.#keys.get(this.currentKid)! };
  }

  get(kid: string): KeyObject | undefined {
    return this.#keys.get(kid);
  }

  get kids(): string[] {
    return [...this.#keys.keys()];
  }

  toJSON(): { current: string; kids: string[] } {
    return { current: this.currentKid, kids: this.kids };
  }

  [inspectCustom](): string {
    return `Keyring(current=${this.currentKid}, kids=[${this.kids.join(", ")}])`;
  }
}
