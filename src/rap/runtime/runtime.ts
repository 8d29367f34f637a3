/**
 * `createRuntime`: the RAP runtime, ready to embed or serve. It discovers toolsets, checks and dispatches
 * invocations, keeps every call in a durable store until its terminal result, receives callbacks on per-call
 * capability URLs, times out calls that never answer, and reports through hooks and `waitForResult`.
 * No model inside: the caller plays the model.
 */

import { randomUUID } from "node:crypto";
import { silentLogger } from "../../core/log.ts";
import { CANCEL_TOOL_CALL_PATH, CLOSE_THREAD_PATH, type Invocation } from "../wire.ts";
import {
  DEFAULT_CALLBACK_TTL_MS,
  type InvokeOutcome,
  type InvokeRequest,
  type Listening,
  type RapRuntime,
  type RuntimeOptions,
  type SettledCall,
  type ThreadHistory,
} from "./api.ts";
import { type CallbackContext, processCallback, syntheticResult } from "./callbacks.ts";
import { callbackUrl, signCallToken } from "./capability.ts";
import { type PreparedCall, type PrepareRequest, prepareCall, toolInfo } from "./catalog.ts";
import type { Discovery } from "./discovery.ts";
import { InvocationRefusedError, ThreadBusyError, WaitError } from "./errors.ts";
import { callHook } from "./hooks.ts";
import { describeEndpoint, joinBase } from "./http.ts";
import { dispatchInvocation } from "./invoke.ts";
import { listenWith } from "./listener.ts";
import { sendNotice } from "./notices.ts";
import { createCallbackHandler } from "./receiver.ts";
import { SerialQueue } from "./serial-queue.ts";
import { openRuntimeStorage } from "./storage.ts";
import type { CallRecord, CallStatus } from "./store.ts";
import { DEFAULT_CALL_TIMEOUT_MS, DeadlineTimer, timeoutText } from "./timeouts.ts";
import { endpointAuth, toolsetConfigs } from "./toolset-config.ts";
import { loadToolsets } from "./toolset-loading.ts";
import { ResultWaiters } from "./waiters.ts";

/** How often `waitForResult` looks for a result another instance applied (shared stores only). */
const SHARED_POLL_MS = 250;
/** How often the runtime looks for calls stored and never sent (a sender that died or could not record). */
const RESEND_CHECK_MS = 2_000;

export async function createRuntime(options: RuntimeOptions): Promise<RapRuntime> {
  const logger = options.logger ?? silentLogger;
  const now = options.now ?? Date.now;
  const hooks = options.hooks ?? {};
  const allowInsecureHttp = options.allowInsecureHttp ?? false;
  const callTimeoutMs = options.callTimeoutMs ?? DEFAULT_CALL_TIMEOUT_MS;
  const callbackTtlMs = Math.max(callTimeoutMs, options.callbackTtlMs ?? DEFAULT_CALLBACK_TTL_MS);
  if (!(callTimeoutMs > 0))
    throw new RangeError("callTimeoutMs must be a positive number of milliseconds");
  const configs = toolsetConfigs(options.toolsetUrls ?? [], options.toolsets);
  const baseUrls = [...configs.keys()];
  const authFor = (baseUrl: string) => configs.get(baseUrl)?.auth;
  if (options.publicBaseUrl && !URL.canParse(options.publicBaseUrl))
    throw new RangeError(`not a URL: ${describeEndpoint(options.publicBaseUrl)}`);

  const storage = await openRuntimeStorage(options, logger);
  const { store, key } = storage;

  const queue = new SerialQueue();
  /**
   * One task of a thread at a time: in this process by the queue, across processes by the store's lock when it
   * has one (PostgreSQL). The queue stays in front so one process never takes several locks for one thread.
   */
  const exclusive = <T>(groupId: string, task: () => Promise<T>) =>
    queue.run(groupId, () => (store.lockGroup ? store.lockGroup(groupId, task) : task()));
  // A shared store's results may be applied by another instance, whose waiters and hooks are its own: waiters
  // here then also poll the store. Hooks fire on the instance that applied the callback.
  const waiters = new ResultWaiters(
    storage.kind === "postgres"
      ? { lookup: (groupId, id) => store.getCall(groupId, id), intervalMs: SHARED_POLL_MS }
      : undefined,
  );
  const servers = new Set<Listening>();
  let publicBaseUrl = options.publicBaseUrl?.replace(/\/+$/, "");
  let closed = false;
  let discovery: Discovery = { toolsets: [], tools: new Map(), clashes: [], failures: [] };

  const refreshToolsets = async () => {
    discovery = await loadToolsets({
      configs,
      previous: discovery,
      logger,
      allowInsecureHttp,
      fetch: options.fetch,
    });
  };

  /** Reports a terminal call: waiters first (they only resolve), then the hook. */
  const settle = async (call: CallRecord) => {
    waiters.settle(call);
    if (call.result) {
      await callHook(logger, "onToolResult", hooks.onToolResult, {
        groupId: call.groupId,
        id: call.id,
        call,
        result: call.result,
      });
    }
  };

  const addStatus = async (groupId: string, id: string | null, text: string) => {
    const entry = await store.appendEntry(groupId, { kind: "status", at: now(), id, text });
    await callHook(logger, "onStatus", hooks.onStatus, { groupId, id, text, entry });
  };

  /** Ends an open call with a runtime-made error, inside the thread's queue; no-op if it already ended. */
  const endCall = (
    groupId: string,
    id: string,
    to: CallStatus,
    text: string,
    endSubscription = false,
  ) =>
    exclusive(groupId, async () => {
      const ended = await store.transition(groupId, id, {
        from: ["pending", "authorizing"],
        to,
        result: syntheticResult(text),
        at: now(),
      });
      if (endSubscription) await store.setSubscription(groupId, id, "active", "ended", now());
      if (ended) await settle(ended);
      return ended;
    });

  const sweepTimeouts = async () => {
    let count = 0;
    for (;;) {
      const overdue = await store.overdueCalls(now(), 100);
      // A thread busy on another instance is left for a later sweep; the others are not held up by it. A pass
      // that only met busy threads ends the sweep (they would come back first, and wait again, for ever).
      let progressed = false;
      for (const call of overdue) {
        let ended: CallRecord | undefined;
        try {
          ended = await endCall(
            call.groupId,
            call.id,
            "timed_out",
            timeoutText(call.deadline - call.createdAt),
          );
        } catch (error) {
          if (!(error instanceof ThreadBusyError)) throw error;
          logger.warn("rap.runtime.timeout_deferred", { groupId: call.groupId, id: call.id });
          continue;
        }
        progressed = true;
        if (ended) {
          count++;
          logger.warn("rap.runtime.timeout", { groupId: call.groupId, id: call.id });
        }
      }
      if (!progressed) return count;
    }
  };

  const timer = new DeadlineTimer({
    now,
    sweep: async () => {
      try {
        await sweepTimeouts();
      } catch (error) {
        logger.error("rap.runtime.sweep_failed", { error });
      }
    },
    next: () => store.nextDeadline().catch(() => undefined),
  });

  const context: CallbackContext = {
    store,
    hooks,
    logger,
    now,
    settle,
    status: addStatus,
    surfaced: new Map(),
    allowInsecureHttp,
    postChoice: async (responseUrl, id, selected) => {
      const outcome = await sendNotice(responseUrl, { id, selected }, { fetch: options.fetch });
      if (!outcome.ok)
        logger.warn("rap.runtime.user_choice_failed", { id, reason: outcome.reason });
      return outcome.ok;
    },
  };

  const handleCallback = createCallbackHandler({
    key,
    now,
    logger,
    basePath: () => (publicBaseUrl ? new URL(publicBaseUrl).pathname : ""),
    process: (message, respond, deliveryKey) =>
      exclusive(message.group_id, () => processCallback(context, message, respond, deliveryKey)),
  });

  const prepare = (request: PrepareRequest) => prepareCall(discovery, request);

  /**
   * Hands a stored call to its tool: signs its callback URL, posts the invocation (retried on 5xx and network
   * errors), records the acknowledgement (a restart then never sends it again) or ends the call with the error text.
   */
  const send = async (
    call: Pick<
      CallRecord,
      "groupId" | "id" | "callId" | "arguments" | "userId" | "createdAt" | "deadline"
    >,
    tool: PreparedCall["tool"],
    threadAncestors?: string[],
    resend = false,
  ) => {
    const flight = inFlight(call.groupId, call.id);
    sending.add(flight);
    try {
      return await sendOnce(call, tool, threadAncestors, resend);
    } finally {
      sending.delete(flight);
    }
  };
  /** The calls this process is sending right now: a resend sweep leaves them alone. */
  const sending = new Set<string>();
  const inFlight = (groupId: string, id: string) => JSON.stringify([groupId, id]);

  const sendOnce = async (
    call: Pick<
      CallRecord,
      "groupId" | "id" | "callId" | "arguments" | "userId" | "createdAt" | "deadline"
    >,
    tool: PreparedCall["tool"],
    threadAncestors: string[] | undefined,
    resend: boolean,
  ) => {
    const log = { groupId: call.groupId, id: call.id, operation: tool.name, toolset: tool.toolset };
    const token = signCallToken(key, {
      groupId: call.groupId,
      id: call.id,
      exp: Math.max(call.deadline, call.createdAt + callbackTtlMs),
    });
    const invocation: Invocation = {
      operation: tool.name,
      arguments: call.arguments,
      id: call.id,
      call_id: call.callId,
      callback_url: callbackUrl(publicBaseUrl as string, token),
      group_id: call.groupId,
      ...(threadAncestors?.length ? { thread_ancestors: threadAncestors } : {}),
      user_id: call.userId,
    };
    const sending = endpointAuth(configs.get(tool.baseUrl), tool.endpoint);
    const outcome = await dispatchInvocation(tool.endpoint, invocation, {
      retry: options.retry,
      fetch: options.fetch,
      auth: sending.auth,
      ...(sending.withheldFrom ? { authWithheldFrom: sending.withheldFrom } : {}),
      ...(resend ? { notBeforeMs: Date.now() + 1000 } : {}),
    });
    if (outcome.ok) {
      logger.info("rap.runtime.invoked", { ...log, attempts: outcome.attempts });
      await store.markSent?.(call.groupId, call.id);
    } else {
      logger.warn("rap.runtime.invoke_failed", {
        ...log,
        status: outcome.status,
        attempts: outcome.attempts,
        ...(outcome.status === 401
          ? {
              reason:
                "the tool refused the runtime's credentials: check the invocation scheme and secret",
            }
          : {}),
      });
      await endCall(call.groupId, call.id, "failed", outcome.text);
    }
    return outcome;
  };

  let resending: Promise<void> | undefined;
  /**
   * Sends the calls a process stored but died before sending (issue 22 §7): this process's own after a restart, or
   * with PostgreSQL another instance's once the database says it is gone. Oldest first, one at a time.
   */
  const resendUnsent = () => {
    resending ??= (async () => {
      try {
        while (!closed && publicBaseUrl && store.claimUnsent) {
          const claimed = await store.claimUnsent(20);
          if (claimed.length === 0) return;
          const waiting = claimed.filter((c) => !sending.has(inFlight(c.groupId, c.id)));
          if (waiting.length === 0) return;
          for (const call of waiting) {
            if (closed) return;
            const tool = discovery.tools.get(call.operation);
            logger.warn("rap.runtime.resending", { groupId: call.groupId, id: call.id });
            if (!tool || tool.toolset !== call.toolset) {
              await endCall(
                call.groupId,
                call.id,
                "failed",
                `Error: RAP tool '${call.operation}' is no longer offered by toolset '${call.toolset}', so the call was never sent. No result will arrive for this call.`,
              );
              continue;
            }
            await send(call, tool, undefined, true);
          }
        }
      } catch (error) {
        logger.error("rap.runtime.resend_failed", { error });
      } finally {
        resending = undefined;
      }
    })();
    return resending;
  };
  // Now and then: another instance may die at any time (shared store), and a send of this process's may have
  // failed to record its outcome (the database down): both leave calls unsent.
  const resendTimer = setInterval(() => void resendUnsent(), RESEND_CHECK_MS);
  resendTimer.unref();

  const invoke = async (request: InvokeRequest): Promise<InvokeOutcome> => {
    if (closed)
      throw new InvocationRefusedError("rap_runtime_closed", "The RAP runtime is closed.");
    const prepared = prepare(request);
    if (!publicBaseUrl) {
      throw new InvocationRefusedError(
        "rap_no_callback_url",
        "The RAP runtime has no callback URL to give tools: call listen() first or set publicBaseUrl.",
      );
    }
    const { tool } = prepared;
    const id = request.id ?? `call_${randomUUID()}`;
    // In flight from before it is stored, so a resend sweep never sends it beside this request.
    const flight = inFlight(request.groupId, id);
    sending.add(flight);
    try {
      return await storeAndSend(request, id, tool);
    } finally {
      sending.delete(flight);
    }
  };

  const storeAndSend = async (
    request: InvokeRequest,
    id: string,
    tool: PreparedCall["tool"],
  ): Promise<InvokeOutcome> => {
    const createdAt = now();
    const deadline = createdAt + callTimeoutMs;
    // Recorded before anything is sent: a result can arrive before the acknowledgement, and a crash after the
    // send must still find the call.
    await store.createCall({
      groupId: request.groupId,
      id,
      callId: request.callId ?? null,
      operation: tool.name,
      arguments: request.arguments,
      userId: request.userId ?? null,
      toolset: tool.toolset,
      baseUrl: tool.baseUrl,
      requiresAuth: tool.requiresAuth ?? null,
      createdAt,
      deadline,
    });
    timer.arm(deadline);
    if (tool.requiresAuth) {
      await callHook(logger, "onRequiresAuth", hooks.onRequiresAuth, {
        groupId: request.groupId,
        id,
        operation: tool.name,
        toolset: tool.toolset,
        provider: tool.requiresAuth,
      });
    }
    const outcome = await send(
      {
        groupId: request.groupId,
        id,
        callId: request.callId ?? null,
        arguments: request.arguments,
        userId: request.userId ?? null,
        createdAt,
        deadline,
      },
      tool,
      request.threadAncestors,
    );
    return {
      groupId: request.groupId,
      id,
      accepted: outcome.ok,
      ...(tool.requiresAuth ? { requiresAuth: tool.requiresAuth } : {}),
    };
  };

  const waitForResult = async (
    groupId: string,
    id: string,
    waitOptions: { signal?: AbortSignal } = {},
  ) => {
    const waiting = waiters.add(groupId, id, waitOptions.signal);
    const current = await store.getCall(groupId, id).catch((error) => {
      waiting.cancel();
      throw error;
    });
    if (!current) {
      waiting.cancel();
      throw new WaitError(
        "rap_unknown_call",
        `No RAP call ${JSON.stringify(id)} in thread ${JSON.stringify(groupId)}.`,
      );
    }
    if (current.result) {
      waiting.cancel();
      return current as SettledCall;
    }
    return (await waiting.promise) as SettledCall;
  };

  const cancelCall = async (groupId: string, id: string) => {
    const call = await store.getCall(groupId, id);
    if (!call) return undefined;
    const ended = await endCall(
      groupId,
      id,
      "cancelled",
      "Error: the tool call was cancelled.",
      true,
    );
    const outcome = await sendNotice(
      joinBase(call.baseUrl, CANCEL_TOOL_CALL_PATH),
      { thread_id: groupId, tool_call_id: id },
      { fetch: options.fetch, auth: authFor(call.baseUrl) },
    );
    if (!outcome.ok)
      logger.warn("rap.runtime.cancel_notice_failed", { groupId, id, reason: outcome.reason });
    return ended ?? (await store.getCall(groupId, id));
  };

  const closeThread = async (groupId: string) => {
    for (const call of await store.listCalls(groupId)) {
      if (call.result === null || call.subscription === "active") {
        await endCall(
          groupId,
          call.id,
          "cancelled",
          "Error: the thread was closed before the tool answered.",
          true,
        );
      }
    }
    // RAP §Thread closure: to every configured tool server, no retry, not blocking the closure (done above).
    await Promise.all(
      baseUrls.map(async (base) => {
        const outcome = await sendNotice(
          joinBase(base, CLOSE_THREAD_PATH),
          { thread_id: groupId },
          { fetch: options.fetch, auth: authFor(base) },
        );
        if (!outcome.ok)
          logger.warn("rap.runtime.close_notice_failed", {
            groupId,
            baseUrl: describeEndpoint(base),
            reason: outcome.reason,
          });
      }),
    );
  };

  const thread = async (groupId: string): Promise<ThreadHistory> => ({
    groupId,
    calls: await store.listCalls(groupId),
    entries: await store.listEntries(groupId),
    views: await store.listViews(groupId),
  });

  const listen = async (listenOptions: { port?: number; host?: string } = {}) => {
    const bound = await listenWith(handleCallback, listenOptions);
    if (!publicBaseUrl) publicBaseUrl = bound.url;
    const listening: Listening = {
      ...bound,
      close: () => {
        servers.delete(listening);
        return bound.close();
      },
    };
    servers.add(listening);
    logger.info("rap.runtime.listening", { url: bound.url, port: bound.port });
    // Callback URLs can be made now: send what a previous process stored and never sent.
    void resendUnsent();
    return listening;
  };

  const close = async () => {
    if (closed) return;
    closed = true;
    timer.stop();
    clearInterval(resendTimer);
    await resending;
    await Promise.all([...servers].map((s) => s.close()));
    await queue.drain();
    waiters.rejectAll(new WaitError("rap_wait_aborted", "The RAP runtime closed."));
    await store.close();
  };

  // Start: the catalog, then whatever fell due while the runtime was down, then the timer for the rest.
  try {
    await refreshToolsets();
    await timer.fire();
    if (publicBaseUrl) void resendUnsent();
  } catch (error) {
    await store.close();
    throw error;
  }

  return {
    get publicBaseUrl() {
      return publicBaseUrl;
    },
    storage: { kind: storage.kind, label: storage.label },
    listTools: () => [...discovery.tools.values()].map(toolInfo),
    toolsets: () =>
      discovery.toolsets.map((t) => ({
        name: t.toolset.name,
        baseUrl: t.baseUrl,
        endpoint: t.toolset.endpoint,
        tools: t.tools.map((tool) => tool.name),
      })),
    problems: () => ({
      failures: discovery.failures.map((f) => ({
        baseUrl: f.baseUrl,
        code: f.code,
        message: f.message,
      })),
      clashes: discovery.clashes,
    }),
    refreshToolsets,
    prepare,
    invoke,
    waitForResult,
    getCall: (groupId, id) => store.getCall(groupId, id),
    thread,
    cancelCall,
    closeThread,
    sweepTimeouts,
    handleCallback,
    listen,
    close,
  };
}
