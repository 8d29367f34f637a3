/**
 * AES-256-GCM sealing of any JSON value under the vault's keyring, for state other stores keep beside the
 * credentials (the RAP tool's pending authorizations and undelivered callbacks: PKCE verifiers and capability URLs).
 * The same construction as the tokens (seal.ts): fresh 96-bit nonce, key id per value, and associated data that
 * binds the ciphertext to a `purpose` the caller chooses (its table and row key), so a value copied into another
 * row or table fails to open.
 */

import { createCipheriv, createDecipheriv, randomBytes } from "node:crypto";
import { VaultCorruptError, VaultKeyError } from "./errors.ts";
import type { Keyring } from "./keyring.ts";
import { decodeBase64url, type Sealed } from "./seal.ts";

const NONCE_BYTES = 12;
const TAG_BYTES = 16;
const AAD_LABEL = "agentauth/sealed-json/v1";

export type { Sealed } from "./seal.ts";

export function sealJson(keyring: Keyring, purpose: string, value: unknown): Sealed {
  const { kid, key } = keyring.current;
  const nonce = randomBytes(NONCE_BYTES);
  const cipher = createCipheriv("aes-256-gcm", key, nonce, { authTagLength: TAG_BYTES });
  cipher.setAAD(Buffer.from(JSON.stringify([AAD_LABEL, purpose, kid]), "utf8"));
  const body = Buffer.concat([
    cipher.update(JSON.stringify(value), "utf8"),
    cipher.final(),
    cipher.getAuthTag(),
  ]);
  return { kid, nonce: nonce.toString("base64url"), ciphertext: body.toString("base64url") };
}

/** Opens what `sealJson` wrote for the same `purpose`; `label` names the value in errors (never its content). */
export function openJson(
  keyring: Keyring,
  purpose: string,
  sealed: Sealed,
  label: string,
): unknown {
  const key = keyring.get(sealed.kid);
  if (!key) {
    throw new VaultKeyError(
      "vault_key_unknown",
      `${label} was encrypted with vault key ${sealed.kid}, which is not in the keyring ` +
        `(${keyring.kids.join(", ")}). Give every instance the same AGENTAUTH_VAULT_KEY (and the previous keys ` +
        "in AGENTAUTH_VAULT_PREVIOUS_KEYS while rotating).",
    );
  }
  const nonce = decodeBase64url(sealed.nonce);
  const body = decodeBase64url(sealed.ciphertext);
  if (!nonce || nonce.length !== NONCE_BYTES || !body || body.length < TAG_BYTES) {
    throw new VaultCorruptError(
      `${label} is corrupt (bad nonce or ciphertext); it cannot be read.`,
    );
  }
  let plaintext: string;
  try {
    const decipher = createDecipheriv("aes-256-gcm", key, nonce, { authTagLength: TAG_BYTES });
    decipher.setAAD(Buffer.from(JSON.stringify([AAD_LABEL, purpose, sealed.kid]), "utf8"));
    decipher.setAuthTag(body.subarray(body.length - TAG_BYTES));
    const opened = decipher.update(body.subarray(0, body.length - TAG_BYTES));
    decipher.final();
    plaintext = opened.toString("utf8");
  } catch {
    throw new VaultKeyError(
      "vault_decrypt_failed",
      `${label} does not decrypt under vault key ${sealed.kid}: the key material is wrong, or the row was ` +
        "altered or copied from another one.",
    );
  }
  try {
    return JSON.parse(plaintext);
  } catch {
    throw new VaultCorruptError(
      `${label} is corrupt (its content is not JSON); it cannot be read.`,
    );
  }
}
