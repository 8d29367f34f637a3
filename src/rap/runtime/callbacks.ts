/**
 * What each callback message does to a call, once the receiver has authenticated it (capability checked, body
 * valid, ids bound to the capability). Runs inside the thread's serial queue. The reply is sent as soon as the
 * change is committed; hooks run after, still inside the queue, so the next message of the thread waits for them.
 *
 * Replies: 200 when the message was applied or is a duplicate of one already applied (a retry must look delivered);
 * 404 when no call or subscription matches (RAP: log and discard; a 4xx tells the tool not to retry);
 * 410 when the subscription has ended; 400 when the message contradicts the call (call_id, empty result, auth_url).
 *
 * Delivery keys (the tool's `Idempotency-Key`, stable across retries of one message, scoped by the receiver to the
 * call whose capability it came to): a key the thread already recorded for that call is answered 200 `duplicate` and
 * nothing is applied; otherwise the change is applied and the key recorded
 * before the reply (with the change itself, atomically, for tool_result, oauth, subscription_event and user_choice: a
 * result committed without its key would make the retry a "duplicate" that never settles; an entry would be added
 * twice). This runs under the thread's lock, across instances when the store has `lockGroup`.
 * Without a key: subscription events are at-least-once (a retry after a lost reply adds the event again);
 * tool_result, oauth and user_choice are still deduplicated by the call's state, view_update overwrites.
 */

import { createHash } from "node:crypto";
import type { Logger } from "../../core/log.ts";
import {
  type CallbackMessage,
  errorText,
  type OAuthMessage,
  type SubscriptionEvent,
  type ToolResult,
  type UserChoice,
  type ViewUpdate,
} from "../wire.ts";
import { callHook, type RuntimeHooks } from "./hooks.ts";
import { urlProblem } from "./http.ts";
import {
  type CallRecord,
  type CallResult,
  isOpen,
  type NewThreadEntry,
  type RuntimeStore,
} from "./store.ts";

export interface Reply {
  status: number;
  body: Record<string, unknown>;
  /** Extra response headers (e.g. `Retry-After` on a 503). */
  headers?: Record<string, string>;
}

export interface CallbackContext {
  store: RuntimeStore;
  hooks: RuntimeHooks;
  logger: Logger;
  now(): number;
  /** Reports a terminal result: waiters, then `onToolResult`. */
  settle(call: CallRecord): Promise<void>;
  /** Adds a status line to the thread and calls `onStatus`. */
  status(groupId: string, id: string | null, text: string): Promise<void>;
  /**
   * SHA-256 of the last auth_url surfaced per call, in memory only: a retried oauth message is not shown twice by
   * this instance. Across instances, only a delivery key covers it: a keyless retry reaching another instance may
   * surface the link once more there.
   */
  surfaced: Map<string, string>;
  postChoice(responseUrl: string, id: string, selected: number): Promise<boolean>;
  allowInsecureHttp: boolean;
}

type Respond = (reply: Reply) => void;

const ok = (extra: Record<string, unknown> = {}): Reply => ({
  status: 200,
  body: { ok: true, ...extra },
});
const refuse = (status: number, error: string, message: string): Reply => ({
  status,
  body: { error, message },
});

export async function processCallback(
  ctx: CallbackContext,
  message: CallbackMessage,
  respond: Respond,
  deliveryKey?: string,
): Promise<void> {
  const key = deliveryKey === undefined ? undefined : { groupId: message.group_id, deliveryKey };
  if (key && (await ctx.store.hasDelivery(key.groupId, key.deliveryKey))) {
    ctx.logger.info("rap.callback.duplicate_delivery", {
      groupId: message.group_id,
      type: message.type,
    });
    // A final event's entry and key commit together, the subscription's end just after: an instance killed in
    // between leaves it open. Ending it here (compare-and-set, a no-op if already ended) completes the retry.
    if (message.type === "subscription_event" && message.final) {
      await ctx.store.setSubscription(
        message.group_id,
        message.tool_call_id,
        "active",
        "ended",
        ctx.now(),
      );
    }
    respond(ok({ duplicate: true }));
    return;
  }
  switch (message.type) {
    case "tool_result":
      return onToolResult(ctx, message, respond, key);
    case "oauth":
      return onOAuth(ctx, message, respond, key);
    case "subscription_event":
      return onSubscriptionEvent(ctx, message, respond, key);
    case "user_choice":
      return onUserChoice(ctx, message, respond, key);
    case "view_update":
      return onViewUpdate(ctx, message, respond, key);
  }
}

/** A message's delivery key, if it came with one. */
type Delivery = { groupId: string; deliveryKey: string } | undefined;

/** Records the delivery key once its change is committed, before the reply (a retry then finds it). */
async function recordDelivery(ctx: CallbackContext, key: Delivery): Promise<void> {
  if (key) await ctx.store.recordDelivery(key.groupId, key.deliveryKey, ctx.now());
}

/** Finds the call a message names, replying 404/400 itself when there is no usable one. */
async function matchCall(
  ctx: CallbackContext,
  message: ToolResult | OAuthMessage | UserChoice,
  respond: Respond,
): Promise<CallRecord | undefined> {
  const call = await ctx.store.getCall(message.group_id, message.id);
  const log = { groupId: message.group_id, id: message.id, type: message.type };
  if (!call) {
    ctx.logger.warn("rap.callback.unmatched", log);
    respond(
      refuse(404, "unknown_call", "No call with this group_id and id; the message was discarded."),
    );
    return undefined;
  }
  // RAP: call_id MUST be echoed when it was sent. A different value is a contradiction; a missing echo is
  // tolerated (logged) because the capability already binds the message to this call.
  if (message.call_id != null && message.call_id !== call.callId) {
    ctx.logger.warn("rap.callback.call_id_mismatch", log);
    respond(refuse(400, "call_id_mismatch", "call_id does not echo the invocation's call_id."));
    return undefined;
  }
  if (message.call_id == null && call.callId !== null)
    ctx.logger.warn("rap.callback.call_id_missing", log);
  if (!isOpen(call.status)) {
    ctx.logger.info("rap.callback.duplicate", { ...log, status: call.status });
    respond(ok({ duplicate: true }));
    return undefined;
  }
  return call;
}

async function onToolResult(
  ctx: CallbackContext,
  message: ToolResult,
  respond: Respond,
  key: Delivery,
) {
  const textItems = (message.content ?? [])
    .filter((item) => item.type === "text" && typeof item.text === "string")
    .map((item) => item.text as string);
  if (message.text === undefined && message.content === undefined) {
    respond(refuse(400, "invalid_message", "A tool_result needs text or content."));
    return;
  }
  const call = await matchCall(ctx, message, respond);
  if (!call) return;
  const text = message.text ?? textItems.join("\n");
  const result: CallResult = {
    text,
    ...(message.content ? { content: message.content } : {}),
    ...(message.display_as ? { displayAs: message.display_as } : {}),
    isError: text.startsWith("Error: "),
    synthetic: false,
  };
  const done = await ctx.store.transition(call.groupId, call.id, {
    from: ["pending", "authorizing"],
    to: "completed",
    result,
    ...(message.subscription ? { subscription: "active" as const } : {}),
    at: ctx.now(),
    // With the change, atomically: a result committed without its key would turn the retry into a "duplicate"
    // and never be settled. No change (a race lost to a timeout): the call's state answers the retry.
    ...(key ? { deliveryKey: key.deliveryKey } : {}),
  });
  ctx.surfaced.delete(JSON.stringify([call.groupId, call.id]));
  respond(ok(done ? {} : { duplicate: true }));
  if (!done) return;
  ctx.logger.info("rap.callback.tool_result", {
    groupId: call.groupId,
    id: call.id,
    isError: result.isError,
    subscription: done.subscription === "active",
  });
  await ctx.settle(done);
}

async function onOAuth(
  ctx: CallbackContext,
  message: OAuthMessage,
  respond: Respond,
  key: Delivery,
) {
  // RAP: auth_url MUST use HTTPS. Plain http only on loopback (development) or a declared trusted network.
  const problem = urlProblem(message.auth_url, ctx.allowInsecureHttp);
  if (problem) {
    ctx.logger.warn("rap.callback.auth_url_refused", { groupId: message.group_id, id: message.id });
    respond(refuse(400, "insecure_auth_url", `auth_url ${problem}.`));
    return;
  }
  const call = await matchCall(ctx, message, respond);
  if (!call) return;
  // The key with the change, atomically (else a retry after a failed key record finds the call already
  // authorizing and never adds the status line); a re-issued URL changes nothing, so its key is recorded alone.
  const changed = await ctx.store.transition(call.groupId, call.id, {
    from: ["pending"],
    to: "authorizing",
    at: ctx.now(),
    ...(key ? { deliveryKey: key.deliveryKey } : {}),
  });
  const k = JSON.stringify([call.groupId, call.id]);
  const digest = createHash("sha256").update(message.auth_url).digest("hex");
  const repeat = !changed && ctx.surfaced.get(k) === digest;
  if (!changed) await recordDelivery(ctx, key);
  respond(ok(repeat ? { duplicate: true } : {}));
  if (repeat) return;
  ctx.surfaced.set(k, digest);
  ctx.logger.info("rap.callback.oauth", { groupId: call.groupId, id: call.id });
  if (!ctx.hooks.onAuthorizationRequired) {
    ctx.logger.warn("rap.runtime.authorization_not_surfaced", {
      groupId: call.groupId,
      id: call.id,
      why: "no onAuthorizationRequired hook",
    });
  }
  await callHook(ctx.logger, "onAuthorizationRequired", ctx.hooks.onAuthorizationRequired, {
    groupId: call.groupId,
    id: call.id,
    operation: call.operation,
    toolset: call.toolset,
    provider: call.requiresAuth,
    userId: call.userId,
    authUrl: message.auth_url,
  });
  // RAP §OAuth: SHOULD tell the model authorization is in progress. Once per call: a re-issued URL is shown to the
  // user again but adds no second status line.
  if (changed) {
    await ctx.status(
      call.groupId,
      call.id,
      `Authorization in progress for ${call.requiresAuth ?? call.toolset} (${call.operation}): ` +
        "waiting for the user to authorize; the result will follow.",
    );
  }
}

async function onSubscriptionEvent(
  ctx: CallbackContext,
  message: SubscriptionEvent,
  respond: Respond,
  key: Delivery,
) {
  const log = { groupId: message.group_id, toolCallId: message.tool_call_id };
  const call = await ctx.store.getCall(message.group_id, message.tool_call_id);
  if (!call || call.subscription === "none") {
    ctx.logger.warn("rap.callback.unknown_subscription", log);
    respond(refuse(404, "unknown_subscription", "No subscription started by this call."));
    return;
  }
  if (call.subscription === "ended") {
    ctx.logger.info("rap.callback.subscription_ended", log);
    respond(refuse(410, "subscription_ended", "The subscription has ended or was cancelled."));
    return;
  }
  const at = ctx.now();
  const associative = message.associative ?? false;
  const final = message.final ?? false;
  const entry: NewThreadEntry = {
    kind: "subscription_event",
    at,
    toolCallId: call.id,
    text: message.text,
    associative,
    final,
  };
  const added = key
    ? await ctx.store.appendEntry(call.groupId, entry, key.deliveryKey)
    : await ctx.store.appendEntry(call.groupId, entry);
  if (!added) {
    respond(ok({ duplicate: true }));
    return;
  }
  if (final) await ctx.store.setSubscription(call.groupId, call.id, "active", "ended", at);
  respond(ok());
  ctx.logger.info("rap.callback.subscription_event", { ...log, final });
  await callHook(ctx.logger, "onSubscriptionEvent", ctx.hooks.onSubscriptionEvent, {
    groupId: call.groupId,
    toolCallId: call.id,
    text: message.text,
    associative,
    final,
    call: { ...call, subscription: final ? "ended" : "active" },
  });
}

async function onUserChoice(
  ctx: CallbackContext,
  message: UserChoice,
  respond: Respond,
  key: Delivery,
) {
  const problem = urlProblem(message.response_url, ctx.allowInsecureHttp);
  if (problem) {
    respond(refuse(400, "insecure_response_url", `response_url ${problem}.`));
    return;
  }
  if (message.default !== undefined && message.default >= message.choices.length) {
    respond(refuse(400, "invalid_message", "default is not an index into choices."));
    return;
  }
  const call = await matchCall(ctx, message, respond);
  if (!call) return;
  // A retried delivery of the same question must not ask the user twice (the reference dedupes per call id).
  const entries = await ctx.store.listEntries(call.groupId);
  const asked = entries.some(
    (e) =>
      e.kind === "user_choice" &&
      e.id === call.id &&
      e.prompt === message.prompt &&
      JSON.stringify(e.choices) === JSON.stringify(message.choices),
  );
  let added = false;
  if (!asked) {
    const entry: NewThreadEntry = {
      kind: "user_choice",
      at: ctx.now(),
      id: call.id,
      prompt: message.prompt,
      choices: message.choices,
      default: message.default ?? null,
    };
    added = !!(key
      ? await ctx.store.appendEntry(call.groupId, entry, key.deliveryKey)
      : await ctx.store.appendEntry(call.groupId, entry));
  }
  respond(ok(added ? {} : { duplicate: true }));
  if (!added) return;
  if (!ctx.hooks.onUserChoice) {
    ctx.logger.warn("rap.runtime.user_choice_unanswered", { groupId: call.groupId, id: call.id });
    return;
  }
  // response_url is handed to the responder only, never stored.
  const responseUrl = message.response_url;
  let answered = false;
  await callHook(ctx.logger, "onUserChoice", ctx.hooks.onUserChoice, {
    groupId: call.groupId,
    id: call.id,
    prompt: message.prompt,
    choices: message.choices,
    default: message.default ?? null,
    respond: async (selected: number) => {
      if (answered || !Number.isInteger(selected) || selected < 0) return false;
      if (selected >= message.choices.length) return false;
      answered = true;
      return ctx.postChoice(responseUrl, call.id, selected);
    },
  });
}

async function onViewUpdate(
  ctx: CallbackContext,
  message: ViewUpdate,
  respond: Respond,
  key: Delivery,
) {
  await ctx.store.putView(message.group_id, message.view_type, message.content, ctx.now());
  await recordDelivery(ctx, key);
  respond(ok());
  await callHook(ctx.logger, "onViewUpdate", ctx.hooks.onViewUpdate, {
    groupId: message.group_id,
    viewType: message.view_type,
    content: message.content,
  });
}

/** The synthetic result for a call the runtime ends itself. */
export function syntheticResult(text: string): CallResult {
  const t = errorText(text);
  return { text: t, isError: true, synthetic: true };
}
