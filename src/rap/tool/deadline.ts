/**
 * A per-operation deadline (issue 8 §1.4): a handler that never settles must not hold a work-queue slot and an
 * active-call slot forever. The handler gets a signal that aborts at the deadline (or on cancellation); whatever it
 * returns afterwards is dropped.
 */

export const DEFAULT_OPERATION_TIMEOUT_MS = 5 * 60_000;
/** setTimeout's limit: larger values fire at once. */
const MAX_TIMER_MS = 2 ** 31 - 1;

export type DeadlineOutcome<T> = { kind: "done"; value: T } | { kind: "timeout" };

export async function withDeadline<T>(
  run: (signal: AbortSignal) => T | Promise<T>,
  parent: AbortSignal,
  timeoutMs: number,
): Promise<DeadlineOutcome<T>> {
  const deadline = new AbortController();
  let expire: () => void = () => {};
  const expired = new Promise<DeadlineOutcome<T>>((resolve) => {
    expire = () => resolve({ kind: "timeout" });
  });
  const timer = setTimeout(
    () => {
      expire();
      deadline.abort(new DOMException("The operation's deadline passed.", "TimeoutError"));
    },
    Math.min(timeoutMs, MAX_TIMER_MS),
  );
  try {
    // Through a promise: a handler written without `async` may return a plain value or throw synchronously.
    const signal = AbortSignal.any([parent, deadline.signal]);
    const work = Promise.resolve().then(() => run(signal));
    // A late rejection (a handler reacting to the abort) has nobody to tell.
    work.catch(() => {});
    const outcome = await Promise.race([
      work.then((value) => ({ kind: "done", value }) as const),
      expired,
    ]);
    return outcome;
  } catch (error) {
    if (deadline.signal.aborted) return { kind: "timeout" };
    throw error;
  } finally {
    clearTimeout(timer);
  }
}
