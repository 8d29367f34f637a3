/**
 * RAP (Reactive Agent Protocol) wire shapes, declared once for the tool side, the runtime side and the tests.
 * Follows the current spec (hydro-project/infinity after the July 2026 rewrite): no `toolset_version`, no HTTP 409,
 * five callback message types. See docs/rap.md and ../shared/research/rap.md.
 */

import { z } from "zod";

/** Every RAP body we accept is JSON and small; anything larger is refused before parsing. */
export const MAX_BODY_BYTES = 1024 * 1024;
export const TOOLSET_PATH = "/.well-known/rap-toolset";
export const CLOSE_THREAD_PATH = "/close_thread";
export const CANCEL_TOOL_CALL_PATH = "/cancel_tool_call";
/**
 * The deepest nesting of objects and arrays accepted in arguments and callback content. JSON.parse copes with any
 * depth, but JSON.stringify (storing, sending) overflows the stack at a few thousand levels; real tool data is a
 * few levels deep, so 100 is generous and still far from the stack.
 */
export const MAX_JSON_DEPTH = 100;

const id = z.string().min(1).max(512);
const nullableId = id.nullish();

export const AnnotationsSchema = z
  .object({
    /** The auth provider the operation needs; the runtime flags it before invoking. */
    requiresAuth: z.string().min(1).max(128).optional(),
    readOnly: z.boolean().optional(),
    destructive: z.boolean().optional(),
    idempotent: z.boolean().optional(),
    longRunning: z.boolean().optional(),
  })
  .catchall(z.unknown());

export const ToolSchema = z.object({
  name: z.string().min(1).max(128),
  description: z.string(),
  inputSchema: z.record(z.string(), z.unknown()),
  annotations: AnnotationsSchema.optional(),
  displayScript: z.string().optional(),
});
export type Tool = z.infer<typeof ToolSchema>;

export const ToolsetSchema = z.object({
  name: z.string().min(1).max(128),
  description: z.string().optional(),
  endpoint: z.string().url(),
  needsMigration: z.boolean().optional(),
  tools: z.array(ToolSchema).min(1),
});
export type Toolset = z.infer<typeof ToolsetSchema>;

export const InvocationSchema = z.object({
  operation: z.string().min(1).max(128),
  arguments: z.record(z.string(), z.unknown()),
  id,
  call_id: nullableId,
  callback_url: z.string().url().max(4096),
  group_id: id,
  thread_ancestors: z.array(id).nullish(),
  user_id: nullableId,
});
export type Invocation = z.infer<typeof InvocationSchema>;

export const DisplayItemSchema = z.object({ type: z.string() }).catchall(z.unknown());

export const ToolResultSchema = z.object({
  type: z.literal("tool_result"),
  group_id: id,
  id,
  call_id: nullableId,
  text: z.string().optional(),
  content: z.array(z.record(z.string(), z.unknown())).optional(),
  display_as: z.array(DisplayItemSchema).optional(),
  subscription: z.boolean().optional(),
});
export type ToolResult = z.infer<typeof ToolResultSchema>;

export const OAuthMessageSchema = z.object({
  type: z.literal("oauth"),
  group_id: id,
  id,
  call_id: nullableId,
  auth_url: z.string().url().max(8192),
});
export type OAuthMessage = z.infer<typeof OAuthMessageSchema>;

export const SubscriptionEventSchema = z.object({
  type: z.literal("subscription_event"),
  group_id: id,
  tool_call_id: id,
  text: z.string(),
  associative: z.boolean().optional(),
  final: z.boolean().optional(),
});
export type SubscriptionEvent = z.infer<typeof SubscriptionEventSchema>;

export const UserChoiceSchema = z.object({
  type: z.literal("user_choice"),
  group_id: id,
  id,
  call_id: nullableId,
  prompt: z.string(),
  choices: z.array(z.string()).min(1),
  default: z.number().int().nonnegative().optional(),
  response_url: z.string().url(),
});
export type UserChoice = z.infer<typeof UserChoiceSchema>;

export const ViewUpdateSchema = z.object({
  type: z.literal("view_update"),
  group_id: id,
  view_type: z.string().min(1).max(128),
  content: z.unknown(),
});
export type ViewUpdate = z.infer<typeof ViewUpdateSchema>;

export const CallbackMessageSchema = z.discriminatedUnion("type", [
  ToolResultSchema,
  OAuthMessageSchema,
  SubscriptionEventSchema,
  UserChoiceSchema,
  ViewUpdateSchema,
]);
export type CallbackMessage = z.infer<typeof CallbackMessageSchema>;

export const CloseThreadSchema = z.object({ thread_id: id });
export const CancelToolCallSchema = z.object({ thread_id: id, tool_call_id: id });

/**
 * Pure, iterative (a recursive walk would itself overflow): true when `value` nests objects/arrays deeper than
 * `max` levels. A scalar is depth 0, `{}` and `[]` depth 1.
 */
export function nestedDeeperThan(value: unknown, max: number = MAX_JSON_DEPTH): boolean {
  const stack: [unknown, number][] = [[value, 0]];
  for (let next = stack.pop(); next; next = stack.pop()) {
    const [item, depth] = next;
    if (item === null || typeof item !== "object") continue;
    if (depth + 1 > max) return true;
    for (const child of Object.values(item)) {
      if (child !== null && typeof child === "object") stack.push([child, depth + 1]);
    }
  }
  return false;
}

/** RAP's error form: a normal tool_result whose text starts with "Error: ". */
export function errorText(message: string): string {
  return message.startsWith("Error: ") ? message : `Error: ${message}`;
}
