/** Where the vault key comes from: AGENTAUTH_VAULT_KEY when set, else the key file in the agentauth home folder. */

import { VaultKeyError } from "./errors.ts";
import { addKeyToFile, createKeyFile, readKeyFile } from "./key-file.ts";
import { Keyring, parseVaultKey } from "./keyring.ts";
import { type VaultLocationOptions, vaultHome, vaultKeyFilePath } from "./paths.ts";

/**
 * AGENTAUTH_VAULT_KEY wins (containers and CI inject secrets through the environment and have no durable home);
 * AGENTAUTH_VAULT_PREVIOUS_KEYS, comma-separated, carries the keys it replaced so rotation works there too.
 * Otherwise the key file is read, and created with a fresh key on first use.
 */
export function loadKeyring(options: VaultLocationOptions = {}): Keyring {
  const env = options.env ?? process.env;
  const fromEnv = env.AGENTAUTH_VAULT_KEY;
  if (fromEnv !== undefined) {
    const previous = (env.AGENTAUTH_VAULT_PREVIOUS_KEYS ?? "")
      .split(",")
      .map((text) => text.trim())
      .filter((text) => text !== "")
      .map((text, i) => parseVaultKey(text, `Entry ${i + 1} of AGENTAUTH_VAULT_PREVIOUS_KEYS`));
    return new Keyring(parseVaultKey(fromEnv), previous);
  }
  const path = vaultKeyFilePath(vaultHome(options));
  return readKeyFile(path) ?? createKeyFile(path);
}

/**
 * Adds a fresh current key to the key file, keeping the old ones. Rows stay readable; new writes use the new key.
 * Follow with `store.reencrypt()` so old keys can eventually be dropped. Returns the new and previous key ids.
 */
export function rotateVaultKey(options: VaultLocationOptions = {}): {
  kid: string;
  previous: string[];
} {
  if ((options.env ?? process.env).AGENTAUTH_VAULT_KEY !== undefined) {
    throw new VaultKeyError(
      "vault_key_env_managed",
      "The vault key comes from AGENTAUTH_VAULT_KEY, so there is no key file to rotate. Move the old value to " +
        "AGENTAUTH_VAULT_PREVIOUS_KEYS, set a new AGENTAUTH_VAULT_KEY, then re-encrypt the vault.",
    );
  }
  return addKeyToFile(vaultKeyFilePath(vaultHome(options)));
}
