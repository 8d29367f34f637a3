/** The one-call way to get the machine's vault: `<home>/vault.db`, keyed from AGENTAUTH_VAULT_KEY or `<home>/vault.key`. */

import { existsSync } from "node:fs";
import { agentauthHome } from "../core/home.ts";
import { loadSqlite } from "../core/node-version.ts";
import { VaultKeyError } from "./errors.ts";
import { readKeyFile } from "./key-file.ts";
import { loadKeyring } from "./key-source.ts";
import { type VaultLocationOptions, vaultDbPath, vaultHome, vaultKeyFilePath } from "./paths.ts";
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
  // Before the key file: on a Node without node:sqlite, say which Node to install and create nothing.
  loadSqlite();
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

export interface OpenExistingVaultOptions extends OpenVaultOptions {
  /** Open the database read-only (default true): for commands that only look. */
  readOnly?: boolean;
}

/**
 * Opens the vault only if it already exists, creating nothing: no home folder, no database, no key file. Returns
 * undefined when there is no vault yet. The key is read on first use (listing never needs it); with no
 * AGENTAUTH_VAULT_KEY and no key file, reading tokens fails with vault_key_unknown.
 */
export function openExistingVault(
  options: OpenExistingVaultOptions = {},
): SqliteCredentialStore | undefined {
  const env = options.env ?? process.env;
  const home = options.home ?? agentauthHome(env);
  const path = vaultDbPath(home);
  if (!existsSync(path)) return undefined;
  const keyring = () => {
    if (env.AGENTAUTH_VAULT_KEY !== undefined) return loadKeyring({ home, env });
    const found = readKeyFile(vaultKeyFilePath(home));
    if (found) return found;
    throw new VaultKeyError(
      "vault_key_unknown",
      `The vault at ${path} has no key: AGENTAUTH_VAULT_KEY is not set and ${vaultKeyFilePath(home)} does not ` +
        "exist. Set AGENTAUTH_VAULT_KEY or restore the key file to read the stored tokens.",
    );
  };
  return new SqliteCredentialStore({
    path,
    keyring,
    reloadKeyring: keyring,
    readOnly: options.readOnly ?? true,
    now: options.now,
  });
}
