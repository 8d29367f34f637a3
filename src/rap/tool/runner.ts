/**
 * Runs accepted calls to their one final message: the operation's `tool_result`, an error `tool_result`, or an
 * `oauth` message (the call then waits for the person, and ends with a `tool_result` after the redirect, or with
 * an error after the authorization timeout). A cancelled call sends nothing more.
 */

import { randomUUID } from "node:crypto";
import type { Logger } from "../../core/log.ts";
import type { Secret } from "../../core/secret.ts";
import { type CallbackMessage, errorText } from "../wire.ts";
import { newBrowserBinding } from "./browser-binding.ts";
import type { ActiveCall, CallRegistry } from "./calls.ts";
import { withDeadline } from "./deadline.ts";
import { DEFAULT_DELIVERY, type DeliveryOptions, deliverCallback } from "./delivery.ts";
import { durably } from "./durably.ts";
import { OperationError, TokenRejectedError } from "./errors.ts";
import {
  type CallTarget,
  carriesSecret,
  errorResult,
  oauthMessage,
  outputResult,
} from "./messages.ts";
import type { ProviderAuth } from "./oauth-flow.ts";
import type { OperationOutput } from "./options.ts";
import type { RetryPool } from "./retry-pool.ts";
import type { CallbackOutbox, CallLedger, LedgerCall } from "./state.ts";
import type { OperationTable } from "./toolset.ts";

export interface CallRunnerOptions {
  operations: OperationTable;
  calls: CallRegistry;
  auth?: ProviderAuth;
  authorizationTimeoutMs: number;
  operationTimeoutMs: number;
  delivery: DeliveryOptions;
  retryPool?: RetryPool;
  /** Aborted when the server shuts down: every delivery still retrying stops (nothing keeps the process alive). */
  stopped?: AbortSignal;
  /**
   * The durable outbox (a shared ToolStateStore): each message is written there before its first attempt and
   * delivered by `onQueued`'s pump. Without it, delivery retries in memory.
   */
  outbox?: CallbackOutbox;
  /** Called after a message was written to the outbox (the pump looks for it at once). */
  onQueued?: () => void;
  /**
   * With shared state: the ledger of accepted calls. A call it records as held here (`ledgered`) ends with its final
   * message only if it still is, in the same transaction (another instance may have taken it over from its sign-in,
   * or because this one was judged gone); a sign-in wait is recorded there, so any instance can resume it once.
   */
  ledger?: CallLedger;
  /**
   * The link sent as `auth_url` for a provider authorization URL: the tool's consent page, whose Continue hands the
   * browser `browserSecret` (the cookie the redirect must come back with, browser-binding.ts) and the URL.
   */
  consentLink: (
    call: ActiveCall,
    provider: string,
    authorizationUrl: URL,
    browserSecret: string,
  ) => URL | Promise<URL>;
  logger: Logger;
}

export class CallRunner {
  readonly #o: CallRunnerOptions;
  /** Every delivery still under way, so tests and shutdown can wait for quiet. */
  readonly #sending = new Set<Promise<unknown>>();
  /**
   * Per thread, the last write to the outbox: a thread's messages are written one after another in the order they
   * were sent here, so its results are queued in the order its calls finished (issue 22 §8).
   */
  readonly #written = new Map<string, Promise<unknown>>();

  constructor(options: CallRunnerOptions) {
    this.#o = options;
  }

  /**
   * Runs the call. `authorized` is true right after the person authorized for it: a second authorization
   * request would loop, so the call then ends with an error instead.
   */
  async run(call: ActiveCall, authorized = false): Promise<void> {
    const { spec } = call;
    const definition = this.#o.operations.get(spec.operation)?.definition;
    if (!definition)
      return this.#fail(call, `The operation ${spec.operation} is no longer available.`);
    const provider = definition.requiresAuth;
    let token:
      | { accessToken: Secret; secrets: string[]; scopes: string[]; version: number }
      | undefined;
    const auth = this.#o.auth;
    if (provider !== undefined && auth) {
      const name = auth.displayName(provider);
      if (!spec.userId) {
        return this.#fail(
          call,
          `${spec.operation} needs access to ${name} on behalf of a user, but the invocation carries no user_id. The runtime must send the user's id so the tool can ask that user to authorize and remember it.`,
        );
      }
      const lookup = await auth.token(provider, spec.userId);
      if (lookup.kind === "login") return this.#requestAuthorization(call, provider, authorized);
      if (lookup.kind === "error") return this.#fail(call, lookup.message);
      token = lookup;
    }
    for (let round = 0; ; round++) {
      if (call.controller.signal.aborted) return;
      try {
        const outcome = await withDeadline(
          (signal) =>
            definition.handler({
              operation: spec.operation,
              arguments: spec.arguments,
              id: spec.id,
              callId: spec.callId,
              groupId: spec.groupId,
              threadAncestors: spec.threadAncestors,
              userId: spec.userId,
              accessToken: token?.accessToken,
              signal,
              logger: this.#o.logger.child({
                group_id: spec.groupId,
                id: spec.id,
                operation: spec.operation,
              }),
            }),
          call.controller.signal,
          this.#o.operationTimeoutMs,
        );
        if (call.controller.signal.aborted) return;
        if (outcome.kind === "timeout") {
          this.#o.logger.warn("rap.call.timeout", {
            group_id: spec.groupId,
            id: spec.id,
            operation: spec.operation,
          });
          return this.#fail(
            call,
            `${spec.operation}: the operation did not finish within ${duration(this.#o.operationTimeoutMs)}, so it was stopped. Try again later, or with a smaller request.`,
          );
        }
        return this.#succeed(call, outcome.value, token?.secrets ?? []);
      } catch (error) {
        if (call.controller.signal.aborted) return;
        if (
          !(error instanceof TokenRejectedError) ||
          provider === undefined ||
          !auth ||
          !spec.userId
        ) {
          return this.#fail(call, this.#describeFailure(call, error, token?.secrets ?? []));
        }
        // Step-up (insufficient_scope): a refresh keeps the grant's scopes, so ask the person at once, for more:
        // this user's granted scopes (from the vault, so per user and across restarts) plus the required ones.
        if (error.scope !== undefined) {
          // Everything required is already in the grant the authorization server issued: a new sign-in would get
          // the same grant, and the server would refuse it again, on every call. Its requirements are inconsistent.
          if (token && addsNothing(token.scopes, error.required ?? error.scope)) {
            this.#o.logger.warn("rap.oauth.step_up_adds_nothing", {
              code: "step_up_adds_nothing",
              provider,
              operation: spec.operation,
              scope: error.required ?? error.scope,
            });
            return this.#fail(
              call,
              `${auth.displayName(provider)} asked for access that is already granted (step_up_adds_nothing), so signing in again would not help and ${spec.operation} did not run. Tell the tool's operator: the server's scope requirements are inconsistent.`,
            );
          }
          const scope = scopeUnion(token?.scopes ?? [], error.scope);
          return this.#requestAuthorization(call, provider, authorized, scope);
        }
        // The provider refused the token: refresh once, then ask the person again (once per call).
        const refreshed =
          round === 0 ? await auth.token(provider, spec.userId, true, token?.version) : undefined;
        if (refreshed?.kind === "token") {
          token = refreshed;
          continue;
        }
        if (refreshed?.kind === "error") return this.#fail(call, refreshed.message);
        if (!authorized) return this.#requestAuthorization(call, provider, false);
        return this.#fail(
          call,
          `${auth.displayName(provider)} refused access even after you authorized. Check that your account may use ${spec.operation}, then ask again.`,
        );
      }
    }
  }

  /** Ends the call with an error `tool_result` (for callers outside a run: denial, failed exchange). */
  fail(call: ActiveCall, message: string): void {
    this.#fail(call, message);
  }

  /** Answers a call that was never registered (bad arguments, unknown operation, busy). */
  reject(target: CallTarget, message: string): void {
    this.#send(target, errorResult(target, message));
  }

  /** Resolves once every delivery started so far has ended. */
  async settled(): Promise<void> {
    while (this.#sending.size > 0) await Promise.allSettled([...this.#sending]);
  }

  async #requestAuthorization(
    call: ActiveCall,
    provider: string,
    authorized: boolean,
    scope?: string,
  ): Promise<void> {
    const auth = this.#o.auth;
    const { spec } = call;
    if (!auth || !spec.userId) return;
    const name = auth.displayName(provider);
    if (authorized) {
      return this.#fail(
        call,
        `${name} did not grant usable access. Ask again and approve the requested access.`,
      );
    }
    if (call.controller.signal.aborted) return;
    let url: URL;
    // The consenting browser gets the secret at Continue; the pending authorization keeps its digest.
    const browser = newBrowserBinding();
    try {
      url = await auth.authorizationUrl(
        {
          ...spec,
          userId: spec.userId,
          provider,
          attempt: call.attempt,
        },
        browser.digest,
        scope,
      );
    } catch (error) {
      this.#o.logger.error("rap.oauth.start_failed", { provider, error });
      return this.#fail(
        call,
        `Signing in to ${name} could not be started (the sign-in service is unreachable or misconfigured). Try again later.`,
      );
    }
    if (call.controller.signal.aborted) return;
    let link: URL;
    try {
      link = await this.#o.consentLink(call, provider, url, browser.secret);
    } catch (error) {
      // The consent link lives in the shared state store, which did not answer.
      this.#o.logger.error("rap.oauth.start_failed", { provider, error });
      return this.#fail(
        call,
        `Signing in to ${name} could not be started (this tool's storage did not answer). Try again later.`,
      );
    }
    if (call.controller.signal.aborted) return;
    const timeoutText = `Authorization for ${name} was not completed within ${duration(this.#o.authorizationTimeoutMs)}, so ${spec.operation} did not run. Ask again to get a new sign-in link.`;
    const ledger = this.#o.ledger;
    if (ledger && call.ledgered) {
      // Recorded before the link goes out: from then on any instance may resume the call, once.
      let held: boolean;
      try {
        held = await durably(
          () =>
            ledger.authorizing(
              ledgerCall(call),
              this.#o.authorizationTimeoutMs,
              errorText(timeoutText),
            ),
          { budgetMs: DURABLE_BUDGET_MS, signal: call.controller.signal },
        );
      } catch (error) {
        this.#o.logger.error("rap.oauth.start_failed", { provider, error });
        return this.#fail(
          call,
          `Signing in to ${name} could not be started (this tool's storage did not answer). Try again later.`,
        );
      }
      if (!held) {
        // Another instance ended it (this one was judged gone while its database was out of reach).
        this.#o.calls.finish(call);
        this.#o.logger.warn("rap.call.superseded", { group_id: spec.groupId, id: spec.id });
        return;
      }
    }
    this.#o.calls.authorizing(call, provider, this.#o.authorizationTimeoutMs, () => {
      // With a ledger the message is written only if the call still waits here (nobody resumed it elsewhere).
      this.#o.logger.info("rap.oauth.timeout", { provider, group_id: spec.groupId, id: spec.id });
      this.#send(call.target, errorResult(call.target, timeoutText), call);
    });
    this.#o.logger.info("rap.oauth.requested", { provider, group_id: spec.groupId, id: spec.id });
    this.#send(call.target, oauthMessage(call.target, link), call);
  }

  #succeed(call: ActiveCall, output: OperationOutput, secrets: string[]): void {
    const result = outputResult(call.target, output);
    if (!result) {
      this.#o.logger.error("rap.call.bad_output", { operation: call.spec.operation });
      this.#fail(
        call,
        `${call.spec.operation} produced no valid result. Report this to the tool's operator.`,
      );
      return;
    }
    if (carriesSecret(result, secrets)) {
      this.#o.logger.error("rap.call.secret_in_output", { operation: call.spec.operation });
      this.#fail(
        call,
        `${call.spec.operation}'s result was withheld because it contained a credential. Report this to the tool's operator.`,
      );
      return;
    }
    this.#o.calls.finish(call);
    this.#o.logger.info("rap.call.completed", { group_id: call.spec.groupId, id: call.spec.id });
    this.#send(call.target, result, call);
  }

  #fail(call: ActiveCall, message: string): void {
    this.#o.calls.finish(call);
    if (call.controller.signal.aborted) return;
    this.#o.logger.info("rap.call.failed", { group_id: call.spec.groupId, id: call.spec.id });
    this.#send(call.target, errorResult(call.target, message), call);
  }

  #describeFailure(call: ActiveCall, error: unknown, secrets: string[]): string {
    const operation = call.spec.operation;
    if (error instanceof OperationError && !carriesSecret(error.message, secrets))
      return error.message;
    if (error instanceof TokenRejectedError)
      return `${operation} was refused by the provider. Try again later.`;
    this.#o.logger.error("rap.call.handler_threw", {
      operation,
      error: carriesSecret(String((error as Error)?.message), secrets)
        ? { name: (error as Error).name }
        : error,
    });
    return `${operation} failed unexpectedly. Try again later; if it keeps failing, contact the tool's operator.`;
  }

  /**
   * Delivers in the background; a call's messages go out one after another, and none after cancellation. With an
   * outbox, "delivers" means "writes to the outbox", a thread's messages in the order they were sent here; the pump
   * keeps that order. A final message of a call the ledger holds here is written only if it still does.
   */
  #send(target: CallTarget, message: CallbackMessage, call?: ActiveCall): void {
    const stopped = this.#o.stopped;
    const own = call?.controller.signal;
    const signal = own && stopped ? AbortSignal.any([own, stopped]) : (own ?? stopped);
    // Made before the write, and the Idempotency-Key of every attempt, outbox or fallback: if the write committed
    // but its answer was lost, the pump and the fallback send one message under one key and the runtime dedupes.
    const messageId = randomUUID();
    let promise: Promise<unknown>;
    if (this.#o.outbox) {
      const previous = this.#written.get(target.groupId) ?? Promise.resolve();
      const written = previous.then(() => this.#write(target, message, messageId, signal, call));
      const tail = written.catch(() => false);
      this.#written.set(target.groupId, tail);
      void tail.then(() => {
        if (this.#written.get(target.groupId) === tail) this.#written.delete(target.groupId);
      });
      // Not written (the store stayed unreachable): delivered from memory, outside the thread's chain.
      promise = tail.then((done) =>
        done ? undefined : this.#deliver(target, message, messageId, signal),
      );
    } else {
      const deliver = () => this.#deliver(target, message, messageId, signal);
      promise = call ? call.outbox.then(deliver) : deliver();
      if (call) call.outbox = promise as Promise<void>;
    }
    this.#sending.add(promise);
    void promise.finally(() => this.#sending.delete(promise));
  }

  /** Writes one message to the outbox; true when that is settled (queued, or dropped for a reason), false to fall back. */
  async #write(
    target: CallTarget,
    message: CallbackMessage,
    messageId: string,
    signal: AbortSignal | undefined,
    call: ActiveCall | undefined,
  ): Promise<boolean> {
    const outbox = this.#o.outbox as CallbackOutbox;
    if (signal?.aborted) return true;
    const ledger = call?.ledgered && message.type === "tool_result" ? this.#o.ledger : undefined;
    const fields = { type: message.type, group_id: target.groupId, id: target.id };
    try {
      // Written before the first attempt: from here on, a restart or a kill loses nothing.
      const outcome = await durably(
        async () =>
          ledger && call
            ? ledger.finish(ledgerCall(call), { id: messageId, body: message })
            : (await outbox.add({
                  id: messageId,
                  groupId: target.groupId,
                  callId: target.id,
                  callbackUrl: target.callbackUrl,
                  body: message,
                })) === undefined
              ? "cancelled"
              : "queued",
        {
          budgetMs: this.#o.delivery.maxTotalMs ?? DEFAULT_DELIVERY.maxTotalMs,
          signal: this.#o.stopped,
        },
      );
      if (outcome === "queued") this.#o.onQueued?.();
      else if (outcome === "cancelled") {
        this.#o.logger.info("rap.callback.dropped", { ...fields, reason: "cancelled" });
      } else {
        // Another instance ended the call (took it over from its sign-in, or judged this one gone): its message
        // stands, this one is never sent (issue 22 §1: one final message).
        this.#o.logger.warn("rap.call.superseded", fields);
      }
      return true;
    } catch (error) {
      // The store stays unreachable: deliver from memory rather than not at all.
      this.#o.logger.error("rap.outbox.write_failed", { group_id: target.groupId, error });
      return false;
    }
  }

  async #deliver(
    target: CallTarget,
    message: CallbackMessage,
    messageId: string,
    signal: AbortSignal | undefined,
  ): Promise<void> {
    if (signal?.aborted) return;
    const outcome = await deliverCallback(target.callbackUrl, message, {
      ...this.#o.delivery,
      signal,
      pool: this.#o.retryPool,
      // One key per message, the same on every retry: the runtime applies a message whose answer was lost once.
      idempotencyKey: messageId,
    });
    const fields = {
      type: message.type,
      group_id: target.groupId,
      id: target.id,
      // The same id as the outbox row (if the write did commit), so both sends can be matched in the logs.
      message_id: messageId,
      attempts: outcome.attempts,
      status: outcome.status,
      callback_origin: new URL(target.callbackUrl).origin,
    };
    if (outcome.delivered) this.#o.logger.info("rap.callback.delivered", fields);
    else this.#o.logger.warn("rap.callback.failed", { ...fields, reason: outcome.reason });
  }
}

/** How long a write to the shared state (a sign-in wait, a call's start) is retried while the database is down. */
export const DURABLE_BUDGET_MS = 30_000;

/** What the ledger keeps of an active call (or of a call to resume: its spec and attempt). */
export function ledgerCall(call: Pick<ActiveCall, "spec" | "attempt">): LedgerCall {
  return {
    groupId: call.spec.groupId,
    id: call.spec.id,
    callId: call.spec.callId,
    callbackUrl: call.spec.callbackUrl,
    operation: call.spec.operation,
    attempt: call.attempt,
  };
}

/** Space-separated, in order, duplicates dropped (a preset's comma-separated scopes are split too). */
function scopeUnion(granted: readonly string[], required: string): string {
  const all = [...granted, required].flatMap((list) => list.split(/[\s,]+/)).filter(Boolean);
  return [...new Set(all)].join(" ");
}

/**
 * Whether the required scopes are all in the grant already. The record's scopes are what the authorization server
 * reported in its token response (`scope`), or, when it left `scope` out, the requested ones, which RFC 6749 §5.1
 * says is then what was granted.
 */
function addsNothing(granted: readonly string[], required: string): boolean {
  const held = new Set(granted.flatMap((list) => list.split(/[\s,]+/)).filter(Boolean));
  const wanted = required.split(/[\s,]+/).filter(Boolean);
  return wanted.length > 0 && wanted.every((scope) => held.has(scope));
}

/** "10 minutes", "1 minute", "30 seconds": how the timeout is stated to the person. */
function duration(ms: number): string {
  const plural = (n: number, unit: string) => `${n} ${unit}${n === 1 ? "" : "s"}`;
  if (ms >= 60_000) return plural(Math.round(ms / 60_000), "minute");
  return plural(Math.max(1, Math.round(ms / 1000)), "second");
}
