/**
 * A write to the shared state that must not be given up at the first refusal: while the database is only
 * temporarily unavailable (restarting, saturated), it is tried again with growing waits until `budgetMs` has passed
 * or `signal` aborts; any other failure, or the budget spent, is thrown to the caller.
 */

import { isTemporarilyUnavailable } from "../../db/index.ts";

export async function durably<T>(
  write: () => Promise<T>,
  options: { budgetMs: number; signal?: AbortSignal },
): Promise<T> {
  const deadline = Date.now() + options.budgetMs;
  for (let attempt = 0; ; attempt++) {
    try {
      return await write();
    } catch (error) {
      const wait = Math.min(2_000, 100 * 2 ** attempt);
      if (!isTemporarilyUnavailable(error) || options.signal?.aborted) throw error;
      if (Date.now() + wait > deadline) throw error;
      await new Promise((resolve) => setTimeout(resolve, wait));
    }
  }
}
