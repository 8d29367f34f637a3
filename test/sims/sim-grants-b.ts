/** Grant, token and device-code bookkeeping shared by helper B's simulators: each provider chooses its documented refresh-token policy (fixed, rotating with old tokens kept, rotating with a reuse window, single use) and device-flow timing. */
import { BoundedMap, randomToken, type SimClock, userCode } from "./sim-kit-b.ts";

export interface SimUser {
  id: string;
  login: string;
  name: string;
  email: string;
  avatar: string;
  /** Provider-specific extras (Microsoft tid/oid, Notion workspace...). */
  extra?: Record<string, string>;
}

export interface Grant {
  id: string;
  user: SimUser;
  clientId: string;
  scopes: string[];
  createdAt: number;
  /** The current refresh token, when one was issued. */
  refreshToken?: string;
  /** OIDC nonce to repeat in ID tokens issued from the code (OIDC Core §3.1.3.6). */
  nonce?: string;
}

interface AccessRecord {
  grantId: string;
  exp: number;
}

interface RefreshRecord {
  grantId: string;
  /** Inactivity or fixed expiry of this token, seconds since epoch (undefined: never). */
  exp?: number;
  /** When it was replaced by a newer one (rotation). */
  retiredAt?: number;
}

export interface RefreshPolicy {
  /** A new refresh token on every refresh. */
  rotate: boolean;
  /**
   * What a replaced refresh token does afterwards: "until_expiry" (still works: Microsoft), a number of seconds
   * of grace (Atlassian's reuse interval), or 0 (dead at once: GitLab, Linear, Notion).
   */
  oldTokenValid: "until_expiry" | number;
  /** Lifetime of a refresh token from its issue (inactivity expiry), seconds; undefined: no expiry. */
  ttlSeconds?: number;
  /** Lifetime of the whole grant's refresh chain from the first login (Atlassian absolute expiry). */
  absoluteTtlSeconds?: number;
}

export type RefreshOutcome =
  | { ok: true; grant: Grant; refreshToken: string | undefined; rotated: boolean }
  | { ok: false; reason: "unknown" | "expired" | "retired" | "wrong_client" };

export class GrantStore {
  private readonly grants = new BoundedMap<string, Grant>();
  private readonly access = new BoundedMap<string, AccessRecord>();
  private readonly refresh = new BoundedMap<string, RefreshRecord>();

  private readonly clock: SimClock;
  private readonly policy: RefreshPolicy;
  constructor(clock: SimClock, policy: RefreshPolicy) {
    this.clock = clock;
    this.policy = policy;
  }

  create(user: SimUser, clientId: string, scopes: string[], nonce?: string): Grant {
    const grant: Grant = {
      id: randomToken("grant_", 9),
      user,
      clientId,
      scopes,
      createdAt: this.clock.now(),
      ...(nonce !== undefined ? { nonce } : {}),
    };
    this.grants.set(grant.id, grant);
    return grant;
  }

  issueAccess(grant: Grant, prefix: string, ttlSeconds: number): string {
    const token = randomToken(prefix, 32);
    this.access.set(token, { grantId: grant.id, exp: this.clock.now() + ttlSeconds });
    return token;
  }

  issueRefresh(grant: Grant, prefix: string): string {
    const token = randomToken(prefix, 32);
    const now = this.clock.now();
    let exp = this.policy.ttlSeconds !== undefined ? now + this.policy.ttlSeconds : undefined;
    if (this.policy.absoluteTtlSeconds !== undefined) {
      const abs = grant.createdAt + this.policy.absoluteTtlSeconds;
      exp = exp === undefined ? abs : Math.min(exp, abs);
    }
    this.refresh.set(token, { grantId: grant.id, ...(exp !== undefined ? { exp } : {}) });
    grant.refreshToken = token;
    return token;
  }

  /** The grant of a live access token (known, not expired, grant not revoked). */
  grantOfAccess(token: string): Grant | undefined {
    const rec = this.access.get(token);
    if (!rec || rec.exp <= this.clock.now()) return undefined;
    return this.grants.get(rec.grantId);
  }

  /** Uses a refresh token under the provider's policy; `prefix` names the new one when rotating. */
  useRefresh(token: string, clientId: string, prefix: string): RefreshOutcome {
    const rec = this.refresh.get(token);
    const grant = rec ? this.grants.get(rec.grantId) : undefined;
    if (!rec || !grant) return { ok: false, reason: "unknown" };
    if (grant.clientId !== clientId) return { ok: false, reason: "wrong_client" };
    const now = this.clock.now();
    if (rec.exp !== undefined && rec.exp <= now) return { ok: false, reason: "expired" };
    if (rec.retiredAt !== undefined) {
      const keep = this.policy.oldTokenValid;
      if (keep !== "until_expiry" && now - rec.retiredAt >= keep)
        return { ok: false, reason: "retired" };
    }
    if (!this.policy.rotate) return { ok: true, grant, refreshToken: undefined, rotated: false };
    if (rec.retiredAt === undefined) rec.retiredAt = now;
    if (this.policy.oldTokenValid === 0) this.refresh.delete(token);
    return { ok: true, grant, refreshToken: this.issueRefresh(grant, prefix), rotated: true };
  }

  grantOfRefresh(token: string): Grant | undefined {
    const rec = this.refresh.get(token);
    return rec ? this.grants.get(rec.grantId) : undefined;
  }

  /** Deletes a grant with every access and refresh token it issued. */
  revokeGrant(grantId: string): boolean {
    if (!this.grants.delete(grantId)) return false;
    for (const [t, r] of this.access) if (r.grantId === grantId) this.access.delete(t);
    for (const [t, r] of this.refresh) if (r.grantId === grantId) this.refresh.delete(t);
    return true;
  }

  /** Deletes every access token a grant issued (Doorkeeper revokes the old token record on refresh). */
  revokeAccessOfGrant(grantId: string): void {
    for (const [t, r] of this.access) if (r.grantId === grantId) this.access.delete(t);
  }

  /** Deletes one access token only. */
  revokeAccess(token: string): boolean {
    return this.access.delete(token);
  }

  isActive(accessToken: string): boolean {
    return this.grantOfAccess(accessToken) !== undefined;
  }

  /** Whether a refresh token would still be accepted (known, not expired, not retired past its grace). */
  isRefreshUsable(token: string): boolean {
    const rec = this.refresh.get(token);
    if (!rec || !this.grants.has(rec.grantId)) return false;
    const now = this.clock.now();
    if (rec.exp !== undefined && rec.exp <= now) return false;
    if (rec.retiredAt === undefined) return true;
    const keep = this.policy.oldTokenValid;
    return keep === "until_expiry" || now - rec.retiredAt < keep;
  }

  grantCount(): number {
    return this.grants.size;
  }

  /** Grants of one user and client (Google: a later consent reuses the existing grant). */
  findGrant(userId: string, clientId: string): Grant | undefined {
    for (const g of this.grants.values())
      if (g.user.id === userId && g.clientId === clientId) return g;
    return undefined;
  }
}

export interface DeviceRecord {
  deviceCode: string;
  userCode: string;
  clientId: string;
  scopes: string[];
  exp: number;
  interval: number;
  lastPollMs?: number;
  state: "pending" | "approved" | "denied" | "used";
  user?: SimUser;
}

export type PollOutcome =
  | { kind: "pending" | "slow_down" | "expired" | "denied" | "unknown" | "used" }
  | { kind: "approved"; record: DeviceRecord };

/** RFC 8628 device codes: user code approval, polling interval with slow_down (+5 s, §3.5), expiry, single use. */
export class DeviceStore {
  private readonly byDevice = new BoundedMap<string, DeviceRecord>();
  private readonly byUser = new BoundedMap<string, string>();
  private slowDowns = 0;

  private readonly clock: SimClock;
  private readonly enforceInterval: boolean;
  constructor(clock: SimClock, enforceInterval: boolean) {
    this.clock = clock;
    this.enforceInterval = enforceInterval;
  }

  create(
    clientId: string,
    scopes: string[],
    interval: number,
    ttl: number,
    prefix = "",
  ): DeviceRecord {
    const rec: DeviceRecord = {
      deviceCode: randomToken(prefix, 32),
      userCode: userCode(),
      clientId,
      scopes,
      exp: this.clock.now() + ttl,
      interval,
      state: "pending",
    };
    this.byDevice.set(rec.deviceCode, rec);
    this.byUser.set(rec.userCode, rec.deviceCode);
    return rec;
  }

  slowDownNext(n: number): void {
    this.slowDowns += n;
  }

  private byUserCode(code: string): DeviceRecord {
    const dc = this.byUser.get(code.toUpperCase());
    const rec = dc ? this.byDevice.get(dc) : undefined;
    if (rec?.state !== "pending") throw new Error(`no pending device authorization ${code}`);
    return rec;
  }

  approve(code: string, user: SimUser): void {
    const rec = this.byUserCode(code);
    rec.state = "approved";
    rec.user = user;
  }

  deny(code: string): void {
    this.byUserCode(code).state = "denied";
  }

  poll(deviceCode: string, clientId: string): PollOutcome {
    const rec = this.byDevice.get(deviceCode);
    if (!rec || rec.clientId !== clientId) return { kind: "unknown" };
    if (rec.state === "used") return { kind: "used" };
    if (rec.exp <= this.clock.now()) return { kind: "expired" };
    const nowMs = Date.now();
    const last = rec.lastPollMs;
    rec.lastPollMs = nowMs;
    if (this.slowDowns > 0) {
      this.slowDowns--;
      rec.interval += 5;
      return { kind: "slow_down" };
    }
    // RFC 8628 §3.5: polling faster than the interval answers slow_down and adds 5 s. 250 ms of slack keeps a
    // client that waits exactly `interval` seconds on a loaded machine from being punished for timer jitter.
    if (this.enforceInterval && last !== undefined && nowMs - last < rec.interval * 1000 - 250) {
      rec.interval += 5;
      return { kind: "slow_down" };
    }
    if (rec.state === "denied") return { kind: "denied" };
    if (rec.state === "pending") return { kind: "pending" };
    rec.state = "used";
    return { kind: "approved", record: rec };
  }

  pendingUserCodes(): string[] {
    return [...this.byDevice.values()].filter((r) => r.state === "pending").map((r) => r.userCode);
  }
}
