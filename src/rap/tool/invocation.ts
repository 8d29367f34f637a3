/**
 * Judging an invocation body (pure): accept it, answer it with an error `tool_result` (there is a usable callback
 * target), or refuse it with HTTP 400 (there is nothing to call back to). Hostile input never throws here.
 */

import { type Invocation, InvocationSchema } from "../wire.ts";
import type { CallTarget } from "./messages.ts";
import type { CompiledOperation, OperationTable } from "./toolset.ts";

export type InvocationVerdict =
  | { kind: "accept"; invocation: Invocation; target: CallTarget; operation: CompiledOperation }
  | { kind: "error"; target: CallTarget; message: string }
  | { kind: "refuse"; message: string };

const MAX_REPORTED_ERRORS = 5;

/** Default policy for callback URLs: https anywhere, plain http only on loopback. */
export function secureCallbackUrl(url: URL): boolean {
  if (url.protocol === "https:") return true;
  if (url.protocol !== "http:") return false;
  const host = url.hostname;
  return host === "localhost" || host === "[::1]" || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(host);
}

export function judgeInvocation(
  body: unknown,
  operations: OperationTable,
  callbackUrlAllowed: (url: URL) => boolean = secureCallbackUrl,
): InvocationVerdict {
  if (body === null || typeof body !== "object" || Array.isArray(body)) {
    return { kind: "refuse", message: "The invocation must be a JSON object." };
  }
  const record = body as Record<string, unknown>;
  const target = targetOf(record);
  if (typeof target === "string") return { kind: "refuse", message: target };
  const url = new URL(target.callbackUrl);
  if (!callbackUrlAllowed(url)) {
    return {
      kind: "refuse",
      message: "callback_url is not allowed: use https (plain http only on loopback).",
    };
  }
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
  const operation = operations.get(invocation.operation);
  if (!operation) {
    const known = [...operations.keys()].join(", ");
    return {
      kind: "error",
      target,
      message: `This tool has no operation named ${JSON.stringify(invocation.operation)}. Available operations: ${known}. Reload the toolset and call one of them.`,
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
function targetOf(record: Record<string, unknown>): CallTarget | string {
  const { callback_url: callbackUrl, group_id: groupId, id, call_id: callId } = record;
  const shape = InvocationSchema.pick({ callback_url: true, group_id: true, id: true });
  if (!shape.safeParse({ callback_url: callbackUrl, group_id: groupId, id }).success) {
    return "The invocation needs a valid callback_url, group_id and id; nothing can be reported without them.";
  }
  const url = URL.parse(callbackUrl as string);
  if (!url || (url.protocol !== "https:" && url.protocol !== "http:")) {
    return "callback_url must be an absolute http(s) URL.";
  }
  const echoed = InvocationSchema.shape.call_id.safeParse(callId);
  return {
    callbackUrl: url.href,
    groupId: groupId as string,
    id: id as string,
    callId: echoed.success ? (echoed.data ?? null) : null,
  };
}
