/**
 * AES-256-GCM sealing of a record's tokens. Fresh 96-bit random nonce per write (NIST SP 800-38D §8.2.2: safe for
 * well under 2^32 messages per key, far beyond a credential vault's writes). The associated data binds the
 * ciphertext to the record's key and key id, so a ciphertext copied into another row fails to open.
 */

import { createCipheriv, createDecipheriv, randomBytes } from "node:crypto";
import { secret } from "../core/secret.ts";
import { corruptRecord, VaultKeyError } from "./errors.ts";
import type { Keyring } from "./keyring.ts";
import type { CredentialKey, CredentialTokens, ProviderRef } from "./types.ts";

const NONCE_BYTES = 12;
const TAG_BYTES = 16;
const AAD_LABEL = "agentauth/vault/v1";

/** What a row stores: the key id, and nonce and ciphertext||tag as unpadded base64url. */
export interface Sealed {
  kid: string;
  nonce: string;
  ciphertext: string;
}

/** The plaintext shape: plain strings, only ever inside this module and only for one call. */
interface Payload {
  accessToken?: string;
  refreshToken?: string;
  idToken?: string;
  tokenType?: string;
  clientSecret?: string;
  dpopKey?: string;
}

/** What the AEAD binds the sealed tokens to: the record key, and its provider reference when it has one. */
export type SealKey = CredentialKey & { provider?: ProviderRef };

export function sealTokens(keyring: Keyring, key: SealKey, tokens: CredentialTokens): Sealed {
  const { kid, key: cek } = keyring.current;
  const payload: Payload = {
    accessToken: tokens.accessToken?.reveal(),
    refreshToken: tokens.refreshToken?.reveal(),
    idToken: tokens.idToken?.reveal(),
    tokenType: tokens.tokenType,
    clientSecret: tokens.clientSecret?.reveal(),
    dpopKey: tokens.dpopKey?.reveal(),
  };
  const nonce = randomBytes(NONCE_BYTES);
  const cipher = createCipheriv("aes-256-gcm", cek, nonce, { authTagLength: TAG_BYTES });
  cipher.setAAD(associatedData(key, kid));
  const body = Buffer.concat([
    cipher.update(JSON.stringify(payload), "utf8"),
    cipher.final(),
    cipher.getAuthTag(),
  ]);
  return { kid, nonce: nonce.toString("base64url"), ciphertext: body.toString("base64url") };
}

/** Opens what `sealTokens` wrote; `recordId` only labels errors. */
export function openTokens(
  keyring: Keyring,
  key: SealKey,
  sealed: Sealed,
  recordId: string,
): CredentialTokens {
  const corrupt = (why: string) => corruptRecord(recordId, why);
  const cek = keyring.get(sealed.kid);
  if (!cek) {
    throw new VaultKeyError(
      "vault_key_unknown",
      `The stored credential ${recordId} was encrypted with vault key ${sealed.kid}, which is not in the keyring ` +
        `(${keyring.kids.join(", ")}). Set AGENTAUTH_VAULT_KEY or restore vault.key to the key it was written ` +
        "with, or delete the credential and log in again.",
      { recordId },
    );
  }
  const nonce = decodeBase64url(sealed.nonce);
  const body = decodeBase64url(sealed.ciphertext);
  if (!nonce || nonce.length !== NONCE_BYTES) throw corrupt("bad nonce");
  if (!body || body.length < TAG_BYTES) throw corrupt("truncated or non-base64url ciphertext");

  let plaintext: string;
  try {
    const decipher = createDecipheriv("aes-256-gcm", cek, nonce, { authTagLength: TAG_BYTES });
    decipher.setAAD(associatedData(key, sealed.kid));
    decipher.setAuthTag(body.subarray(body.length - TAG_BYTES));
    const opened = decipher.update(body.subarray(0, body.length - TAG_BYTES));
    // GCM is a stream mode: final() adds no bytes, it checks the tag. The text is decoded only once it passed.
    decipher.final();
    plaintext = opened.toString("utf8");
  } catch {
    // GCM cannot tell a wrong key from a flipped bit or a ciphertext moved from another row; say all three.
    throw new VaultKeyError(
      "vault_decrypt_failed",
      `The stored credential ${recordId} does not decrypt under vault key ${sealed.kid}: the key material is ` +
        "wrong, or the row was altered or copied from another record. Restore the right key, or delete the " +
        "credential and log in again.",
      { recordId },
    );
  }
  return parsePayload(plaintext, corrupt);
}

/**
 * The record key and key id, and the provider reference when there is one: the provider column is stored in the
 * clear (listings show it) but decides where refresh and revocation send the tokens, so a row whose provider was
 * edited (e.g. its origins pointed elsewhere) no longer decrypts. Rows without a provider keep the original AAD.
 */
function associatedData(key: SealKey, kid: string): Buffer {
  const parts: unknown[] = [AAD_LABEL, key.subject, key.issuer, key.resource, kid];
  if (key.provider) parts.push(canonicalProvider(key.provider));
  return Buffer.from(JSON.stringify(parts), "utf8");
}

/** Option order does not matter: sorted, so the same reference always binds the same way. */
function canonicalProvider(ref: ProviderRef): unknown[] {
  const options = Object.entries(ref.options ?? {}).sort(([a], [b]) =>
    a < b ? -1 : a > b ? 1 : 0,
  );
  return [ref.name, options];
}

function parsePayload(plaintext: string, corrupt: (why: string) => Error): CredentialTokens {
  let payload: unknown;
  try {
    payload = JSON.parse(plaintext);
  } catch {
    throw corrupt("decrypted payload is not JSON");
  }
  if (typeof payload !== "object" || payload === null)
    throw corrupt("decrypted payload is not an object");
  const p = payload as Record<string, unknown>;
  const tokens: CredentialTokens = {};
  for (const field of [
    "accessToken",
    "refreshToken",
    "idToken",
    "tokenType",
    "clientSecret",
    "dpopKey",
  ] as const) {
    const value = p[field];
    if (value === undefined) continue;
    if (typeof value !== "string") throw corrupt(`decrypted ${field} is not a string`);
    if (field === "tokenType") tokens.tokenType = value;
    else tokens[field] = secret(value);
  }
  return tokens;
}

/**
 * Strict: Buffer.from(_, "base64url") skips characters outside the alphabet, accepts "+", "/" and "=", and ignores
 * the unused low bits of the last character, so a damaged column could still decode. Checked without a regular
 * expression or re-encoding (they were a twentieth of a read's CPU): a skipped character shortens the output
 * (length ≢ 1 mod 4 makes the decoded length strictly increasing in the number of characters kept), the other
 * alphabet is searched for, and the last character's unused bits must be zero.
 */
export function decodeBase64url(text: string): Buffer | undefined {
  const remainder = text.length % 4;
  if (remainder === 1) return undefined;
  if (text.includes("+") || text.includes("/") || text.includes("=")) return undefined;
  const bytes = Buffer.from(text, "base64url");
  if (bytes.length !== Math.floor((text.length * 3) / 4)) return undefined;
  if (remainder !== 0) {
    const last = BASE64URL.indexOf(text[text.length - 1] ?? "");
    const unusedBits = remainder === 2 ? 0b1111 : 0b11;
    if (last < 0 || (last & unusedBits) !== 0) return undefined;
  }
  return bytes;
}

const BASE64URL = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
