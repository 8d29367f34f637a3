/** Slack simulator: its model (workspace, users, codes, tokens, refresh tokens, faults, counters), no HTTP. */

import { BoundedMap, randomDigits, randomHex, randomToken, SimClock } from "./common.ts";

export interface SlackUser {
  /** Member id, e.g. "U0123ALICE". */
  id: string;
  /** The handle auth.test reports as `user`. */
  name: string;
  realName: string;
  email: string;
}

export interface SlackTeam {
  id: string;
  name: string;
  /** Workspace subdomain: auth.test's url is https://DOMAIN.slack.com/. */
  domain: string;
}

export type SlackFault = "html" | "html200" | "no_token" | "rate_limit" | "server_error";

export interface SlackSimulatorOptions {
  clientId?: string;
  clientSecret?: string;
  users?: SlackUser[];
  team?: SlackTeam;
  /** Name (or id) of the user who approves browser authorizations (default: the first user). */
  approveAs?: string;
  deny?: boolean;
  /** The app's registered Redirect URLs (default ["http://127.0.0.1/callback"]). */
  redirectUrls?: string[];
  /**
   * Accept any port on a loopback Redirect URL (RFC 8252 §7.3). Slack's docs do not say; this is a simulator
   * convenience (default true) so an agentauth loopback listener on an ephemeral port can be used.
   */
  loopbackAnyPort?: boolean;
  /** "Token rotation" enabled in the app settings: expiring xoxe.* tokens and xoxe-1- refresh tokens. */
  tokenRotation?: boolean;
  /** Rotating access tokens live 12 hours (43200 s). */
  accessTokenTtlSeconds?: number;
  /** Retry-After of the injected rate-limit answer. */
  retryAfterSeconds?: number;
}

export const DEFAULT_TEAM: SlackTeam = {
  id: "T0SIMTEAM1",
  name: "Simulated Workspace",
  domain: "simulated",
};
export const DEFAULT_USERS: SlackUser[] = [
  { id: "U0SIMALICE", name: "alice", realName: "Alice Liddell", email: "alice@example.com" },
];

export interface SlackCode {
  user: SlackUser;
  redirectUri: string | null;
  userScope: string;
  botScope: string;
  challenge: string | null;
  expiresAt: number;
}

export interface SlackToken {
  /** One authorization: the first token and every token refreshed from it. */
  grantId: string;
  kind: "user" | "bot";
  user: SlackUser;
  scope: string;
  expiresAt: number | null;
  refreshToken: string | null;
  revoked: boolean;
}

export interface SlackRefresh {
  grantId: string;
  accessToken: string;
  kind: "user" | "bot";
  user: SlackUser;
  scope: string;
}

export interface SlackStats {
  authorizations: number;
  codeExchanges: number;
  refreshGrants: number;
  revocations: number;
  accountCalls: number;
  tokenRequests: number;
}

export interface SlackTokenRequest {
  contentType: string | null;
  accept: string | null;
  auth: "basic" | "post" | "none";
  grantType: string | null;
  params: Record<string, string>;
}

const CAP = 10_000;

export class SlackModel {
  readonly clock = new SimClock();
  readonly clientId: string;
  readonly clientSecret: string;
  readonly appId: string;
  readonly users: SlackUser[];
  readonly team: SlackTeam;
  approveAs: string;
  deny: boolean;
  readonly redirectUrls: URL[];
  readonly loopbackAnyPort: boolean;
  readonly rotation: boolean;
  readonly accessTtl: number;
  readonly retryAfter: number;
  readonly codes = new BoundedMap<string, SlackCode>(CAP);
  readonly tokens = new BoundedMap<string, SlackToken>(CAP);
  readonly refreshTokens = new BoundedMap<string, SlackRefresh>(CAP);
  readonly tokenFaults: SlackFault[] = [];
  readonly accountFaults: SlackFault[] = [];
  last: SlackTokenRequest | null = null;
  readonly counters: SlackStats = {
    authorizations: 0,
    codeExchanges: 0,
    refreshGrants: 0,
    revocations: 0,
    accountCalls: 0,
    tokenRequests: 0,
  };

  constructor(options: SlackSimulatorOptions) {
    // Client ids look like "2141029472.691202649728" (oauth.v2.access example).
    this.clientId = options.clientId ?? `${randomDigits(10)}.${randomDigits(12)}`;
    this.clientSecret = options.clientSecret ?? randomHex(16);
    this.appId = `A0${randomToken("", 9).toUpperCase()}`;
    this.users = options.users && options.users.length > 0 ? options.users : DEFAULT_USERS;
    this.team = options.team ?? DEFAULT_TEAM;
    this.approveAs = options.approveAs ?? this.users[0]!.name;
    this.deny = options.deny ?? false;
    this.redirectUrls = (options.redirectUrls ?? ["http://127.0.0.1/callback"]).map(
      (u) => new URL(u),
    );
    this.loopbackAnyPort = options.loopbackAnyPort ?? true;
    this.rotation = options.tokenRotation ?? false;
    this.accessTtl = options.accessTokenTtlSeconds ?? 43200;
    this.retryAfter = options.retryAfterSeconds ?? 30;
  }

  user(nameOrId: string): SlackUser | undefined {
    return this.users.find((u) => u.name === nameOrId || u.id === nameOrId);
  }

  /**
   * Mints one token. "Token types": user tokens xoxp-, bot tokens xoxb-; "Using token rotation": with rotation on,
   * access tokens are xoxe.xoxp-1-… / xoxe.xoxb-1-… expiring in 43200 s, with an xoxe-1-… refresh token.
   */
  mint(
    kind: "user" | "bot",
    user: SlackUser,
    scope: string,
    grantId: string = randomHex(8),
  ): Record<string, string | number> {
    const base = `${kind === "user" ? "xoxp" : "xoxb"}-${randomDigits(12)}-${randomDigits(13)}-${randomHex(16)}`;
    const accessToken = this.rotation ? `xoxe.${base.replace(/^(xox[pb])-/, "$1-1-")}` : base;
    const refreshToken = this.rotation ? `xoxe-1-${randomToken("", 120)}` : null;
    const expiresAt = this.rotation ? this.clock.now() + this.accessTtl * 1000 : null;
    this.tokens.set(accessToken, {
      grantId,
      kind,
      user,
      scope,
      expiresAt,
      refreshToken,
      revoked: false,
    });
    if (refreshToken)
      this.refreshTokens.set(refreshToken, { grantId, accessToken, kind, user, scope });
    return {
      access_token: accessToken,
      token_type: kind,
      scope,
      ...(refreshToken ? { refresh_token: refreshToken, expires_in: this.accessTtl } : {}),
    };
  }

  /** "ok" for a usable token, else the Web API error a call with it gets. */
  check(
    token: string | null,
  ): "ok" | "not_authed" | "invalid_auth" | "token_revoked" | "token_expired" {
    if (token === null || token === "") return "not_authed";
    const record = this.tokens.get(token);
    if (!record) return "invalid_auth";
    if (record.revoked) return "token_revoked";
    if (record.expiresAt !== null && record.expiresAt <= this.clock.now()) return "token_expired";
    return "ok";
  }

  /**
   * Revokes a token's whole authorization: the token, the tokens refreshed from the same grant (an older one may
   * not have expired yet) and their refresh tokens.
   */
  revoke(token: string): void {
    const record = this.tokens.get(token);
    if (!record) return;
    for (const other of this.tokens.values()) {
      if (other.grantId !== record.grantId) continue;
      other.revoked = true;
      if (other.refreshToken) this.refreshTokens.delete(other.refreshToken);
    }
  }

  /** Users holding at least one usable user token. */
  grantCount(): number {
    const ids = new Set<string>();
    for (const [token, record] of this.tokens) {
      if (record.kind === "user" && this.check(token) === "ok") ids.add(record.user.id);
    }
    return ids.size;
  }
}
