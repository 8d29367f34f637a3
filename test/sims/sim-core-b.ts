/** The state and handle every one of helper B's simulators shares: users and who approves, authorization codes (single use, 10 minutes), grants under a refresh policy, device codes, fault queue, counters, the last token request, a simulated clock. */
import {
  DeviceStore,
  type Grant,
  GrantStore,
  type RefreshPolicy,
  type SimUser,
} from "./sim-grants-b.ts";
import {
  BoundedMap,
  type ClientAuth,
  type FaultKind,
  FaultQueue,
  randomToken,
  recordTokenRequest,
  SimClock,
  type SimRequest,
  type TokenRequestRecord,
} from "./sim-kit-b.ts";

export interface BaseOptions {
  clientId?: string;
  clientSecret?: string;
  users?: SimUser[];
  /** Login, email or id of the user who approves browser authorizations (default: the first user). */
  approveAs?: string;
  /** Browser authorizations answer error=access_denied. */
  deny?: boolean;
  /** Registered redirect URIs (exact match unless the provider documents otherwise). */
  redirectUris?: string[];
  accessTokenTtlSeconds?: number;
  deviceIntervalSeconds?: number;
  deviceCodeTtlSeconds?: number;
  /** Answer slow_down to a poll sooner than the interval (RFC 8628 §3.5); default true. */
  enforceDeviceInterval?: boolean;
}

export interface BaseSimulator {
  url: string;
  clientId: string;
  clientSecret: string;
  approveAs: string;
  deny: boolean;
  failNext(kind: FaultKind, count?: number): void;
  /** Moves the simulator's clock forward (token, code and refresh-token expiry) without waiting. */
  advanceTime(seconds: number): void;
  stats(): Record<string, number>;
  isActive(accessToken: string): boolean;
  isRefreshTokenActive(refreshToken: string): boolean;
  grantCount(): number;
  lastTokenRequest(): TokenRequestRecord | undefined;
  close(): Promise<void>;
}

export interface DeviceControls {
  approveDevice(userCode: string, user?: string): void;
  denyDevice(userCode: string): void;
  pendingDeviceCodes(): string[];
  slowDownNext(n?: number): void;
}

export interface CodeRecord {
  grant: Grant;
  redirectUri: string | undefined;
  challenge: string | undefined;
  method: string | undefined;
  exp: number;
  extra: Record<string, string>;
}

export class SimCore {
  readonly clock = new SimClock();
  readonly grants: GrantStore;
  readonly devices: DeviceStore;
  readonly codes = new BoundedMap<string, CodeRecord>();
  readonly faults = new FaultQueue();
  readonly users: SimUser[];
  readonly clientId: string;
  readonly clientSecret: string;
  readonly options: BaseOptions;
  readonly counters: Record<string, number> = {
    authorizations: 0,
    codeExchanges: 0,
    refreshGrants: 0,
    devicePolls: 0,
    deviceAuthorizations: 0,
    revocations: 0,
    accountCalls: 0,
    tokenRequests: 0,
  };
  lastToken: TokenRequestRecord | undefined;

  constructor(
    options: BaseOptions,
    policy: RefreshPolicy,
    defaults: { clientId: string; clientSecret: string; users: SimUser[] },
  ) {
    this.options = options;
    this.users = options.users ?? defaults.users;
    if (this.users.length === 0) throw new Error("a simulator needs at least one user");
    this.clientId = options.clientId ?? defaults.clientId;
    this.clientSecret = options.clientSecret ?? defaults.clientSecret;
    this.grants = new GrantStore(this.clock, policy);
    this.devices = new DeviceStore(this.clock, options.enforceDeviceInterval ?? true);
  }

  findUser(who: string): SimUser {
    const u = this.users.find((x) => x.login === who || x.email === who || x.id === who);
    if (!u) throw new Error(`unknown simulated user ${who}`);
    return u;
  }

  /** Authorization codes live 10 minutes at most and are single use (RFC 6749 §4.1.2). */
  issueCode(rec: Omit<CodeRecord, "exp">, prefix = "", ttl = 600): string {
    const code = randomToken(prefix, 24);
    this.codes.set(code, { ...rec, exp: this.clock.now() + ttl });
    return code;
  }

  /** Takes a code out (a second use finds nothing); undefined when unknown or expired. */
  takeCode(code: string | undefined): CodeRecord | undefined {
    if (code === undefined) return undefined;
    const rec = this.codes.get(code);
    this.codes.delete(code);
    return rec && rec.exp > this.clock.now() ? rec : undefined;
  }

  record(req: SimRequest, params: Record<string, string>, auth: ClientAuth): void {
    this.counters.tokenRequests!++;
    this.lastToken = recordTokenRequest(req, params, auth);
  }

  count(name: string): void {
    this.counters[name] = (this.counters[name] ?? 0) + 1;
  }

  /** The handle's common part; `approveAs`/`deny` are plain fields tests may change between steps. */
  handle<T extends object>(extra: T): BaseSimulator & DeviceControls & T {
    const handle: BaseSimulator & DeviceControls = {
      url: "",
      clientId: this.clientId,
      clientSecret: this.clientSecret,
      approveAs: this.options.approveAs ?? this.users[0]!.login,
      deny: this.options.deny ?? false,
      failNext: (kind, count = 1) => this.faults.push(kind, count),
      advanceTime: (s) => this.clock.advance(s),
      stats: () => ({ ...this.counters, liveGrants: this.grants.grantCount() }),
      isActive: (t) => this.grants.isActive(t),
      isRefreshTokenActive: (t) => this.grants.isRefreshUsable(t),
      grantCount: () => this.grants.grantCount(),
      lastTokenRequest: () => this.lastToken,
      close: async () => {},
      approveDevice: (code, user) =>
        this.devices.approve(code, this.findUser(user ?? handle.approveAs)),
      denyDevice: (code) => this.devices.deny(code),
      pendingDeviceCodes: () => this.devices.pendingUserCodes(),
      slowDownNext: (n = 1) => this.devices.slowDownNext(n),
    };
    return Object.assign(handle, extra);
  }
}

/** Scopes from a space-separated (RFC 6749 §3.3) or, where a provider allows it, comma-separated string. */
export function splitScopes(scope: string | null | undefined, commas = false): string[] {
  return (scope ?? "").split(commas ? /[ ,]+/ : / +/).filter(Boolean);
}
