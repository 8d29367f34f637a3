/** The PostgreSQL store against the shared contract, plus what only it has: a shared server, lazy open, migrations. */

import { test } from "node:test";
import { Keyring, PostgresCredentialStore } from "../../src/vault/index.ts";
import { skipWithoutPostgres, testPostgres } from "../support/postgres.ts";
import { newKey } from "./helpers.ts";
import { credentialStoreContract } from "./store-contract.ts";

const PG = await testPostgres();

// [PG-vault-contract] the unchanged contract suite, each test on a fresh database. Its lease tests move time by hand,
// so the lease clock is the suite's too (in production it is the database's: [PG-vault-lease-db-clock]).
if (PG) {
  credentialStoreContract("PostgresCredentialStore", async (t, now) => {
    const store = new PostgresCredentialStore({
      url: await PG.freshDatabase(),
      keyring: new Keyring(Buffer.from(newKey(), "base64")),
      now,
      leaseClock: now,
    });
    t.after(() => store.close());
    return store;
  });
} else {
  test("[PG-vault-contract] the store contract on PostgreSQL", (t) => {
    skipWithoutPostgres(t, PG);
  });
}
