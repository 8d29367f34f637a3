/**
 * The RAP tool's durable state on PostgreSQL: pending authorizations, consent links, the callback outbox, marks on
 * calls and the replay ledger of accepted invocation signatures, shared by every
 * instance given the same database URL and the same vault key (AGENTAUTH_VAULT_KEY, or the key file).
 *
 * @example
 * const state = await openPostgresToolState({ url: process.env.AGENTAUTH_DATABASE_URL, keyring: loadKeyring() });
 * const tool = createToolServer({ ...options, state });
 */

import { openDatabase } from "../../../db/index.ts";
import type { Keyring } from "../../../vault/index.ts";
import type { ToolStateStore } from "../state.ts";
import { PostgresCancellations } from "./cancellations.ts";
import { PostgresConsents } from "./consents.ts";
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
}

/** Opens the database and brings the rap_tool schema up to date; throws a typed DatabaseError when it cannot. */
export async function openPostgresToolState(
  options: PostgresToolStateOptions,
): Promise<ToolStateStore> {
  const db = await openDatabase(options.url, {
    component: RAP_TOOL_COMPONENT,
    migrations: RAP_TOOL_MIGRATIONS,
    poolSize: options.poolSize,
    sessionPoolSize: 1,
  });
  return {
    pending: new PostgresPendingStore(db, options.keyring),
    consents: (ttlMs) => new PostgresConsents(db, options.keyring, ttlMs),
    outbox: new PostgresOutbox(db, options.keyring),
    cancellations: new PostgresCancellations(db),
    replay: new PostgresReplayLedger(db, db.label),
    label: db.label,
    close: () => db.close(),
  };
}
