/** JSON-RPC answers a connection builds, pure: error shapes, zod issues without values, frame inspection. */

import { peerText } from "../../core/display.ts";
import {
  AhpErrorCodes,
  type JsonRpcError,
  type JsonRpcId,
  OFFICIAL_COMMAND_NAMES,
} from "../wire.ts";

export type Reply = { result: unknown } | { error: JsonRpcError };

export function notFound(method: string): Reply {
  if (OFFICIAL_COMMAND_NAMES.has(method)) {
    return invalid(
      AhpErrorCodes.MethodNotFound,
      `${method} is an AHP command this host does not implement.`,
    );
  }
  return invalid(
    AhpErrorCodes.MethodNotFound,
    `Method not found: ${peerText(method, { max: 100 })}`,
  );
}

export function invalid(code: number, message: string, data?: unknown): { error: JsonRpcError } {
  return { error: { code, message, ...(data === undefined ? {} : { data }) } };
}

/** Paths and zod's reasons only: never the received values (one may be a token). */
export function invalidParams(error: { issues: Array<{ path: PropertyKey[]; message: string }> }): {
  error: JsonRpcError;
} {
  const issues = error.issues
    .slice(0, 10)
    .map((i) => `${i.path.map(String).join(".") || "params"}: ${i.message}`);
  return invalid(AhpErrorCodes.InvalidParams, `Invalid params: ${issues.join("; ")}`);
}

export function idOf(raw: unknown): JsonRpcId | undefined {
  if (raw === null || typeof raw !== "object" || Array.isArray(raw)) return undefined;
  const id = (raw as { id?: unknown }).id;
  return typeof id === "string" || typeof id === "number" ? id : undefined;
}

export function isResponse(raw: unknown): boolean {
  return (
    raw !== null &&
    typeof raw === "object" &&
    ("result" in raw || "error" in raw) &&
    !("method" in raw)
  );
}

export function clip(text: string): string {
  return text.length > 100 ? `${text.slice(0, 100)}…` : text;
}
