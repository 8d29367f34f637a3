/**
 * The bound on deliveries waiting to retry (issue 8 §1.5). A runtime that is down makes every result wait; without
 * a bound, memory would grow with every call for as long as it stays down. When full, the delivery that has waited
 * longest is dropped (and logged): it is the likeliest to belong to a runtime that is gone for good, while a new
 * result most likely belongs to one that is still there. A delivery joins at its first wait and stays until it ends,
 * retries included, so its age is its whole time pending. Deliveries on their first attempt are not counted: they are
 * bounded by the requests and calls in flight.
 */

export interface RetryPool {
  /** Registers a delivery about to wait for its first retry; `drop` is called if it is evicted. Returns the function to leave. */
  enter(drop: () => void): () => void;
  readonly size: number;
}

export const DEFAULT_MAX_PENDING_DELIVERIES = 1000;

export function createRetryPool(maxEntries = DEFAULT_MAX_PENDING_DELIVERIES): RetryPool {
  const max = Math.max(1, maxEntries);
  // A Set keeps insertion order: the first entry is the one that has waited longest.
  const waiting = new Set<{ drop: () => void }>();
  return {
    enter(drop) {
      while (waiting.size >= max) {
        const oldest = waiting.values().next().value;
        if (oldest === undefined) break;
        waiting.delete(oldest);
        oldest.drop();
      }
      const entry = { drop };
      waiting.add(entry);
      return () => {
        waiting.delete(entry);
      };
    },
    get size() {
      return waiting.size;
    },
  };
}
