/** The RAP runtime's typed errors: one class per kind of failure, a stable `code`, a next step in the message. */

import { AgentAuthError } from "../../core/errors.ts";

/** A toolset could not be fetched, or it was invalid and rejected whole. */
export class ToolsetDiscoveryError extends AgentAuthError {
  declare readonly code: "rap_toolset_unreachable" | "rap_toolset_invalid";
  readonly baseUrl: string;
  /** The short why (`ECONNREFUSED`, `it answered HTTP 404`, a schema issue), for log lines; no URL, no secret. */
  readonly reason: string | undefined;
  constructor(
    code: "rap_toolset_unreachable" | "rap_toolset_invalid",
    baseUrl: string,
    message: string,
    options?: { cause?: unknown; reason?: string },
  ) {
    super(code, message, options);
    this.baseUrl = baseUrl;
    this.reason = options?.reason;
  }
}

/**
 * The runtime refused an invocation locally, before anything was sent: unknown or clashing operation, arguments that
 * do not match `inputSchema`, a call id already used in the thread, no callback URL to hand out.
 */
export class InvocationRefusedError extends AgentAuthError {
  declare readonly code:
    | "rap_unknown_operation"
    | "rap_name_clash"
    | "rap_toolset_mismatch"
    | "rap_invalid_arguments"
    | "rap_call_exists"
    | "rap_no_callback_url"
    | "rap_runtime_closed";
  /** For `rap_invalid_arguments`: where and why, from the JSON Schema validator (never the values). */
  readonly issues: readonly string[];
  constructor(
    code: InvocationRefusedError["code"],
    message: string,
    options?: { cause?: unknown; issues?: readonly string[] },
  ) {
    super(code, message, options);
    this.issues = options?.issues ?? [];
  }
}

export function callExists(groupId: string, id: string): InvocationRefusedError {
  return new InvocationRefusedError(
    "rap_call_exists",
    `Thread ${JSON.stringify(groupId)} already has a call with id ${JSON.stringify(id)}; RAP call ids must be ` +
      "unique within a thread. Use a new id.",
  );
}

/** The runtime's store failed (I/O, a corrupt row, a schema from a newer agentauth). */
export class RuntimeStoreError extends AgentAuthError {
  declare readonly code: "rap_store_io" | "rap_store_schema_unsupported" | "rap_store_corrupt";
}

/** The runtime's callback key is missing, unreadable, too short, or not the one the shared database expects. */
export class CallbackKeyError extends AgentAuthError {
  /** `rap_callback_key_mismatch`: another instance sharing the database uses a different key. */
  declare readonly code: "rap_callback_key_invalid" | "rap_callback_key_mismatch";
}

/** `waitForResult` cannot give a result: no such call, the caller's signal aborted, or the runtime closed. */
export class WaitError extends AgentAuthError {
  declare readonly code: "rap_unknown_call" | "rap_wait_aborted";
}

/**
 * `rap_thread_busy`: the thread's lock stayed held by another instance (a slow hook, a long task) past the store's
 * bounded wait. Nothing was applied; the receiver answers 503 with `Retry-After`, so the tool retries later.
 */
export class ThreadBusyError extends AgentAuthError {
  declare readonly code: "rap_thread_busy";
}
