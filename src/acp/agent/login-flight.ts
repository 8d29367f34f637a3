/**
 * One OAuth login at a time per agent. A second `authenticate` for the same method joins the running login; each
 * request can be cancelled on its own, and the login itself stops only when every request waiting on it is
 * cancelled, the client goes away, `logout` is called, or another method's login replaces it.
 */

import * as acp from "@agentclientprotocol/sdk/unstable";

type RunningLogin = {
  methodId: string;
  controller: AbortController;
  waiters: number;
  promise: Promise<void>;
};

export class LoginFlight {
  #login: RunningLogin | undefined;

  /** Joins the running login of `methodId`, or starts one with `start` (replacing another method's). */
  async join(
    methodId: string,
    requestSignal: AbortSignal,
    start: (loginSignal: AbortSignal) => Promise<void>,
  ): Promise<void> {
    let login = this.#login;
    if (login?.methodId !== methodId) {
      login?.controller.abort();
      const controller = new AbortController();
      const created: RunningLogin = {
        methodId,
        controller,
        waiters: 0,
        promise: Promise.resolve(),
      };
      created.promise = start(controller.signal).finally(() => {
        if (this.#login === created) this.#login = undefined;
      });
      created.promise.catch(() => {});
      this.#login = created;
      login = created;
    }
    const joined = login;
    joined.waiters++;
    try {
      await untilAborted(joined.promise, requestSignal);
    } finally {
      joined.waiters--;
      if (joined.waiters === 0 && requestSignal.aborted) joined.controller.abort();
    }
  }

  /** Stops the running login, if any (logout: a sign-in still waiting must not log the person back in). */
  abort(): void {
    this.#login?.controller.abort();
  }
}

/** Waits for `promise`, or rejects with `requestCancelled` as soon as this request's signal aborts. */
function untilAborted<T>(promise: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted)
    return Promise.reject(acp.RequestError.requestCancelled(undefined, "the login was cancelled"));
  return new Promise<T>((resolve, reject) => {
    const onAbort = () =>
      reject(acp.RequestError.requestCancelled(undefined, "the login was cancelled"));
    signal.addEventListener("abort", onAbort, { once: true });
    promise.then(resolve, reject).finally(() => signal.removeEventListener("abort", onAbort));
  });
}
