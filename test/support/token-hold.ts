/**
 * Test support: stalls the embedded server's next refresh-token grant, to place a kill -9 at an exact point of a
 * refresh. The clients under test stay untouched: the hook is on the real oidc-provider, in the test process, at
 * the one step every refresh goes through (`RefreshToken.find`, the refresh token lookup), and it finds the request
 * being served through oidc-provider's own async context (`Provider.ctx`). Koa middleware cannot be added to a
 * running server (koa composes its middleware once), hence this hook. One-shot: later grants run untouched.
 *
 * - "before-grant": the lookup never returns, so the refresh token is never spent, and no grant outcome is counted
 *   ("the request never reached the server" as far as the token is concerned).
 * - "after-grant": the grant runs (the refresh token is rotated, `stats` counts a success) and the answer is
 *   swallowed, so it never reaches the client ("the server rotated, the client died before storing").
 */

import type { ServerResponse } from "node:http";
import Provider from "oidc-provider";
import type { RunningIdp } from "../../src/idp/index.ts";

export type HoldMode = "before-grant" | "after-grant";

export interface TokenHold {
  /** Resolves when the held refresh is stalled: at the lookup ("before-grant") or at the answer ("after-grant"). */
  held: Promise<void>;
  /** Resolves when the held request's client has disconnected. */
  released: Promise<void>;
  /** Removes the hook if it has not fired (for t.after, so a failed test leaves the server as it was). */
  disarm(): void;
}

type Finder = (this: unknown, ...args: unknown[]) => Promise<unknown>;

/** Arms a one-shot hold on the next refresh-token grant `idp` serves. */
export function holdNextRefresh(idp: RunningIdp, mode: HoldMode): TokenHold {
  const model = idp.provider.RefreshToken as unknown as { find: Finder };
  const own = Object.getOwnPropertyDescriptor(model, "find");
  const original = model.find;
  const restore = () => {
    if (own) Object.defineProperty(model, "find", own);
    else delete (model as { find?: Finder }).find;
  };
  let onHeld = () => {};
  let onReleased = () => {};
  const held = new Promise<void>((resolve) => {
    onHeld = resolve;
  });
  const released = new Promise<void>((resolve) => {
    onReleased = resolve;
  });
  const hooked: Finder = async function (this: unknown, ...args: unknown[]) {
    const ctx = (Provider as unknown as { ctx?: { res: ServerResponse } }).ctx;
    if (!ctx) return original.apply(this, args);
    restore();
    const res = ctx.res;
    const gone = new Promise<void>((resolve) => {
      if (res.destroyed || res.socket?.destroyed) resolve();
      res.once("close", () => resolve());
    });
    gone.then(onReleased);
    if (mode === "before-grant") {
      onHeld();
      // Never settles: the request stays parked, unread, until its client is gone and the server is closed.
      return new Promise(() => {});
    }
    // The grant runs; koa's final res.end (the token response) is dropped, so the client never gets the answer.
    res.end = ((..._args: unknown[]) => {
      onHeld();
      return res;
    }) as ServerResponse["end"];
    return original.apply(this, args);
  };
  model.find = hooked;
  return {
    held,
    released,
    disarm: () => {
      if (model.find === hooked) restore();
    },
  };
}
