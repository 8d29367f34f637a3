/**
 * The console's activity log: a bounded ring of auth events (sign-ins, refreshes, revocations, RAP authorizations)
 * with sequence numbers and subscribers. Every summary passes through `peerText`, so nothing a peer sent can carry
 * terminal escapes or bidi overrides into the page; callers never put a secret in a summary.
 */

import { peerText } from "../core/display.ts";
import type { ActivityComponent, ActivityEvent, ActivityKind } from "./wire.ts";

export const DEFAULT_ACTIVITY_CAPACITY = 200;

export interface ActivityInput {
  component: ActivityComponent;
  kind: ActivityKind;
  subject?: string;
  /** The vault credential the event is about (its timeline on the page). */
  credentialId?: string;
  summary: string;
}

export class ActivityLog {
  readonly #events: ActivityEvent[] = [];
  readonly #listeners = new Set<(event: ActivityEvent) => void>();
  readonly #capacity: number;
  readonly #now: () => number;
  #seq = 0;

  constructor(options: { capacity?: number; now?: () => number } = {}) {
    this.#capacity = Math.max(1, options.capacity ?? DEFAULT_ACTIVITY_CAPACITY);
    this.#now = options.now ?? Date.now;
  }

  /** Adds one event (the oldest drops out when full) and tells every subscriber. */
  record(input: ActivityInput): ActivityEvent {
    const event: ActivityEvent = {
      seq: ++this.#seq,
      at: this.#now(),
      component: input.component,
      kind: input.kind,
      ...(input.subject !== undefined ? { subject: peerText(input.subject, { max: 120 }) } : {}),
      ...(input.credentialId !== undefined ? { credentialId: input.credentialId } : {}),
      summary: peerText(input.summary, { max: 300 }),
    };
    this.#events.push(event);
    if (this.#events.length > this.#capacity)
      this.#events.splice(0, this.#events.length - this.#capacity);
    for (const listener of [...this.#listeners]) {
      try {
        listener(event);
      } catch {
        // A subscriber's failure must not stop the others or the caller that reported the event.
      }
    }
    return event;
  }

  /** The events kept, oldest first; with `afterSeq`, only newer ones. */
  list(afterSeq = 0): ActivityEvent[] {
    return this.#events.filter((event) => event.seq > afterSeq).map((event) => ({ ...event }));
  }

  /** Calls `listener` for every new event; returns the unsubscribe function. */
  subscribe(listener: (event: ActivityEvent) => void): () => void {
    this.#listeners.add(listener);
    return () => {
      this.#listeners.delete(listener);
    };
  }
}
