/** Where the vault lives inside the agentauth home folder. */

import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { agentauthHome } from "../core/home.ts";

export interface VaultLocationOptions {
  /** The agentauth home folder; defaults to `$AGENTAUTH_HOME`, else the platform data directory. */
  home?: string;
  /** Read for AGENTAUTH_HOME, AGENTAUTH_VAULT_KEY and AGENTAUTH_VAULT_PREVIOUS_KEYS; defaults to process.env. */
  env?: NodeJS.ProcessEnv;
}

export const VAULT_DB_FILE = "vault.db";
export const VAULT_KEY_FILE = "vault.key";

/** Resolves the home folder and creates it owner-only, whether it came from the options or the environment. */
export function vaultHome(options: VaultLocationOptions = {}): string {
  const home = options.home ?? agentauthHome(options.env ?? process.env);
  mkdirSync(home, { recursive: true, mode: 0o700 });
  return home;
}

export function vaultDbPath(home: string): string {
  return join(home, VAULT_DB_FILE);
}

export function vaultKeyFilePath(home: string): string {
  return join(home, VAULT_KEY_FILE);
}
