/**
 * `auth_required` gating of session methods (ACP: `session/new` "may fail with an auth_required error until the
 * Client completes the authentication flow"), the short cache that keeps the vault off the hot path, and what a
 * logout does to running sessions (the spec leaves that to the agent).
 */

import * as acp from "@agentclientprotocol/sdk/unstable";

/** What happens to running sessions on logout (the spec leaves it to the agent). */
export type SessionPolicy = "require-auth" | "terminate" | "keep";

export const DEFAULT_GATED = [
  "session/new",
  "session/load",
  "session/prompt",
  "session/resume",
  "session/fork",
];
/** How long a positive "authenticated" answer is reused by the gate before the vault is read again. */
const AUTH_CACHE_MS = 2000;

export interface SessionGateOptions {
  policy: SessionPolicy;
  /** Methods gated in addition to DEFAULT_GATED. */
  extra?: readonly string[];
  /** The full check (reads the vault). */
  check: () => Promise<boolean>;
  /** Bumped by every credential change; an answer computed under an older epoch is not cached. */
  epoch: () => number;
}

export class SessionGate {
  readonly methods: ReadonlySet<string>;
  readonly #policy: SessionPolicy;
  readonly #check: () => Promise<boolean>;
  readonly #epoch: () => number;
  /** Whether sessions are tracked at all: only `keep` and `terminate` need to know them. */
  readonly #trackSessions: boolean;
  /** Until when (ms since the epoch) a positive "authenticated" answer is reused; 0 when none is. */
  #authenticatedUntil = 0;
  /** Sessions created on this connection; `terminate` forgets them, `keep` lets them outlive a logout. */
  readonly #sessions = new Set<string>();
  readonly #terminated = new Set<string>();

  constructor(options: SessionGateOptions) {
    this.methods = new Set([...DEFAULT_GATED, ...(options.extra ?? [])]);
    this.#policy = options.policy;
    this.#check = options.check;
    this.#epoch = options.epoch;
    this.#trackSessions = options.policy === "keep" || options.policy === "terminate";
  }

  async isAuthenticated(): Promise<boolean> {
    if (Date.now() < this.#authenticatedUntil) return true;
    const epoch = this.#epoch();
    const value = await this.#check();
    // A login or logout that happened while we read must not be overwritten by this older answer.
    if (epoch === this.#epoch()) this.#authenticatedUntil = value ? Date.now() + AUTH_CACHE_MS : 0;
    return value;
  }

  /** Credentials changed: the next gated request reads the vault again. */
  invalidate(): void {
    this.#authenticatedUntil = 0;
  }

  /** Applies the session policy after a logout. */
  loggedOut(): void {
    if (this.#policy !== "terminate") return;
    for (const id of this.#sessions) this.#terminated.add(id);
    this.#sessions.clear();
  }

  /**
   * Wraps a request handler so it answers `auth_required` (−32000) until the agent is authenticated. The hot path
   * (a positive answer less than 2 s old, the `require-auth` policy) is one clock read and a direct call: no
   * allocation, no extra await, the handler's own result or promise returned as is.
   */
  wrap<Ctx extends { params: unknown }, R>(
    handler: (ctx: Ctx) => R | Promise<R>,
  ): (ctx: Ctx) => R | Promise<R> {
    return (ctx) => {
      if (this.#trackSessions) return this.#gateTracked(handler, ctx);
      if (Date.now() < this.#authenticatedUntil) return handler(ctx);
      return this.#gateSlow(handler, ctx, false);
    };
  }

  /** `keep` and `terminate`: sessions are remembered, terminated ones refused, kept ones let through. */
  #gateTracked<Ctx extends { params: unknown }, R>(
    handler: (ctx: Ctx) => R | Promise<R>,
    ctx: Ctx,
  ): R | Promise<R> {
    const sessionId = sessionIdOf(ctx.params);
    if (sessionId !== undefined && this.#terminated.has(sessionId))
      throw acp.RequestError.sessionNotFound(sessionId);
    const kept =
      this.#policy === "keep" && sessionId !== undefined && this.#sessions.has(sessionId);
    if (kept || Date.now() < this.#authenticatedUntil) return this.#remember(handler(ctx));
    return this.#gateSlow(handler, ctx, true);
  }

  async #gateSlow<Ctx extends { params: unknown }, R>(
    handler: (ctx: Ctx) => R | Promise<R>,
    ctx: Ctx,
    track: boolean,
  ): Promise<R> {
    if (!(await this.isAuthenticated())) {
      throw acp.RequestError.authRequired(
        undefined,
        "sign in with one of the advertised authMethods (see auth/status)",
      );
    }
    const result = await handler(ctx);
    return track ? this.#remember(result) : result;
  }

  /** Records the session a handler created (`session/new`, `session/fork`, …) once its result is known. */
  #remember<R>(result: R | Promise<R>): R | Promise<R> {
    if (isThenable(result)) return Promise.resolve(result).then((r) => this.#remember(r) as R);
    const created = sessionIdOf(result);
    if (created) this.#sessions.add(created);
    return result;
  }
}

function sessionIdOf(value: unknown): string | undefined {
  const id = (value as { sessionId?: unknown } | null | undefined)?.sessionId;
  return typeof id === "string" ? id : undefined;
}

function isThenable<R>(value: R | Promise<R>): value is Promise<R> {
  return typeof (value as { then?: unknown } | null | undefined)?.then === "function";
}
