/** A stored call row (SQLite or PostgreSQL, same column names) read back as a CallRecord, every column checked. */

import type { CallRecord, CallResult, CallStatus, SubscriptionState } from "./store.ts";

export interface RowReader {
  /** A numeric column as a number; throws the store's corrupt-row error otherwise (backends differ in how it arrives). */
  num(value: unknown): number;
  corrupt(why: string, cause?: unknown): Error;
}

/** A JSON column (a call's arguments or result, an entry, a view) parsed, or the store's corrupt-row error. */
export function jsonColumn(
  value: unknown,
  what: string,
  reader: Pick<RowReader, "corrupt">,
): unknown {
  try {
    return JSON.parse(String(value));
  } catch (error) {
    throw reader.corrupt(`the ${what} column is not JSON`, error);
  }
}

export function callFromRow(row: Record<string, unknown>, reader: RowReader): CallRecord {
  const text = (v: unknown) => (typeof v === "string" ? v : null);
  const json = (value: unknown, what: string) => jsonColumn(value, what, reader);
  return {
    groupId: String(row.group_id),
    id: String(row.id),
    callId: text(row.call_id),
    operation: String(row.operation),
    arguments: json(row.arguments, "arguments") as Record<string, unknown>,
    userId: text(row.user_id),
    toolset: String(row.toolset),
    baseUrl: String(row.base_url),
    requiresAuth: text(row.requires_auth),
    status: String(row.status) as CallStatus,
    subscription: String(row.subscription) as SubscriptionState,
    result: row.result === null ? null : (json(row.result, "result") as CallResult),
    createdAt: reader.num(row.created_at),
    updatedAt: reader.num(row.updated_at),
    deadline: reader.num(row.deadline),
  };
}
