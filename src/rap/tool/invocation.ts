/**
 * Judging an invocation body (pure): accept it, answer it with an error `tool_result` (there is a usable callback
 * target), or refuse it with HTTP 400 (there is nothing to call back to). Hostile input never throws here.
 */

import { isReservedSubject, RESERVED_SUBJECT_PREFIX } from "../../oauth/index.ts";
import { type Invocation, InvocationSchema, MAX_JSON_DEPTH, nestedDeeperThan } from "../wire.ts";
import type { CallTarget } from "./messages.ts";
import type { CompiledOperation, OperationTable } from "./toolset.ts";

export type InvocationVerdict =
  | { kind: "accept"; invocation: Invocation; target: CallTarget; operation: CompiledOperation }
  | { kind: "error"; target: CallTarget; message: string }
  | { kind: "refuse"; message: string };

const MAX_REPORTED_ERRORS = 5;
// Built once: zod 4 compiles a fast path per schema object, so a `.pick()` per request recompiled it every time
// (the largest single cost before the acknowledgement in the bench/rap.bench.ts profile).
const TARGET_SCHEMA = InvocationSchema.pick({ callback_url: true, group_id: true, id: true });
const CALL_ID_SCHEMA = InvocationSchema.shape.call_id;

/** Default policy for callback URLs: https anywhere, plain http only on loopback. */
export function secureCallbackUrl(url: URL): boolean {
  if (url.protocol === "https:") return true;
  if (url.protocol !== "http:") return false;
  const host = url.hostname;
  return host === "localhost" || host === "[::1]" || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(host);
}

export type TargetVerdict =
  | { kind: "target"; target: CallTarget }
  | { kind: "refuse"; message: string };
export type CallVerdict =
  | { kind: "accept"; invocation: Invocation; target: CallTarget; operation: CompiledOperation }
  | { kind: "error"; target: CallTarget; message: string };

/** Both halves at once (see `judgeTarget` and `judgeCall`). */
export function judgeInvocation(
  body: unknown,
  operations: OperationTable,
  callbackUrlAllowed: (url: URL) => boolean = secureCallbackUrl,
): InvocationVerdict {
  const verdict = judgeTarget(body, callbackUrlAllowed);
  return verdict.kind === "refuse"
    ? verdict
    : judgeCall(body as Record<string, unknown>, verdict.target, operations);
}

/**
 * The half decided before the acknowledgement: is there a callback target to report to? Without one the answer is
 * HTTP 400; with one the tool acknowledges 200 and `judgeCall` (the full schema, the operation, its inputSchema)
 * runs afterwards, its errors going to the target (RAP: errors found while processing are sent as tool_result).
 */
export function judgeTarget(
  body: unknown,
  callbackUrlAllowed: (url: URL) => boolean = secureCallbackUrl,
): TargetVerdict {
  if (body === null || typeof body !== "object" || Array.isArray(body)) {
    return { kind: "refuse", message: "The invocation must be a JSON object." };
  }
  const found = targetOf(body as Record<string, unknown>);
  if (typeof found === "string") return { kind: "refuse", message: found };
  if (!callbackUrlAllowed(found.url)) {
    return {
      kind: "refuse",
      message: "callback_url is not allowed: use https (plain http only on loopback).",
    };
  }
  return { kind: "target", target: found.target };
}

/** The half after the acknowledgement: the whole invocation, the operation and its arguments. */
export function judgeCall(
  record: Record<string, unknown>,
  target: CallTarget,
  operations: OperationTable,
): CallVerdict {
  const parsed = InvocationSchema.safeParse(record);
  if (!parsed.success) {
    const fields = [
      ...new Set(parsed.error.issues.map((issue) => issue.path.join(".") || "(root)")),
    ];
    return {
      kind: "error",
      target,
      message: `The invocation is malformed (invalid: ${fields.slice(0, MAX_REPORTED_ERRORS).join(", ")}). Send an object with operation, arguments (an object), id, group_id and callback_url.`,
    };
  }
  const invocation = parsed.data;
  // The tool files a user's credentials under their user_id (providers.ts credentialKey): agentauth's own namespace
  // would have them taken for, or shadow, its own vault records (oauth/subject.ts). Refused for every operation, since
  // a handler is given the user_id too (a disconnect, say).
  if (invocation.user_id && isReservedSubject(invocation.user_id)) {
    return {
      kind: "error",
      target,
      message: `The invocation's user_id starts with "${RESERVED_SUBJECT_PREFIX}", which is kept for agentauth's own vault records. The runtime must send the user's own id.`,
    };
  }
  const operation = operations.get(invocation.operation);
  if (!operation) {
    const known = [...operations.keys()].join(", ");
    return {
      kind: "error",
      target,
      message: `This tool has no operation named ${JSON.stringify(invocation.operation)}. Available operations: ${known}. Reload the toolset and call one of them.`,
    };
  }
  // Checked before ajv: a recursive inputSchema makes its validator recurse as deep as the arguments go, and
  // 1 MiB of JSON nests far deeper than the stack (the runtime applies the same limit before sending).
  if (nestedDeeperThan(invocation.arguments, MAX_JSON_DEPTH)) {
    return {
      kind: "error",
      target,
      message: `The arguments for ${invocation.operation} are nested more than ${MAX_JSON_DEPTH} levels deep, which this tool does not accept. Flatten them and call again.`,
    };
  }
  if (!operation.validate(invocation.arguments)) {
    const problems = (operation.validate.errors ?? [])
      .slice(0, MAX_REPORTED_ERRORS)
      .map((error) => `${error.instancePath || "arguments"} ${error.message ?? "is invalid"}`);
    return {
      kind: "error",
      target,
      message: `Invalid arguments for ${invocation.operation}: ${problems.join("; ")}. Fix the arguments to match the operation's inputSchema and call again.`,
    };
  }
  return { kind: "accept", invocation, target, operation };
}

/** The callback target, when the body has one we can use even if the rest is wrong; else why not. */
function targetOf(record: Record<string, unknown>): { target: CallTarget; url: URL } | string {
  const { callback_url: callbackUrl, group_id: groupId, id, call_id: callId } = record;
  if (!TARGET_SCHEMA.safeParse({ callback_url: callbackUrl, group_id: groupId, id }).success) {
    return "The invocation needs a valid callback_url, group_id and id; nothing can be reported without them.";
  }
  const url = URL.parse(callbackUrl as string);
  if (!url || (url.protocol !== "https:" && url.protocol !== "http:")) {
    return "callback_url must be an absolute http(s) URL.";
  }
  const echoed = CALL_ID_SCHEMA.safeParse(callId);
  return {
    url,
    target: {
      callbackUrl: url.href,
      groupId: groupId as string,
      id: id as string,
      callId: echoed.success ? (echoed.data ?? null) : null,
    },
  };
}
