/** The one-call way to get the machine's vault: `<home>/vault.db`, keyed from AGENTAUTH_VAULT_KEY or `<home>/vault.key`. */

import { loadKeyring } from "./key-source.ts";
import { type VaultLocationOptions, vaultDbPath, vaultHome } from "./paths.ts";
import { SqliteCredentialStore } from "./sqlite-store.ts";

export interface OpenVaultOptions extends VaultLocationOptions {
  /** The clock for timestamps and lease expiry; tests pass a fake one. */
  now?: () => number;
}

/**
 * Opens the default vault, creating the home folder, key file and database on first use.
 *
 * @example
 * ```ts
 * const vault = openVault();
 * await vault.put({ subject: "alice", issuer: "https://as.example", resource: "", clientId: "cli",
 *   tokens: { accessToken: secret(token) }, scopes: ["read"], account: {}, status: "active" });
 * await vault.close();
 * ```
 */
export function openVault(options: OpenVaultOptions = {}): SqliteCredentialStore {
  const home = vaultHome(options);
  const location = { home, env: options.env };
  return new SqliteCredentialStore({
    path: vaultDbPath(home),
    keyring: loadKeyring(location),
    // Another process may rotate the key file while this one runs; re-read it rather than fail.
    reloadKeyring: () => loadKeyring(location),
    now: options.now,
  });
}
