/**
 * RAP calls waiting for a person to authorize. The runtime hands the auth URL over once and must not store it (RAP
 * §OAuth), so the board keeps it in memory only, shows it while the call waits, and drops it when the call ends; a
 * finished call stays a short while (without its link) so the page can show how it ended.
 */

import { peerText, peerUrl } from "../core/display.ts";
import type {
  AuthorizationRequiredEvent,
  RuntimeHooks,
  ToolResultEvent,
} from "../rap/runtime/hooks.ts";
import type { ActivityLog } from "./activity.ts";
import type { PendingView } from "./wire.ts";

export const DEFAULT_KEEP_FINISHED_MS = 5 * 60_000;
export const DEFAULT_MAX_PENDING = 100;

/** What the runtime's hook tells the board: the view's identity fields and the link (not yet checked). */
export type PendingInput = Pick<
  PendingView,
  "groupId" | "id" | "toolset" | "operation" | "provider" | "userId"
> & { authUrl: string };

/** Only an http(s) link is ever shown (a `javascript:` or `data:` URL from a tool would run in the page). */
export function safeLink(url: unknown): string | null {
  const href = peerUrl(url);
  if (!href) return null;
  const protocol = URL.parse(href)?.protocol;
  return protocol === "https:" || protocol === "http:" ? href : null;
}

export class PendingBoard {
  readonly #entries = new Map<string, PendingView>();
  readonly #listeners = new Set<() => void>();
  readonly #keepFinishedMs: number;
  readonly #max: number;
  readonly #now: () => number;

  constructor(options: { keepFinishedMs?: number; maxEntries?: number; now?: () => number } = {}) {
    this.#keepFinishedMs = options.keepFinishedMs ?? DEFAULT_KEEP_FINISHED_MS;
    this.#max = Math.max(1, options.maxEntries ?? DEFAULT_MAX_PENDING);
    this.#now = options.now ?? Date.now;
  }

  /** A call now waits for the person (a second request for the same call replaces its link). */
  add(input: PendingInput): PendingView {
    this.#sweep();
    const view: PendingView = {
      groupId: peerText(input.groupId, { max: 200 }),
      id: peerText(input.id, { max: 200 }),
      toolset: peerText(input.toolset, { max: 200 }),
      operation: peerText(input.operation, { max: 200 }),
      provider: input.provider === null ? null : peerText(input.provider, { max: 200 }),
      userId: input.userId === null ? null : peerText(input.userId, { max: 200 }),
      status: "authorizing",
      authUrl: safeLink(input.authUrl),
      result: null,
      isError: false,
      since: this.#now(),
    };
    const key = keyOf(input.groupId, input.id);
    this.#entries.delete(key);
    this.#entries.set(key, view);
    while (this.#entries.size > this.#max) {
      const oldest = this.#entries.keys().next().value;
      if (oldest === undefined) break;
      this.#entries.delete(oldest);
    }
    this.#changed();
    return { ...view };
  }

  /**
   * The call ended: its link is dropped, its result kept a while. Returns false when the board never showed the
   * call (it needed no authorization).
   */
  resolve(groupId: string, id: string, outcome: { result: string; isError: boolean }): boolean {
    const entry = this.#entries.get(keyOf(groupId, id));
    if (!entry) return false;
    entry.authUrl = null;
    entry.status = outcome.isError ? "failed" : "completed";
    entry.result = peerText(outcome.result, { max: 2000, multiline: true });
    entry.isError = outcome.isError;
    entry.since = this.#now();
    this.#changed();
    return true;
  }

  /** The calls shown, oldest first; finished ones past their keep time are dropped. */
  list(): PendingView[] {
    this.#sweep();
    return [...this.#entries.values()].map((view) => ({ ...view }));
  }

  /** The waiting call's link, or null (finished, unknown): for a panel that shows it beside its own call list. */
  authUrlOf(groupId: string, id: string): string | null {
    return this.#entries.get(keyOf(groupId, id))?.authUrl ?? null;
  }

  onChange(listener: () => void): () => void {
    this.#listeners.add(listener);
    return () => {
      this.#listeners.delete(listener);
    };
  }

  #sweep(): void {
    const now = this.#now();
    for (const [key, entry] of this.#entries) {
      if (entry.status !== "authorizing" && now - entry.since > this.#keepFinishedMs)
        this.#entries.delete(key);
    }
  }

  #changed(): void {
    for (const listener of [...this.#listeners]) {
      try {
        listener();
      } catch {
        // A listener's failure must not undo the change.
      }
    }
  }
}

function keyOf(groupId: string, id: string): string {
  return JSON.stringify([groupId, id]);
}

/**
 * Runtime hooks that feed the board and the activity log; `next` (the embedder's own hooks) is called after ours,
 * for every hook either side defines.
 */
export function hooksFor(
  board: PendingBoard,
  activity: ActivityLog,
  next: RuntimeHooks = {},
): RuntimeHooks {
  const ours: RuntimeHooks = {
    onAuthorizationRequired(event: AuthorizationRequiredEvent) {
      board.add({
        groupId: event.groupId,
        id: event.id,
        toolset: event.toolset,
        operation: event.operation,
        provider: event.provider,
        userId: userOf(event),
        authUrl: event.authUrl,
      });
      activity.record({
        component: "rap",
        kind: "authorization_requested",
        ...(userOf(event) ? { subject: userOf(event) as string } : {}),
        summary: `${event.toolset}.${event.operation} waits for authorization${event.provider ? ` at ${event.provider}` : ""}`,
      });
    },
    onToolResult(event: ToolResultEvent) {
      const shown = board.resolve(event.groupId, event.id, {
        result: event.result.text,
        isError: event.result.isError,
      });
      const subject = event.call.userId ?? undefined;
      const name = `${event.call.toolset}.${event.call.operation}`;
      if (shown && !event.result.isError) {
        activity.record({
          component: "rap",
          kind: "authorization_completed",
          ...(subject ? { subject } : {}),
          summary: `${name} was authorized`,
        });
      }
      activity.record({
        component: "rap",
        kind: event.result.isError ? "error" : "result",
        ...(subject ? { subject } : {}),
        summary: `${name} ${event.result.isError ? "failed" : "completed"}`,
      });
    },
  };
  const names = new Set([...Object.keys(ours), ...Object.keys(next)]) as Set<keyof RuntimeHooks>;
  const hooks: Record<string, (event: never) => Promise<void>> = {};
  for (const name of names) {
    const first = ours[name] as ((event: unknown) => void | Promise<void>) | undefined;
    const second = next[name] as ((event: unknown) => void | Promise<void>) | undefined;
    hooks[name] = async (event: unknown) => {
      let failure: unknown;
      try {
        await first?.(event);
      } catch (error) {
        failure = error;
      }
      await second?.(event);
      if (failure) throw failure;
    };
  }
  return hooks as RuntimeHooks;
}

/** The user the call is for (the runtime passes the call's `user_id`). */
function userOf(event: AuthorizationRequiredEvent): string | null {
  return event.userId ?? null;
}
