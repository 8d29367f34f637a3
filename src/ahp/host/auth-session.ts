/**
 * One connection's authentication: `authenticate` (both dialects), the deprecated `setAuthToken`, gating, expiry
 * timers and revocation. Wraps the pure credential state machine and dialect mapping with the verifier and timers.
 * Tokens become `Secret`s on arrival and are never logged, echoed, or put in a notification.
 */

import type { Logger } from "../../core/log.ts";
import { Secret } from "../../core/secret.ts";
import { AhpErrorCodes, type JsonRpcError } from "../wire.ts";
import type { AuthenticatedResource, HostContext, Requirement } from "./context.ts";
import { ConnectionCredentials } from "./credentials.ts";
import {
  type AuthChange,
  type AuthProblem,
  authChangeNotification,
  authRequiredError,
  expiredProblem,
  missingProblem,
  type Notification,
  revokedProblem,
} from "./dialect.ts";
import type { Dialect } from "./negotiate.ts";
import { TokenBucket } from "./rate-limit.ts";
import type { RegisteredResource } from "./resources.ts";
import { TokenRejected, VerifierUnavailable } from "./verify.ts";

/** Node's timers overflow past 2^31-1 ms; longer lifetimes are re-armed. */
const MAX_TIMER_MS = 2_147_483_647;

/** On success, the notification to send *after* the response (the seed's `authenticated` / `revoked`), if any. */
export type AuthOutcome =
  | { ok: true; announce?: Notification }
  | { ok: false; error: JsonRpcError };

export class AuthSession {
  readonly #host: HostContext;
  readonly #dialect: Dialect;
  readonly #notify: (n: Notification) => void;
  readonly #log: Logger;
  readonly #credentials = new ConnectionCredentials();
  readonly #timers = new Map<string, NodeJS.Timeout>();
  readonly #bucket: TokenBucket;
  readonly #onExpired: (() => void) | undefined;
  #closed = false;

  /** `onExpired`: after credentials expired (timer or a later check), once per batch, e.g. to re-check ownership. */
  constructor(
    host: HostContext,
    dialect: Dialect,
    notify: (n: Notification) => void,
    log: Logger,
    onExpired?: () => void,
  ) {
    this.#host = host;
    this.#dialect = dialect;
    this.#notify = notify;
    this.#log = log;
    this.#onExpired = onExpired;
    this.#bucket = new TokenBucket(host.rateLimit, host.now());
  }

  /** The rate limit shared by `authenticate` and `setAuthToken`; an error to answer when exceeded. */
  takeRate(): JsonRpcError | undefined {
    const taken = this.#bucket.take(this.#host.now());
    if (taken.ok) return undefined;
    this.#log.warn("ahp.rate_limited", { retryAfterMs: taken.retryAfterMs });
    return {
      code: AhpErrorCodes.RateLimited,
      message: "Too many authenticate calls on this connection; retry later.",
      data: { retryAfterMs: taken.retryAfterMs },
    };
  }

  /** Verifies and stores `token` for `resource`; an empty token clears this connection's credential. */
  async authenticate(
    resource: RegisteredResource,
    token: string,
    expiresIn: number | undefined,
  ): Promise<AuthOutcome> {
    if (token === "") {
      this.#credentials.revoke(resource.resource);
      this.#disarm(resource.resource);
      this.#log.info("ahp.credential_cleared", { resource: resource.resource });
      return { ok: true, announce: this.#notification(resource, "cleared") };
    }
    const ticket = this.#credentials.begin(resource.resource);
    const secret = new Secret(token);
    try {
      const verified = await this.#host.verify(secret, resource, this.#host.now());
      if (this.#closed) return { ok: true };
      const stored = this.#credentials.accept(
        resource.resource,
        ticket,
        {
          token: secret,
          subject: verified.subject,
          scopes: verified.scopes,
          tokenExpiresAt: verified.expiresAt,
          expiresIn,
        },
        this.#host.now(),
      );
      // Superseded by a newer authenticate or a revocation sent after this one: valid, but not stored.
      if (!stored) return { ok: true };
      this.#arm(resource, stored.expiresAt);
      this.#log.info("ahp.authenticated", {
        resource: resource.resource,
        subject: verified.subject,
        scopes: verified.scopes,
        expiresAt: stored.expiresAt,
      });
      return { ok: true, announce: this.#notification(resource, "authenticated") };
    } catch (error) {
      return { ok: false, error: this.#failure(error, resource) };
    }
  }

  /**
   * The `-32007` (or other) error answering a gated command, or undefined when it may run. The common case (every
   * required resource authenticated, in date, with the scopes, and no re-verification) is answered synchronously
   * without allocating: no promise, no array, one clock read. Anything else takes the full path.
   */
  check(
    requirement: Requirement | undefined,
    scopes: readonly string[] | undefined,
  ): JsonRpcError | undefined | Promise<JsonRpcError | undefined> {
    if (requirement === undefined || requirement.length === 0) return undefined;
    if (requirement !== "any" && !this.#host.reverifyOnUse) {
      const now = this.#host.now();
      let ok = true;
      for (let i = 0; ok && i < requirement.length; i++) {
        const credential = this.#credentials.get(requirement[i] as string, now);
        ok = credential.state === "authenticated" && hasAll(credential.scopes, scopes);
      }
      if (ok) return undefined;
    }
    return this.#checkFully(requirement, scopes);
  }

  async #checkFully(
    requirement: Requirement,
    scopes: readonly string[] | undefined,
  ): Promise<JsonRpcError | undefined> {
    const registry = this.#host.registry;
    const requires = requirement;
    if (requires === "any") {
      const now = this.#host.now();
      this.#expireDue(now);
      if (this.#credentials.authenticated(now).length > 0) return undefined;
      return authRequiredError(
        this.#dialect,
        registry.all().map((r) => this.#problemFor(r)),
      );
    }
    const problems: AuthProblem[] = [];
    for (const id of requires) {
      const resource = registry.byResource(id);
      if (!resource) throw new Error(`command requires '${id}', which no agent registered`);
      const problem = await this.#usable(resource, scopes ?? []);
      if (problem instanceof VerifierUnavailable) {
        return { code: AhpErrorCodes.InternalError, message: problem.message };
      }
      if (problem) problems.push(problem);
    }
    return problems.length > 0 ? authRequiredError(this.#dialect, problems) : undefined;
  }

  /** True when this connection holds a live credential for every one of `resources` (no re-verification). */
  holds(resources: readonly string[]): boolean {
    const now = this.#host.now();
    return resources.every((r) => this.#credentials.get(r, now).state === "authenticated");
  }

  authenticated(): AuthenticatedResource[] {
    const now = this.#host.now();
    this.#expireDue(now);
    return this.#credentials.authenticated(now).map(({ resource, credential }) => ({
      resource,
      schemeId: this.#host.registry.byResource(resource)?.schemeId ?? resource,
      subject: credential.subject,
      scopes: [...credential.scopes],
      expiresAt: credential.expiresAt,
    }));
  }

  /** A resource registered after this connection started: announce that it needs a credential. */
  announceRequired(resource: RegisteredResource): void {
    if (resource.required === false) return;
    this.#announce(resource, "required", missingProblem(resource));
  }

  close(): void {
    this.#closed = true;
    for (const timer of this.#timers.values()) clearTimeout(timer);
    this.#timers.clear();
    this.#credentials.clear();
  }

  async #usable(
    resource: RegisteredResource,
    scopes: readonly string[],
  ): Promise<AuthProblem | VerifierUnavailable | undefined> {
    const now = this.#host.now();
    this.#expireDue(now);
    const credential = this.#credentials.get(resource.resource, now);
    if (credential.state !== "authenticated" || !credential.token)
      return this.#problemFor(resource);
    if (this.#host.reverifyOnUse) {
      const ticket = this.#credentials.begin(resource.resource);
      try {
        await this.#host.verify(credential.token, resource, this.#host.now());
        // Nothing changed meanwhile: keep the credential under the new generation.
        if (this.#credentials.isCurrent(resource.resource, ticket)) {
          this.#credentials.accept(
            resource.resource,
            ticket,
            {
              token: credential.token,
              subject: credential.subject,
              scopes: credential.scopes,
              tokenExpiresAt: credential.expiresAt,
            },
            this.#host.now(),
          );
        }
      } catch (error) {
        if (error instanceof VerifierUnavailable) return error;
        this.#credentials.revoke(resource.resource);
        this.#disarm(resource.resource);
        const problem = revokedProblem(resource);
        this.#log.info("ahp.credential_revoked", { resource: resource.resource });
        this.#announce(resource, "revoked", problem);
        return problem;
      }
    }
    const missing = scopes.filter((s) => !credential.scopes.includes(s));
    if (missing.length > 0) {
      return {
        resource,
        error: "insufficient_scope",
        description: "The access token lacks a scope this command needs.",
        scope: [...scopes],
      };
    }
    return undefined;
  }

  #problemFor(resource: RegisteredResource): AuthProblem {
    const state = this.#credentials.get(resource.resource, this.#host.now()).state;
    if (state === "expired") return expiredProblem(resource);
    if (state === "revoked") return revokedProblem(resource);
    return missingProblem(resource);
  }

  #failure(error: unknown, resource: RegisteredResource): JsonRpcError {
    if (error instanceof TokenRejected) {
      this.#log.info("ahp.token_rejected", {
        resource: resource.resource,
        error: error.bearerError,
        reason: error.message,
      });
      return authRequiredError(this.#dialect, [
        { resource, error: error.bearerError, description: error.message, scope: error.scope },
      ]);
    }
    if (error instanceof VerifierUnavailable) {
      this.#log.warn("ahp.verifier_unavailable", {
        resource: resource.resource,
        reason: error.message,
      });
      return { code: AhpErrorCodes.InternalError, message: error.message };
    }
    this.#log.error("ahp.verify_failed", { resource: resource.resource, error });
    return { code: AhpErrorCodes.InternalError, message: "The token could not be verified." };
  }

  #arm(resource: RegisteredResource, expiresAt: number | undefined): void {
    this.#disarm(resource.resource);
    if (expiresAt === undefined) return;
    const delay = Math.max(0, expiresAt - this.#host.now());
    const timer = setTimeout(
      () => {
        this.#timers.delete(resource.resource);
        if (this.#closed) return;
        if (delay >= MAX_TIMER_MS) return this.#arm(resource, expiresAt);
        this.#expireDue(this.#host.now());
      },
      Math.min(delay, MAX_TIMER_MS),
    );
    timer.unref();
    this.#timers.set(resource.resource, timer);
  }

  #disarm(resource: string): void {
    clearTimeout(this.#timers.get(resource));
    this.#timers.delete(resource);
  }

  /** Expires every due credential and announces it (also called before gating, in case a timer lags). */
  #expireDue(now: number): void {
    let expired = false;
    for (const resource of this.#host.registry.all()) {
      if (!this.#credentials.expireIfDue(resource.resource, now)) continue;
      expired = true;
      this.#disarm(resource.resource);
      this.#log.info("ahp.credential_expired", { resource: resource.resource });
      this.#announce(resource, "expired", expiredProblem(resource));
    }
    // After the loop: the callback reads `authenticated()`, which comes back here (nothing is due by then).
    if (expired && !this.#closed) this.#onExpired?.();
  }

  #announce(resource: RegisteredResource, change: AuthChange, problem?: AuthProblem): void {
    const notification = this.#notification(resource, change, problem);
    if (notification) this.#notify(notification);
  }

  #notification(
    resource: RegisteredResource,
    change: AuthChange,
    problem?: AuthProblem,
  ): Notification | undefined {
    return this.#closed
      ? undefined
      : authChangeNotification(this.#dialect, resource, change, problem);
  }
}

function hasAll(held: readonly string[], needed: readonly string[] | undefined): boolean {
  if (needed === undefined) return true;
  for (const scope of needed) if (!held.includes(scope)) return false;
  return true;
}
