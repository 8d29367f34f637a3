/**
 * The RAP tool's durable state on PostgreSQL: pending authorizations, consent links, the callback outbox, the ledger
 * of accepted calls, cancellations and the replay ledger of accepted invocation signatures, shared by every
 * instance given the same database URL and the same vault key (AGENTAUTH_VAULT_KEY, or the key file).
 *
 * @example
 * const state = await openPostgresToolState({ url: process.env.AGENTAUTH_DATABASE_URL, keyring: loadKeyring() });
 * const tool = createToolServer({ ...options, state });
 */

import type { Logger } from "../../../core/log.ts";
import { openDatabase, type Presence, startPresence } from "../../../db/index.ts";
import type { Keyring } from "../../../vault/index.ts";
import type { ToolStateStore } from "../state.ts";
import { PostgresCallLedger } from "./calls.ts";
import { PostgresCancellations } from "./cancellations.ts";
import { PostgresConsents } from "./consents.ts";
import { joinInstances } from "./instances.ts";
import { PostgresOutbox } from "./outbox.ts";
import { PostgresPendingStore } from "./pending.ts";
import { PostgresReplayLedger } from "./replay.ts";
import { RAP_TOOL_COMPONENT, RAP_TOOL_MIGRATIONS } from "./schema.ts";

export interface PostgresToolStateOptions {
  /** postgres://user:password@host:port/database (the password never reaches a log or an error). */
  url: string;
  /** Seals verifiers, callback URLs and messages: every instance needs the same keys. */
  keyring: Keyring;
  /** Connections for this instance. Default 10. */
  poolSize?: number;
  /** Where the presence lock's losses and regains are logged. */
  logger?: Logger;
}

/** Opens the database and brings the rap_tool schema up to date; throws a typed DatabaseError when it cannot. */
export async function openPostgresToolState(
  options: PostgresToolStateOptions,
): Promise<ToolStateStore> {
  const db = await openDatabase(options.url, {
    component: RAP_TOOL_COMPONENT,
    migrations: RAP_TOOL_MIGRATIONS,
    poolSize: options.poolSize,
    // The presence lock's session, and one to replace it while the old one is still being given up.
    sessionPoolSize: 2,
  });
  let presence: Presence;
  try {
    presence = await startPresence(db, { logger: options.logger });
  } catch (error) {
    await db.close();
    throw error;
  }
  const outbox = new PostgresOutbox(db, options.keyring, presence.key);
  return {
    pending: new PostgresPendingStore(db, options.keyring),
    consents: (ttlMs) => new PostgresConsents(db, options.keyring, ttlMs),
    outbox,
    cancellations: new PostgresCancellations(db),
    calls: new PostgresCallLedger(db, options.keyring, outbox, presence.key),
    replay: new PostgresReplayLedger(db, db.label),
    presence,
    label: db.label,
    join: (settings) =>
      joinInstances(db, presence.key, [
        ...settings,
        {
          name: "vault_keys",
          label: "vault key",
          values: options.keyring.kids,
          fix: "give every instance the same AGENTAUTH_VAULT_KEY (see docs/deploy.md)",
        },
      ]),
    close: async () => {
      await presence.stop();
      await db.close();
    },
  };
}
