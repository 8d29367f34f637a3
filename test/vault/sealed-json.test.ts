import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { test } from "node:test";
import {
  Keyring,
  openJson,
  sealJson,
  VaultCorruptError,
  VaultKeyError,
} from "../../src/vault/index.ts";

const value = {
  verifier: "pkce-verifier-secret",
  callbackUrl: "https://rt/callback/cap",
  n: [1, 2],
};

test("[VAULT-sealed-json] a sealed value opens under its purpose and shows no plaintext", () => {
  const keyring = new Keyring(randomBytes(32));
  const sealed = sealJson(keyring, "rap_tool_pending:abc", value);
  assert.ok(!JSON.stringify(sealed).includes("pkce-verifier-secret"));
  assert.deepEqual(
    openJson(keyring, "rap_tool_pending:abc", sealed, "the pending authorization"),
    value,
  );
  assert.notEqual(sealJson(keyring, "p", value).nonce, sealJson(keyring, "p", value).nonce);
});

test("[VAULT-sealed-json-aad] a value moved to another purpose, a flipped bit or another key does not open", () => {
  const material = randomBytes(32);
  const keyring = new Keyring(material);
  const sealed = sealJson(keyring, "rap_tool_pending:abc", value);
  assert.throws(
    () => openJson(keyring, "rap_tool_pending:abd", sealed, "x"),
    (e) => e instanceof VaultKeyError && e.code === "vault_decrypt_failed",
  );
  const flipped = {
    ...sealed,
    ciphertext: `${sealed.ciphertext.slice(0, -2)}${sealed.ciphertext.endsWith("AA") ? "AQ" : "AA"}`,
  };
  assert.throws(() => openJson(keyring, "rap_tool_pending:abc", flipped, "x"), VaultKeyError);
  assert.throws(
    () => openJson(new Keyring(randomBytes(32)), "rap_tool_pending:abc", sealed, "x"),
    (e) => e instanceof VaultKeyError && e.code === "vault_key_unknown",
  );
  assert.throws(
    () => openJson(keyring, "rap_tool_pending:abc", { ...sealed, nonce: "!!" }, "x"),
    VaultCorruptError,
  );
  // An older key in the ring still opens what it sealed (rotation).
  const rotated = new Keyring(randomBytes(32), [material]);
  assert.deepEqual(openJson(rotated, "rap_tool_pending:abc", sealed, "x"), value);
});
