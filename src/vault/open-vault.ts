/**
 * The one-call way to get the vault: `<home>/vault.db`, or the PostgreSQL database named by `databaseUrl` or
 * AGENTAUTH_DATABASE_URL; keyed from AGENTAUTH_VAULT_KEY or `<home>/vault.key` either way.
 */

import { existsSync } from "node:fs";
import { agentauthHome } from "../core/home.ts";
import { loadSqlite } from "../core/node-version.ts";
import { databaseUrlFromEnv, redactDatabaseUrl } from "../db/index.ts";
import { VaultKeyError } from "./errors.ts";
import { readKeyFile } from "./key-file.ts";
import { loadKeyring } from "./key-source.ts";
import { type VaultLocationOptions, vaultDbPath, vaultHome, vaultKeyFilePath } from "./paths.ts";
import { PostgresCredentialStore } from "./postgres/store.ts";
import { SqliteCredentialStore } from "./sqlite-store.ts";
import type { CredentialStore, LeaseInfo } from "./types.ts";

export interface OpenVaultOptions extends VaultLocationOptions {
  /** The clock for timestamps and lease expiry; tests pass a fake one. */
  now?: () => number;
  /**
   * A PostgreSQL URL (postgres://…): the vault lives there instead of in `<home>/vault.db`. Default:
   * AGENTAUTH_DATABASE_URL from `env`. The key still comes from AGENTAUTH_VAULT_KEY or the home's key file.
   */
  databaseUrl?: string;
  /**
   * PostgreSQL only: serve reads from an in-process cache that other instances' changes invalidate (default true; see
   * postgres/cache-listener.ts). False: every read is a round trip.
   */
  cache?: boolean;
}

/** What both backends offer beyond the store contract, so callers work with either. */
export interface VaultStore extends CredentialStore {
  /** Where the vault is: the SQLite file's path, or the PostgreSQL URL without its password. */
  readonly location: string;
  /** Same as `location` (the SQLite name for it). */
  readonly path: string;
  /** The key id new writes are sealed with. */
  readonly currentKid: string;
  /** Re-seals every row not under the current key; see each store. */
  reencrypt(): Promise<{ rewritten: number }>;
  getLease(name: string): Promise<LeaseInfo | undefined>;
  setLeaseNote(name: string, owner: string, note: string): Promise<boolean>;
}

/** The PostgreSQL URL to use, if any: the explicit option, else AGENTAUTH_DATABASE_URL. */
function databaseUrlOf(options: OpenVaultOptions): string | undefined {
  return options.databaseUrl?.trim() || databaseUrlFromEnv(options.env ?? process.env);
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
export function openVault(options: OpenVaultOptions = {}): VaultStore {
  const url = databaseUrlOf(options);
  if (url) {
    const location = { home: options.home, env: options.env };
    return new PostgresCredentialStore({
      url,
      // Read on first use (a listing never needs it); reloaded when another instance's rotation shows up.
      keyring: () => loadKeyring(location),
      reloadKeyring: () => loadKeyring(location),
      now: options.now,
      cache: options.cache,
    });
  }
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
export function openExistingVault(options: OpenExistingVaultOptions = {}): VaultStore | undefined {
  const env = options.env ?? process.env;
  const home = options.home ?? agentauthHome(env);
  const path = vaultDbPath(home);
  const url = databaseUrlOf(options);
  if (!url && !existsSync(path)) return undefined;
  const keyring = () => {
    if (env.AGENTAUTH_VAULT_KEY !== undefined) return loadKeyring({ home, env });
    const found = readKeyFile(vaultKeyFilePath(home));
    if (found) return found;
    throw new VaultKeyError(
      "vault_key_unknown",
      `The vault at ${url ? redactDatabaseUrl(url) : path} has no key: AGENTAUTH_VAULT_KEY is not set and ${vaultKeyFilePath(home)} does not ` +
        "exist. Set AGENTAUTH_VAULT_KEY or restore the key file to read the stored tokens.",
    );
  };
  if (url) {
    // A database has no "does not exist yet": the schema is created on first use, and read-only is not enforced
    // (the commands that ask for it only read).
    return new PostgresCredentialStore({ url, keyring, reloadKeyring: keyring, now: options.now });
  }
  return new SqliteCredentialStore({
    path,
    keyring,
    reloadKeyring: keyring,
    readOnly: options.readOnly ?? true,
    now: options.now,
  });
}
