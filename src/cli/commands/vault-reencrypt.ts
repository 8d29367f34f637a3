/**
 * `agentauth vault reencrypt`: re-seals every credential not under the current vault key, the third step of a key
 * rotation (docs/deploy.md): after AGENTAUTH_VAULT_KEY holds the new key and AGENTAUTH_VAULT_PREVIOUS_KEYS the old
 * ones (or `rotateVaultKey` rotated the key file), so that the old keys can then be dropped.
 */

import { agentauthHome } from "../../core/home.ts";
import { openExistingVault, vaultDbPath } from "../../vault/index.ts";
import { type CliIo, EXIT, jsonLine } from "../io.ts";

export async function reencrypt(io: CliIo, json: boolean): Promise<number> {
  const store = openExistingVault({ env: io.env, readOnly: false });
  if (!store) {
    const path = vaultDbPath(agentauthHome(io.env));
    io.stdout(
      json
        ? jsonLine({ rewritten: 0 })
        : `The vault does not exist yet (${path}); there is nothing to re-seal.\n`,
    );
    return EXIT.ok;
  }
  try {
    const { rewritten } = await store.reencrypt();
    const kid = store.currentKid;
    io.stdout(
      json
        ? jsonLine({ rewritten, kid })
        : rewritten === 0
          ? `Every credential is already sealed under key ${kid}; nothing to do.\n`
          : `Re-sealed ${rewritten} credential${rewritten === 1 ? "" : "s"} under key ${kid}. Older keys are no ` +
            "longer needed by this vault.\n",
    );
    return EXIT.ok;
  } finally {
    await store.close();
  }
}
