/**
 * The configuration every instance sharing one database must agree on (issue 22 §5): checked when an instance
 * starts, against the instances alive right now (their presence locks, src/db/presence.ts), so one started with
 * another OAuth client, API resource, invocation secret or vault key refuses to start and says what to set, instead
 * of failing sign-ins at random later ("the authorization response belongs to a different client", `invalid_target`
 * at refresh, rows nobody else can open). With no instance alive, the newcomer's configuration is the one.
 *
 * Only comparable fingerprints are stored (ids, resource URLs, key ids, an HMAC of the invocation secret): never a
 * secret. Rows of instances the database says are gone are deleted on the way.
 */

import {
  advisoryKey,
  type Database,
  DEFAULT_GRACE_MS,
  gone,
  PRESENT_KEYS_SQL,
} from "../../../db/index.ts";
import { ToolConfigError } from "../errors.ts";
import type { SharedSetting } from "../state.ts";

/** Serializes the check and the insert, so two instances starting together with different settings cannot both pass. */
const JOIN_LOCK = advisoryKey("rap_tool", "instances");

export async function joinInstances(
  db: Database,
  owner: string,
  settings: readonly SharedSetting[],
): Promise<void> {
  const mine = Object.fromEntries(settings.map((s) => [s.name, s.values]));
  await db.transaction(async (tx) => {
    await tx.query("SELECT pg_advisory_xact_lock($1)", [JOIN_LOCK]);
    await tx.query(`DELETE FROM rap_tool_instances WHERE ${gone("owner", "$1")}`, [
      DEFAULT_GRACE_MS,
    ]);
    const live = await tx.query<{ settings: Record<string, string[]> }>(
      `SELECT settings FROM rap_tool_instances
        WHERE owner <> $1 AND owner IN (${PRESENT_KEYS_SQL})
        ORDER BY started_at`,
      [owner],
    );
    const differences = live.length > 0 ? compare(settings, live[0]?.settings ?? {}) : [];
    if (differences.length > 0) {
      throw new ToolConfigError(
        "rap_tool_config_mismatch",
        `${live.length} instance${live.length === 1 ? "" : "s"} of this tool already serve${live.length === 1 ? "s" : ""} from this database with another configuration, so this one would fail their users' sign-ins: ${differences.join("; ")}. Nothing was started.`,
      );
    }
    await tx.query(
      `INSERT INTO rap_tool_instances (owner, settings) VALUES ($1, $2)
       ON CONFLICT (owner) DO UPDATE SET settings = EXCLUDED.settings`,
      [owner, JSON.stringify(mine)],
    );
  });
}

/**
 * What differs, one clause per setting with what to do. Two instances agree on a setting when its value lists share
 * an element: one value for most; the vault's key ids, so that a rotation (new key current, old key kept) passes.
 */
function compare(settings: readonly SharedSetting[], theirs: Record<string, string[]>): string[] {
  const out: string[] = [];
  for (const setting of settings) {
    const other = theirs[setting.name];
    if (!Array.isArray(other)) continue;
    if (setting.values.some((v) => other.includes(v))) continue;
    out.push(
      `the ${setting.label} is ${quote(setting.values)} here but ${quote(other)} there (${setting.fix})`,
    );
  }
  return out;
}

function quote(values: readonly string[]): string {
  return values.map((v) => `"${v}"`).join(" or ");
}
