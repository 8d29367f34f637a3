/** An in-memory RuntimeStore with the SQLite store's semantics: for tests and runtimes that may forget on restart. */

import { callExists } from "./errors.ts";
import {
  type CallRecord,
  isOpen,
  type NewCall,
  type NewThreadEntry,
  type RuntimeStore,
  type SubscriptionState,
  type ThreadEntry,
  type Transition,
} from "./store.ts";

const key = (groupId: string, id: string) => JSON.stringify([groupId, id]);

export class MemoryRuntimeStore implements RuntimeStore {
  readonly #calls = new Map<string, CallRecord>();
  readonly #entries = new Map<string, ThreadEntry[]>();
  readonly #views = new Map<string, Map<string, unknown>>();
  readonly #deliveries = new Map<string, Set<string>>();
  #seq = 0;

  async createCall(call: NewCall): Promise<CallRecord> {
    const k = key(call.groupId, call.id);
    if (this.#calls.has(k)) throw callExists(call.groupId, call.id);
    const record: CallRecord = {
      ...structuredClone(call),
      status: "pending",
      subscription: "none",
      result: null,
      updatedAt: call.createdAt,
    };
    this.#calls.set(k, record);
    return structuredClone(record);
  }

  async getCall(groupId: string, id: string): Promise<CallRecord | undefined> {
    const record = this.#calls.get(key(groupId, id));
    return record && structuredClone(record);
  }

  async transition(groupId: string, id: string, change: Transition) {
    const record = this.#calls.get(key(groupId, id));
    if (!record || !change.from.includes(record.status)) return undefined;
    record.status = change.to;
    if (change.result) record.result = structuredClone(change.result);
    if (change.subscription) record.subscription = change.subscription;
    record.updatedAt = change.at;
    if (change.deliveryKey !== undefined) this.#record(groupId, change.deliveryKey);
    return structuredClone(record);
  }

  async setSubscription(
    groupId: string,
    id: string,
    from: SubscriptionState,
    to: SubscriptionState,
    at: number,
  ): Promise<boolean> {
    const record = this.#calls.get(key(groupId, id));
    if (!record || record.subscription !== from) return false;
    record.subscription = to;
    record.updatedAt = at;
    return true;
  }

  async listCalls(groupId: string): Promise<CallRecord[]> {
    return [...this.#calls.values()]
      .filter((c) => c.groupId === groupId)
      .map((c) => structuredClone(c));
  }

  async overdueCalls(now: number, limit = 100): Promise<CallRecord[]> {
    return [...this.#calls.values()]
      .filter((c) => isOpen(c.status) && c.deadline <= now)
      .sort((a, b) => a.deadline - b.deadline)
      .slice(0, limit)
      .map((c) => structuredClone(c));
  }

  async nextDeadline(): Promise<number | undefined> {
    let next: number | undefined;
    for (const c of this.#calls.values()) {
      if (isOpen(c.status) && (next === undefined || c.deadline < next)) next = c.deadline;
    }
    return next;
  }

  appendEntry(groupId: string, entry: NewThreadEntry): Promise<ThreadEntry>;
  appendEntry(
    groupId: string,
    entry: NewThreadEntry,
    deliveryKey: string,
  ): Promise<ThreadEntry | undefined>;
  async appendEntry(
    groupId: string,
    entry: NewThreadEntry,
    deliveryKey?: string,
  ): Promise<ThreadEntry | undefined> {
    if (deliveryKey !== undefined && !this.#record(groupId, deliveryKey)) return undefined;
    const stored = { ...structuredClone(entry), seq: ++this.#seq } as ThreadEntry;
    this.#entries.set(groupId, [...(this.#entries.get(groupId) ?? []), stored]);
    return structuredClone(stored);
  }

  async listEntries(groupId: string): Promise<ThreadEntry[]> {
    return structuredClone(this.#entries.get(groupId) ?? []);
  }

  async putView(groupId: string, viewType: string, content: unknown): Promise<void> {
    const views = this.#views.get(groupId) ?? new Map<string, unknown>();
    views.set(viewType, structuredClone(content));
    this.#views.set(groupId, views);
  }

  async listViews(groupId: string): Promise<Record<string, unknown>> {
    return structuredClone(Object.fromEntries(this.#views.get(groupId) ?? []));
  }

  async hasDelivery(groupId: string, deliveryKey: string): Promise<boolean> {
    return this.#deliveries.get(groupId)?.has(deliveryKey) ?? false;
  }

  async recordDelivery(groupId: string, deliveryKey: string): Promise<boolean> {
    return this.#record(groupId, deliveryKey);
  }

  async close(): Promise<void> {}

  #record(groupId: string, deliveryKey: string): boolean {
    const seen = this.#deliveries.get(groupId) ?? new Set<string>();
    this.#deliveries.set(groupId, seen);
    if (seen.has(deliveryKey)) return false;
    seen.add(deliveryKey);
    return true;
  }
}
