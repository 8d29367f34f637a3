/** Builders for what the tool POSTs to `callback_url` (pure): `tool_result` (success or error) and `oauth`. */

import {
  errorText,
  type OAuthMessage,
  OAuthMessageSchema,
  type ToolResult,
  ToolResultSchema,
} from "../wire.ts";
import type { OperationOutput } from "./options.ts";

/** Where a call's messages go and which call they answer. */
export interface CallTarget {
  callbackUrl: string;
  groupId: string;
  id: string;
  /** Echoed as given (null when the invocation sent null or nothing). */
  callId: string | null;
}

/** An error `tool_result`: the text always starts with `Error: ` (RAP's error form). */
export function errorResult(target: CallTarget, message: string): ToolResult {
  return {
    type: "tool_result",
    group_id: target.groupId,
    id: target.id,
    call_id: target.callId,
    text: errorText(message),
  };
}

/** A handler's output as a `tool_result`, or undefined when it is not a valid one (the caller sends an error). */
export function outputResult(target: CallTarget, output: OperationOutput): ToolResult | undefined {
  const body = typeof output === "string" ? { text: output } : output;
  const parsed = ToolResultSchema.safeParse({
    type: "tool_result",
    group_id: target.groupId,
    id: target.id,
    call_id: target.callId,
    text: body?.text,
    ...(body?.display_as !== undefined ? { display_as: body.display_as } : {}),
  });
  return parsed.success && typeof parsed.data.text === "string" ? parsed.data : undefined;
}

export function oauthMessage(target: CallTarget, authUrl: URL): OAuthMessage {
  return OAuthMessageSchema.parse({
    type: "oauth",
    group_id: target.groupId,
    id: target.id,
    call_id: target.callId,
    auth_url: authUrl.href,
  });
}

/** True when any of `secrets` occurs anywhere in the serialised message: the last guard before a send. */
export function carriesSecret(message: unknown, secrets: readonly string[]): boolean {
  const text = JSON.stringify(message);
  return secrets.some((value) => value.length >= 8 && text.includes(value));
}
