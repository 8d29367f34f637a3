/** GitHub simulator: its model (users, codes, device codes, tokens, grants, faults, counters), no HTTP. */

import { BoundedMap, randomToken, SimClock } from "./common.ts";

export interface GitHubUser {
  login: string;
  id: number;
  name: string | null;
  /** The public email; GitHub answers null when the user keeps it private. */
  email: string | null;
}

export type GitHubAppKind = "oauth_app" | "github_app";
export type GitHubFault = "html" | "html200" | "no_token" | "rate_limit" | "server_error";

export interface GitHubSimulatorOptions {
  clientId?: string;
  clientSecret?: string;
  appKind?: GitHubAppKind;
  users?: GitHubUser[];
  /** Login of the user who approves browser authorizations (default: the first user). */
  approveAs?: string;
  /** The consent page's Cancel: the redirect carries error=access_denied. */
  deny?: boolean;
  /** The app's registered callback URL (default "http://127.0.0.1/callback": any loopback port, any sub-path). */
  callbackUrl?: string;
  deviceFlowEnabled?: boolean;
  /** Device-flow polling interval (GitHub: 5 s). */
  deviceIntervalSeconds?: number;
  deviceCodeTtlSeconds?: number;
  /** GitHub App user access tokens: 28800 s (8 h). */
  accessTokenTtlSeconds?: number;
  /** GitHub App refresh tokens: 15897600 s (about 6 months). */
  refreshTokenTtlSeconds?: number;
  /** e.g. "https://github.com": URLs in bodies use it instead of the simulator's own origin (GHES style). */
  publicHost?: string;
}

export const DEFAULT_USERS: GitHubUser[] = [
  { login: "alice", id: 1001, name: "Alice Liddell", email: "alice@example.com" },
];

export interface CodeRecord {
  user: GitHubUser;
  redirectUri: string | null;
  scope: string;
  challenge: string | null;
  expiresAt: number;
}

export interface DeviceRecord {
  userCode: string;
  scope: string;
  expiresAt: number;
  interval: number;
  lastPollAt: number | null;
  status: "pending" | "approved" | "denied";
  user: GitHubUser | null;
}

export interface TokenRecord {
  user: GitHubUser;
  scope: string;
  /** null: never expires (OAuth App tokens). */
  expiresAt: number | null;
  refreshToken: string | null;
  /** Device-flow grants refresh without the client secret (docs: "Refreshing user access tokens"). */
  viaDevice: boolean;
}

export interface RefreshRecord {
  accessToken: string;
  expiresAt: number;
}

export interface GitHubStats {
  authorizations: number;
  codeExchanges: number;
  refreshGrants: number;
  deviceCodes: number;
  devicePolls: number;
  revocations: number;
  accountCalls: number;
  tokenRequests: number;
}

export interface TokenRequestRecord {
  contentType: string | null;
  accept: string | null;
  auth: "basic" | "post" | "none";
  grantType: string | null;
  params: Record<string, string>;
}

const CAP = 10_000;

/** Everything the simulator knows. Times are milliseconds on `clock` (tests may move it forward). */
export class GitHubModel {
  readonly clock = new SimClock();
  readonly clientId: string;
  readonly clientSecret: string;
  readonly appKind: GitHubAppKind;
  readonly users: GitHubUser[];
  approveAs: string;
  deny: boolean;
  readonly callbackUrl: URL;
  deviceFlowEnabled: boolean;
  readonly deviceInterval: number;
  readonly deviceTtl: number;
  readonly accessTtl: number;
  readonly refreshTtl: number;
  readonly publicHost: string | undefined;

  readonly codes = new BoundedMap<string, CodeRecord>(CAP);
  readonly devices = new BoundedMap<string, DeviceRecord>(CAP);
  readonly userCodes = new BoundedMap<string, string>(CAP);
  readonly tokens = new BoundedMap<string, TokenRecord>(CAP);
  readonly refreshTokens = new BoundedMap<string, RefreshRecord>(CAP);
  readonly tokenFaults: GitHubFault[] = [];
  readonly accountFaults: GitHubFault[] = [];
  slowDowns = 0;
  last: TokenRequestRecord | null = null;
  readonly counters: GitHubStats = {
    authorizations: 0,
    codeExchanges: 0,
    refreshGrants: 0,
    deviceCodes: 0,
    devicePolls: 0,
    revocations: 0,
    accountCalls: 0,
    tokenRequests: 0,
  };

  constructor(options: GitHubSimulatorOptions) {
    this.appKind = options.appKind ?? "oauth_app";
    // Client ids: OAuth Apps "Ov23li…", GitHub Apps "Iv1.…" / "Iv23li…" (the app settings page shows them).
    this.clientId =
      options.clientId ??
      (this.appKind === "github_app" ? randomToken("Iv23li", 14) : randomToken("Ov23li", 14));
    this.clientSecret = options.clientSecret ?? randomToken("", 40).toLowerCase();
    this.users = options.users && options.users.length > 0 ? options.users : DEFAULT_USERS;
    this.approveAs = options.approveAs ?? this.users[0]!.login;
    this.deny = options.deny ?? false;
    this.callbackUrl = new URL(options.callbackUrl ?? "http://127.0.0.1/callback");
    this.deviceFlowEnabled = options.deviceFlowEnabled ?? true;
    this.deviceInterval = options.deviceIntervalSeconds ?? 5;
    this.deviceTtl = options.deviceCodeTtlSeconds ?? 900;
    this.accessTtl = options.accessTokenTtlSeconds ?? 28800;
    this.refreshTtl = options.refreshTokenTtlSeconds ?? 15897600;
    this.publicHost = options.publicHost;
  }

  user(login: string): GitHubUser | undefined {
    return this.users.find((u) => u.login === login);
  }

  /** Issues a token (and, for GitHub Apps, a refresh token) for a user; one grant per (user, app). */
  issue(user: GitHubUser, scope: string, viaDevice: boolean): Record<string, string | number> {
    const now = this.clock.now();
    if (this.appKind === "oauth_app") {
      // docs.github.com "Authorizing OAuth apps" §2 (response): access_token, scope (comma-separated), token_type.
      const accessToken = randomToken("gho_");
      this.tokens.set(accessToken, { user, scope, expiresAt: null, refreshToken: null, viaDevice });
      return { access_token: accessToken, scope, token_type: "bearer" };
    }
    // docs.github.com "Generating a user access token for a GitHub App": ghu_ token expiring in 28800 s, ghr_
    // refresh token expiring in 15897600 s, scope always "" (GitHub Apps use permissions, not scopes).
    const accessToken = randomToken("ghu_");
    const refreshToken = randomToken("ghr_", 76);
    this.tokens.set(accessToken, {
      user,
      scope: "",
      expiresAt: now + this.accessTtl * 1000,
      refreshToken,
      viaDevice,
    });
    this.refreshTokens.set(refreshToken, { accessToken, expiresAt: now + this.refreshTtl * 1000 });
    return {
      access_token: accessToken,
      expires_in: this.accessTtl,
      refresh_token: refreshToken,
      refresh_token_expires_in: this.refreshTtl,
      scope: "",
      token_type: "bearer",
    };
  }

  /** A live token's record, or null (unknown, revoked, retired by a refresh, or expired). */
  live(accessToken: string): TokenRecord | null {
    const record = this.tokens.get(accessToken);
    if (!record) return null;
    if (record.expiresAt !== null && record.expiresAt <= this.clock.now()) return null;
    return record;
  }

  /** Deletes one token and its refresh token. */
  revokeToken(accessToken: string): void {
    const record = this.tokens.get(accessToken);
    if (!record) return;
    if (record.refreshToken) this.refreshTokens.delete(record.refreshToken);
    this.tokens.delete(accessToken);
  }

  /** Deletes the user's whole grant: every token this app holds for that user, refresh tokens included. */
  revokeGrant(login: string): void {
    for (const [token, record] of this.tokens)
      if (record.user.login === login) this.revokeToken(token);
  }

  /** Users with at least one live token. */
  grantCount(): number {
    const logins = new Set<string>();
    for (const [token, record] of this.tokens) if (this.live(token)) logins.add(record.user.login);
    return logins.size;
  }

  verificationUri(origin: string): string {
    return `${this.publicHost ?? origin}/login/device`;
  }
}
