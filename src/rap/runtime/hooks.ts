/**
 * How the runtime reports to its embedder (who plays the model and the UI): plain functions of plain events. A hook
 * that throws is logged and ignored: it must not undo a committed result or stall the thread's queue forever.
 */

import type { Logger } from "../../core/log.ts";
import type { CallRecord, CallResult, ThreadEntry } from "./store.ts";

export interface ToolResultEvent {
  groupId: string;
  id: string;
  call: CallRecord;
  result: CallResult;
}

export interface AuthorizationRequiredEvent {
  groupId: string;
  id: string;
  operation: string;
  toolset: string;
  /** The tool's `annotations.requiresAuth`, when it declared one. */
  provider: string | null;
  /** The `user_id` the call was invoked for: the person the authorization will belong to. */
  userId: string | null;
  /**
   * The URL the user must visit. Handed over once and never stored by the runtime (RAP §OAuth): show it now (print
   * it, render a link), do not persist it.
   */
  authUrl: string;
}

export interface StatusEvent {
  groupId: string;
  id: string | null;
  text: string;
  entry: ThreadEntry;
}

export interface SubscriptionEventEvent {
  groupId: string;
  toolCallId: string;
  text: string;
  associative: boolean;
  final: boolean;
  call: CallRecord;
}

export interface UserChoiceEvent {
  groupId: string;
  id: string;
  prompt: string;
  choices: string[];
  default: number | null;
  /**
   * Sends the user's answer (an index into `choices`) to the tool's `response_url`; the call stays pending until
   * the tool's result. Resolves false if the answer could not be delivered.
   */
  respond(selected: number): Promise<boolean>;
}

export interface ViewUpdateEvent {
  groupId: string;
  viewType: string;
  content: unknown;
}

export interface RequiresAuthEvent {
  groupId: string;
  id: string;
  operation: string;
  toolset: string;
  provider: string;
}

export interface RuntimeHooks {
  /** A call reached its terminal result: the tool's, or one the runtime made (refusal, timeout, cancellation). */
  onToolResult?(event: ToolResultEvent): void | Promise<void>;
  /** The tool needs the user to authorize: surface `authUrl` now. Without this hook the URL cannot be shown. */
  onAuthorizationRequired?(event: AuthorizationRequiredEvent): void | Promise<void>;
  /** A status line was added to the thread (e.g. "Authorization in progress for github…"), for the model. */
  onStatus?(event: StatusEvent): void | Promise<void>;
  onSubscriptionEvent?(event: SubscriptionEventEvent): void | Promise<void>;
  /** Without this hook the choice is not answered (never auto-answered): the call times out. */
  onUserChoice?(event: UserChoiceEvent): void | Promise<void>;
  onViewUpdate?(event: ViewUpdateEvent): void | Promise<void>;
  /** Called before dispatching an operation annotated `requiresAuth`: the user may be asked to authorize. */
  onRequiresAuth?(event: RequiresAuthEvent): void | Promise<void>;
}

export async function callHook<E>(
  logger: Logger,
  name: keyof RuntimeHooks,
  hook: ((event: E) => void | Promise<void>) | undefined,
  event: E,
): Promise<void> {
  if (!hook) return;
  try {
    await hook(event);
  } catch (error) {
    logger.warn("rap.runtime.hook_failed", { hook: name, error });
  }
}
