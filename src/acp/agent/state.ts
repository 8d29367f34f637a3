/**
 * The agent's authentication state, as `auth/status` (SDK unstable shape) and the draft's `getAuthState` see it
 * (pure), and the epoch guard that keeps a slow, stale check from overwriting a newer state.
 */

import type { AccountInfo } from "../../vault/types.ts";
import type { GetAuthStateResponse, KnownAuthState } from "../wire.ts";

/** What one method has right now. `source` says where the credential was found. */
export interface MethodState {
  methodId: string;
  configured: boolean;
  source?: "vault" | "env";
  accounts: (AccountInfo & { updatedAt?: number })[];
}

export interface AuthStatus {
  state: KnownAuthState;
  accounts: {
    label: string;
    active?: boolean;
    name?: string;
    email?: string;
    organization?: string;
  }[];
}

/** `not_required` when nothing is configured to sign in with; otherwise authenticated iff some method has credentials. */
export function toAuthStatus(methods: readonly MethodState[]): AuthStatus {
  if (methods.length === 0) return { state: "not_required", accounts: [] };
  const accounts = methods.flatMap((m) => m.accounts.map((a) => ({ ...a, methodId: m.methodId })));
  // The most recently written credential is the one in use (SDK: agents with several SHOULD mark `active`).
  const newest = accounts.reduce<(typeof accounts)[number] | undefined>(
    (best, a) => ((a.updatedAt ?? 0) > (best?.updatedAt ?? -1) ? a : best),
    undefined,
  );
  return {
    state: methods.some((m) => m.configured) ? "authenticated" : "unauthenticated",
    accounts: accounts.map((a) => ({
      label: a.label ?? a.email ?? a.name ?? a.methodId,
      active: a === newest,
      ...(a.name ? { name: a.name } : {}),
      ...(a.email ? { email: a.email } : {}),
      ...(a.organization ? { organization: a.organization } : {}),
    })),
  };
}

/** The seed RFD's shape: overall flag, per-method breakdown, a human message. */
export function toGetAuthState(methods: readonly MethodState[]): GetAuthStateResponse {
  const authenticated = methods.some((m) => m.configured);
  return {
    authenticated,
    message: authenticated
      ? "Credentials are configured."
      : "Sign in with one of the advertised methods.",
    authMethods: methods.map((m) => ({
      authMethodId: m.methodId,
      authenticated: m.configured,
      message: m.configured
        ? m.source === "env"
          ? "Configured through an environment variable."
          : "Credentials stored in the agentauth vault."
        : "Not configured.",
    })),
  };
}

/**
 * Publishes status changes at most once per change, newest wins: every mutation bumps the epoch, and a status
 * computed under an older epoch is dropped (claude-agent-acp's auth epoch, made a rule).
 */
export class StatusPublisher {
  #epoch = 0;
  #last: string | undefined;
  readonly #publish: (status: AuthStatus) => Promise<void> | void;

  constructor(publish: (status: AuthStatus) => Promise<void> | void) {
    this.#publish = publish;
  }

  /** Call before any change to credentials; returns the new epoch. */
  bump(): number {
    return ++this.#epoch;
  }

  get epoch(): number {
    return this.#epoch;
  }

  /** Computes the status and publishes it if it is still current and differs from what was last published. */
  async refresh(compute: () => Promise<AuthStatus>): Promise<boolean> {
    const epoch = this.#epoch;
    const status = await compute();
    if (epoch !== this.#epoch) return false;
    const fingerprint = JSON.stringify(status);
    if (fingerprint === this.#last) return false;
    this.#last = fingerprint;
    await this.#publish(status);
    return true;
  }

  /** Records what the client already knows (e.g. the first `auth/status` answer) without publishing it. */
  seen(status: AuthStatus): void {
    this.#last ??= JSON.stringify(status);
  }
}
