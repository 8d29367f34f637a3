/** The vault's typed errors: one class per kind of failure, a stable `code`, a next step in the message, never a secret. */

import { AgentAuthError } from "../core/errors.ts";

export type VaultKeyErrorCode =
  /** AGENTAUTH_VAULT_KEY (or the key file) does not hold 32 bytes of base64/base64url. */
  | "vault_key_invalid"
  /** A row was written under a key id the keyring does not have. */
  | "vault_key_unknown"
  /** The key id matched but the GCM tag did not verify: wrong key material, tampering, or a row moved. */
  | "vault_decrypt_failed"
  /** The key comes from the environment, so the key file cannot be rotated. */
  | "vault_key_env_managed"
  /** A shared (PostgreSQL) vault is sealed with keys this process's keyring has none of: it must not write. */
  | "vault_key_mismatch";

export class VaultKeyError extends AgentAuthError {
  declare readonly code: VaultKeyErrorCode;
  /** The record concerned, when there is one: safe to print, it is derived from the key by a hash. */
  readonly recordId: string | undefined;

  constructor(
    code: VaultKeyErrorCode,
    message: string,
    options?: { cause?: unknown; recordId?: string },
  ) {
    super(code, message, options);
    this.recordId = options?.recordId;
  }
}

/** A row the store cannot make sense of: bad base64, bad JSON, a missing or mistyped column, a truncated ciphertext. */
export class VaultCorruptError extends AgentAuthError {
  declare readonly code: "vault_record_corrupt";
  readonly recordId: string | undefined;

  constructor(message: string, options?: { cause?: unknown; recordId?: string }) {
    super("vault_record_corrupt", message, options);
    this.recordId = options?.recordId;
  }
}

/** The one wording for a bad row, wherever it is detected: the id is safe to print and is what `revoke` takes. */
export function corruptRecord(recordId: string, why: string): VaultCorruptError {
  return new VaultCorruptError(
    `The stored credential ${recordId} is corrupt (${why}). Delete it ` +
      `(\`agentauth vault delete ${recordId}\`) and log in again.`,
    { recordId },
  );
}

export type VaultIoErrorCode =
  /** The database file cannot be opened, read or written (path, permissions, disk, lock timeout). */
  | "vault_io"
  /** The file was created by a newer agentauth with a schema this one does not know. */
  | "vault_schema_unsupported";

export class VaultIoError extends AgentAuthError {
  declare readonly code: VaultIoErrorCode;

  constructor(code: VaultIoErrorCode, message: string, options?: { cause?: unknown }) {
    super(code, message, options);
  }
}

/** A caller handed the store something that is not a credential (empty subject, scopes not strings, ...). */
export class VaultInputError extends AgentAuthError {
  declare readonly code: "vault_input_invalid";

  constructor(message: string) {
    super("vault_input_invalid", message);
  }
}
