/**
 * Where a runtime keeps its calls and which key signs its callback URLs. In order: a store given by the caller;
 * PostgreSQL at `databaseUrl`, or at AGENTAUTH_DATABASE_URL when neither `store` nor `dbPath` is given (several
 * instances share it); else SQLite at `dbPath` (default `<AGENTAUTH_HOME>/rap-runtime.db`).
 *
 * The callback key: `secretKey`, else the file at `keyPath`, else `rap-runtime.key` beside the SQLite file or in
 * AGENTAUTH_HOME (PostgreSQL). Instances sharing a database must share the key too, or each would refuse the
 * callback URLs the others handed out; the PostgreSQL store keeps the key's fingerprint (an HMAC, not the key) and a
 * runtime whose key differs refuses to start, saying so, instead of answering 403 to every other instance's tools.
 */

import { createHmac, randomBytes } from "node:crypto";
import { dirname, join } from "node:path";
import { ensureHome } from "../../core/home.ts";
import type { Logger } from "../../core/log.ts";
import { databaseUrlFromEnv } from "../../db/index.ts";
import { DB_FILE, KEY_FILE, type RuntimeOptions } from "./api.ts";
import { keyFrom, loadOrCreateKeyFile } from "./capability.ts";
import { CallbackKeyError } from "./errors.ts";
import { PostgresRuntimeStore } from "./postgres-store.ts";
import { SqliteRuntimeStore } from "./sqlite-store.ts";
import type { RuntimeStore } from "./store.ts";

export type StoreKind = "custom" | "sqlite" | "postgres";

export interface RuntimeStorage {
  store: RuntimeStore;
  key: Uint8Array;
  kind: StoreKind;
  /** The SQLite path or the redacted PostgreSQL URL ("custom" for a caller's store): safe to print. */
  label: string;
}

export async function openRuntimeStorage(
  options: RuntimeOptions,
  logger: Logger,
): Promise<RuntimeStorage> {
  if (options.store) {
    const store = options.store;
    if (options.secretKey || options.keyPath) {
      return withKey(store, "custom", "custom", () => givenKey(options));
    }
    // A key of this process only: never recorded in a shared store, where it would lock every later instance out.
    logger.warn("rap.runtime.ephemeral_key", { why: "custom store without secretKey or keyPath" });
    return { store, key: randomBytes(32), kind: "custom", label: "custom" };
  }
  if (options.databaseUrl !== undefined && options.dbPath !== undefined) {
    throw new RangeError(
      "give dbPath (SQLite) or databaseUrl (PostgreSQL), not both: they name two different stores",
    );
  }
  const databaseUrl =
    options.databaseUrl ?? (options.dbPath ? undefined : databaseUrlFromEnv(options.env));
  if (databaseUrl !== undefined) {
    const store = await PostgresRuntimeStore.open(databaseUrl);
    return withKey(store, "postgres", store.label, () =>
      options.secretKey || options.keyPath
        ? givenKey(options)
        : loadOrCreateKeyFile(join(ensureHome(options.env), KEY_FILE)),
    );
  }
  const dbPath = options.dbPath ?? join(ensureHome(options.env), DB_FILE);
  const store = new SqliteRuntimeStore(dbPath);
  return withKey(store, "sqlite", dbPath, () =>
    options.secretKey || options.keyPath
      ? givenKey(options)
      : loadOrCreateKeyFile(join(dirname(dbPath), KEY_FILE)),
  );
}

function givenKey(options: RuntimeOptions): Uint8Array {
  if (options.secretKey) return keyFrom(options.secretKey);
  return loadOrCreateKeyFile(options.keyPath as string);
}

/** Loads the key; on a shared store, checks it is the one every other instance uses. Closes the store on failure. */
async function withKey(
  store: RuntimeStore,
  kind: StoreKind,
  label: string,
  load: () => Uint8Array,
): Promise<RuntimeStorage> {
  try {
    const key = load();
    if (store.bindCallbackKey && !(await store.bindCallbackKey(keyFingerprint(key)))) {
      throw new CallbackKeyError(
        "rap_callback_key_mismatch",
        `The runtimes sharing the database at ${label} sign callback URLs with another key than this one, so each ` +
          "would refuse the other's callbacks. Give every instance the same key (secretKey or keyPath; the CLI's " +
          "--key-file), e.g. a copy of the first instance's rap-runtime.key.",
      );
    }
    return { store, key, kind, label };
  } catch (error) {
    await store.close();
    throw error;
  }
}

/** Names the key without revealing it: an HMAC under the key of a fixed label. */
export function keyFingerprint(key: Uint8Array): string {
  return createHmac("sha256", key)
    .update("agentauth-rap-callback-key-fingerprint-v1")
    .digest("hex");
}
