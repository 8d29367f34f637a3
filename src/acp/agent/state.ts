/**
 * The agent's authentication state, as `auth/status` (SDK unstable shape) and the draft's `getAuthState` see it
 * (pure), and the epoch guard that keeps a slow, stale check from overwriting a newer state.
 */

import type { AccountInfo } from "../../vault/types.ts";
import { AGENTAUTH_META, type GetAuthStateResponse, type KnownAuthState } from "../wire.ts";
import type { McpServerAccount } from "./mcp/index.ts";

/** What one method has right now. `source` says where the credential was found. */
export interface MethodState {
  methodId: string;
  configured: boolean;
  source?: "vault" | "env";
  /** `provider`: the preset that issued a vault credential ("github"), when one did. */
  accounts: (AccountInfo & { updatedAt?: number; provider?: string })[];
}

/**
 * What the SDK's `AuthAccount` has no field for, in its `_meta` under our key: the provider preset, the
 * provider's handle (GitHub login) and avatar, so a client can show "GitHub: alice" with the picture.
 */
export interface AccountMeta {
  provider?: string;
  login?: string;
  avatarUrl?: string;
  /** An MCP server of the client's sessions (mcp/accounts.ts): name, URL, state, scopes. */
  mcpServer?: McpServerAccount;
}

export interface AuthStatus {
  state: KnownAuthState;
  accounts: {
    label: string;
    active?: boolean;
    name?: string;
    email?: string;
    organization?: string;
    _meta?: { [AGENTAUTH_META]: AccountMeta };
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
      ...accountMeta(a),
    })),
  };
}

/**
 * The agent's own accounts, then one per MCP server of the client's sessions. The top-level `state` stays the
 * agent's: a server that needs a sign-in does not make the agent unauthenticated.
 */
export function withMcpServers(
  status: AuthStatus,
  servers: readonly {
    label: string;
    _meta: { [AGENTAUTH_META]: { mcpServer: McpServerAccount } };
  }[],
): AuthStatus {
  return servers.length === 0 ? status : { ...status, accounts: [...status.accounts, ...servers] };
}

function accountMeta(account: MethodState["accounts"][number]): {
  _meta?: { [AGENTAUTH_META]: AccountMeta };
} {
  const meta: AccountMeta = {
    ...(account.provider ? { provider: account.provider } : {}),
    ...(account.login ? { login: account.login } : {}),
    ...(account.avatarUrl ? { avatarUrl: account.avatarUrl } : {}),
  };
  return Object.keys(meta).length > 0 ? { _meta: { [AGENTAUTH_META]: meta } } : {};
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
          : (signedInAs(m) ?? "Credentials stored in the agentauth vault.")
        : "Not configured.",
    })),
  };
}

/** "Signed in to github as alice." for a provider credential (the seed's message is the only place to say it). */
function signedInAs(method: MethodState): string | undefined {
  const account = method.accounts.find((a) => a.provider && (a.login ?? a.label));
  return account
    ? `Signed in to ${account.provider} as ${account.login ?? account.label} (stored in the agentauth vault).`
    : undefined;
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
