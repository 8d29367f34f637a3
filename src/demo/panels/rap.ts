/**
 * The demo thread panel (RAP): the person picks a demo user and an example operation, the panel invokes it through
 * the demo's runtime in the thread `demo-<user>` with `user_id` = that user, and shows the call: "authorizing" with
 * the Authorize link while the tool waits for the user's consent (the link comes from the PendingBoard, which holds
 * it in memory only), then the result.
 */

import type { RapPanelState } from "../../console/wire.ts";
import { peerText } from "../../core/display.ts";
import { AgentAuthError } from "../../core/errors.ts";
import type { RapRuntime, RuntimeHooks } from "../../rap/runtime/index.ts";

export const DEMO_USERS_LIST = ["alice", "bob", "carol"] as const;
/** The example tool's operations (src/rap/example): `echo` needs nothing, `whoami` needs the user's consent. */
export const DEMO_OPERATIONS = ["whoami", "echo"] as const;
export const DEMO_THREAD_PREFIX = "demo-";
const MAX_CALLS = 20;
const MAX_TEXT = 500;

/** What the panel action refuses: not an object, an unknown user or operation, an unusable text. */
export class DemoPanelInputError extends AgentAuthError {}

/** The board as the panel uses it (src/console PendingBoard). */
export interface AuthLinks {
  authUrlOf(groupId: string, id: string): string | null;
  onChange(listener: () => void): () => void;
}

export interface RapPanelOptions {
  /** The runtime, once it exists: the panel's hooks go into createRuntime, so it is created after the panel. */
  runtime: () => Pick<RapRuntime, "invoke" | "getCall" | "thread" | "cancelCall"> | undefined;
  board: AuthLinks;
  users?: readonly string[];
  operations?: readonly string[];
  now?: () => number;
}

type CallView = RapPanelState["calls"][number];

/** A console panel (id "rap") plus the runtime hooks that keep its calls current. */
export interface RapPanel {
  id: "rap";
  title: string;
  state(): RapPanelState;
  actions: Record<string, (input: Record<string, unknown>) => Promise<unknown>>;
  onChange(listener: () => void): () => void;
  close(): Promise<void>;
  /** Pass to hooksFor(board, activity, panel.hooks): the panel follows its own calls' authorization and result. */
  hooks: RuntimeHooks;
  /**
   * Shows the demo threads' latest calls from the runtime's database (after a restart); calls the last run left
   * waiting are cancelled (their tool-side sign-in and link did not survive).
   */
  load(): Promise<void>;
}

/** Pure: checks the invoke action's input; throws DemoPanelInputError naming what is wrong (never echoing much). */
export function parseInvokeInput(
  input: unknown,
  users: readonly string[] = DEMO_USERS_LIST,
  operations: readonly string[] = DEMO_OPERATIONS,
): { user: string; operation: string; arguments: Record<string, unknown> } {
  if (typeof input !== "object" || input === null || Array.isArray(input)) {
    throw new DemoPanelInputError("demo_invalid_input", "The request must be a JSON object.");
  }
  const { user, operation, text } = input as Record<string, unknown>;
  if (typeof user !== "string" || !users.includes(user)) {
    throw new DemoPanelInputError("demo_unknown_user", `user must be one of ${users.join(", ")}.`);
  }
  if (typeof operation !== "string" || !operations.includes(operation)) {
    throw new DemoPanelInputError(
      "demo_unknown_operation",
      `operation must be one of ${operations.join(", ")}.`,
    );
  }
  if (text !== undefined && (typeof text !== "string" || text.length > MAX_TEXT)) {
    throw new DemoPanelInputError(
      "demo_invalid_text",
      `text must be a string of at most ${MAX_TEXT} characters.`,
    );
  }
  const args: Record<string, unknown> =
    operation === "echo" ? { text: (text as string | undefined) ?? `hello from ${user}` } : {};
  return { user, operation, arguments: args };
}

export function createRapPanel(options: RapPanelOptions): RapPanel {
  const users = options.users ?? DEMO_USERS_LIST;
  const operations = options.operations ?? DEMO_OPERATIONS;
  const now = options.now ?? Date.now;
  const calls = new Map<string, CallView>();
  const listeners = new Set<() => void>();
  const changed = () => {
    for (const listener of [...listeners]) {
      try {
        listener();
      } catch {
        // One listener's failure must not stop the others.
      }
    }
  };
  const keyOf = (groupId: string, id: string) => JSON.stringify([groupId, id]);
  const ours = (groupId: string) => groupId.startsWith(DEMO_THREAD_PREFIX);
  const upsert = (
    groupId: string,
    id: string,
    patch: Partial<CallView>,
    base?: Partial<CallView>,
  ) => {
    const key = keyOf(groupId, id);
    const known = calls.get(key);
    if (known) Object.assign(known, patch);
    else {
      calls.set(key, {
        groupId,
        id,
        userId: "",
        operation: "",
        status: "pending",
        authUrl: null,
        result: null,
        isError: false,
        at: now(),
        ...base,
        ...patch,
      });
      while (calls.size > MAX_CALLS) {
        const oldest = calls.keys().next().value;
        if (oldest === undefined) break;
        calls.delete(oldest);
      }
    }
    changed();
  };
  const terminal = (status: string) => status !== "pending" && status !== "authorizing";
  const stopBoard = options.board.onChange(changed);

  const hooks: RuntimeHooks = {
    onAuthorizationRequired(event) {
      if (!ours(event.groupId)) return;
      upsert(event.groupId, event.id, { status: "authorizing" }, { operation: event.operation });
    },
    onToolResult(event) {
      if (!ours(event.groupId)) return;
      upsert(
        event.groupId,
        event.id,
        {
          // The record may still say "authorizing" when the hook runs; the result decides how it ended.
          status: terminal(event.call.status)
            ? event.call.status
            : event.result.isError
              ? "failed"
              : "completed",
          result: peerText(event.result.text, { max: 2000, multiline: true }),
          isError: event.result.isError,
        },
        { userId: event.call.userId ?? "", operation: event.call.operation },
      );
    },
  };

  const invoke = async (input: Record<string, unknown>) => {
    const parsed = parseInvokeInput(input, users, operations);
    const runtime = options.runtime();
    if (!runtime) {
      throw new AgentAuthError("demo_not_ready", "The RAP runtime is not running yet; try again.");
    }
    const groupId = `${DEMO_THREAD_PREFIX}${parsed.user}`;
    const outcome = await runtime.invoke({
      groupId,
      operation: parsed.operation,
      arguments: parsed.arguments,
      userId: parsed.user,
    });
    // The result hook may have run before invoke returned (a fast echo, a refusal): keep what it wrote.
    upsert(outcome.groupId, outcome.id, { userId: parsed.user, operation: parsed.operation });
    const record = await runtime.getCall(outcome.groupId, outcome.id);
    const view = calls.get(keyOf(outcome.groupId, outcome.id));
    if (record && view && !terminal(view.status) && record.status !== view.status) {
      upsert(outcome.groupId, outcome.id, {
        status: record.status,
        ...(record.result
          ? {
              result: peerText(record.result.text, { max: 2000, multiline: true }),
              isError: record.result.isError,
            }
          : {}),
      });
    }
    return { groupId: outcome.groupId, id: outcome.id, accepted: outcome.accepted };
  };

  const load = async () => {
    const runtime = options.runtime();
    if (!runtime) return;
    const found: CallView[] = [];
    for (const user of users) {
      const thread = await runtime.thread(`${DEMO_THREAD_PREFIX}${user}`);
      for (const call of thread.calls) {
        found.push({
          groupId: call.groupId,
          id: call.id,
          userId: call.userId ?? user,
          operation: call.operation,
          status: call.status,
          authUrl: null,
          result: call.result ? peerText(call.result.text, { max: 2000, multiline: true }) : null,
          isError: call.result?.isError ?? false,
          at: call.createdAt,
        });
      }
    }
    // A call the last run left waiting cannot finish: the tool kept its sign-in in memory and the link is gone.
    for (const call of found) {
      if (terminal(call.status)) continue;
      const cancelled = await runtime.cancelCall(call.groupId, call.id);
      if (cancelled) {
        call.status = cancelled.status;
        call.result = cancelled.result
          ? peerText(cancelled.result.text, { max: 2000, multiline: true })
          : null;
        call.isError = cancelled.result?.isError ?? true;
      }
    }
    found.sort((a, b) => a.at - b.at);
    for (const call of found.slice(-MAX_CALLS)) {
      // The cancellation's result hook may have listed the call already: list it again in time order.
      calls.delete(keyOf(call.groupId, call.id));
      upsert(call.groupId, call.id, call, call);
    }
  };

  return {
    id: "rap",
    title: "Demo thread (RAP)",
    hooks,
    load,
    state: () => ({
      users: [...users],
      operations: [...operations],
      calls: [...calls.values()].map((call) => ({
        ...call,
        authUrl:
          call.status === "authorizing" ? options.board.authUrlOf(call.groupId, call.id) : null,
      })),
    }),
    actions: { invoke },
    onChange(listener) {
      listeners.add(listener);
      return () => {
        listeners.delete(listener);
      };
    },
    async close() {
      stopBoard();
      listeners.clear();
    },
  };
}
