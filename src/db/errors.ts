/** The PostgreSQL backends' typed errors: what failed, with the URL redacted, and what to do next. */

import { AgentAuthError } from "../core/errors.ts";

export type DatabaseErrorCode =
  /** The connection string is not a PostgreSQL URL, or cannot be parsed. */
  | "database_url_invalid"
  /** The server could not be reached, refused the login, or dropped the connection. */
  | "database_unavailable"
  /** Every connection of this process's pool stayed busy until the wait ran out: the pool is too small for the load. */
  | "database_pool_exhausted"
  /** The database holds a schema from a newer agentauth. */
  | "database_schema_unsupported"
  /** A statement failed for another reason (disk full, permissions, a constraint). */
  | "database_failed";

export class DatabaseError extends AgentAuthError {
  declare readonly code: DatabaseErrorCode;
  /** PostgreSQL's SQLSTATE when the server sent one (e.g. "28P01" bad password): safe, never a secret. */
  readonly sqlState: string | undefined;

  constructor(
    code: DatabaseErrorCode,
    message: string,
    options?: { cause?: unknown; sqlState?: string },
  ) {
    super(code, message, options);
    this.sqlState = options?.sqlState;
  }
}

/** SQLSTATE classes that mean "the connection, not the statement": 08 connection, 28 auth, 57P server shutdown, 53 resources. */
export function isConnectionProblem(error: unknown): boolean {
  const code = (error as { code?: unknown })?.code;
  if (typeof code !== "string") return false;
  if (/^(08|28|53)/.test(code) || code.startsWith("57P")) return true;
  return ["ECONNREFUSED", "ECONNRESET", "ENOTFOUND", "ETIMEDOUT", "EPIPE", "EHOSTUNREACH"].includes(
    code,
  );
}

/** A short reason for a failed database call, safe to print: the server's message, never parameters. */
export function databaseReason(error: unknown): string {
  const err = error as { code?: unknown; message?: unknown };
  const message = typeof err?.message === "string" ? err.message : "unknown error";
  const code = typeof err?.code === "string" ? ` (${err.code})` : "";
  // pg's own messages name users, databases and hosts, never passwords; cut long ones all the same.
  return `${message.slice(0, 300)}${code}`;
}

/**
 * True when a failure says "not now" rather than "no": the database could not be reached or was restarting
 * (`database_unavailable`), or every connection stayed busy (`database_pool_exhausted`). HTTP surfaces answer these
 * 503 with Retry-After, so clients retry, where a 4xx would tell them not to (issue 22 §3).
 */
export function isTemporarilyUnavailable(error: unknown): boolean {
  return (
    error instanceof DatabaseError &&
    (error.code === "database_unavailable" || error.code === "database_pool_exhausted")
  );
}
