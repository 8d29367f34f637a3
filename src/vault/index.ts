/** The credential vault: encrypted, multi-process-safe storage of OAuth tokens keyed by (subject, issuer, resource). */

export {
  VaultCorruptError,
  VaultInputError,
  VaultIoError,
  type VaultIoErrorCode,
  VaultKeyError,
  type VaultKeyErrorCode,
} from "./errors.ts";
export { loadKeyring, rotateVaultKey } from "./key-source.ts";
export { generateVaultKey, Keyring, keyId, parseVaultKey } from "./keyring.ts";
export { isLeaseOwnerGone, leaseOwnerId } from "./lease-owner.ts";
export { MemoryCredentialStore, type MemoryCredentialStoreOptions } from "./memory-store.ts";
export {
  type OpenExistingVaultOptions,
  type OpenVaultOptions,
  openExistingVault,
  openVault,
  type VaultStore,
} from "./open-vault.ts";
export { type VaultLocationOptions, vaultDbPath, vaultKeyFilePath } from "./paths.ts";
export {
  PostgresCredentialStore,
  type PostgresCredentialStoreOptions,
} from "./postgres/store.ts";
export { credentialId, sameProviderRef } from "./record.ts";
export { openJson, type Sealed, sealJson } from "./sealed-json.ts";
export { SqliteCredentialStore, type SqliteCredentialStoreOptions } from "./sqlite-store.ts";
export type {
  AccountInfo,
  CredentialFilter,
  CredentialInput,
  CredentialKey,
  CredentialListing,
  CredentialRecord,
  CredentialStatus,
  CredentialStore,
  CredentialSummary,
  CredentialTokens,
  LeaseInfo,
  UnreadableCredential,
} from "./types.ts";
