/**
 * Access tokens that are fresh when handed out. Refresh is proactive (before expiry, with a skew) and
 * single-flight per (subject, issuer, resource): one promise per key inside a process, and one lease in the
 * shared store across processes (a holder killed with kill -9 is replaced at once, see vault/lease-owner.ts). The
 * rotated refresh token is persisted (compare-and-swap) before the new access token is returned. `invalid_grant`
 * re-reads the store first (another writer may have stored a newer credential), then marks the credential
 * `login_required` once instead of retrying. What a kill can still lose is in docs/architecture.md.
 */

import * as oauth from "oauth4webapi";
import { type Logger, silentLogger } from "../core/log.ts";
import type { Secret } from "../core/secret.ts";
import { secret } from "../core/secret.ts";
import { leaseOwnerId } from "../vault/lease-owner.ts";
import type {
  CredentialInput,
  CredentialKey,
  CredentialRecord,
  CredentialStore,
} from "../vault/types.ts";
import { clientParts, type OAuthClient } from "./client.ts";
import { type DiscoveryOptions, discoverAuthorizationServer } from "./discovery.ts";
import { dpopHandle, withDpopNonce } from "./dpop.ts";
import { DiscoveryError, LoginRequiredError, TokenEndpointError, toOAuthError } from "./errors.ts";
import { requestOptions, sleep } from "./http.ts";
import type { ProviderResolver } from "./provider.ts";
import {
  decodeRefreshIntent,
  encodeRefreshIntent,
  type RefreshIntent,
  refreshTokenFingerprint,
} from "./refresh-intent.ts";
import { clientOf, providerOf } from "./stored-provider.ts";
import { accountFromClaims, expiresAtFrom } from "./tokens.ts";

export interface TokenRefresherOptions {
  store: CredentialStore;
  /**
   * The client to refresh with; default: the credential's stored registration (its `clientId`, and its sealed
   * client secret for a confidential client).
   */
  clientFor?: (record: CredentialRecord) => OAuthClient;
  /** Rebuilds the provider preset a credential names (`resolveProvider` from `agentauth/providers`). */
  providers?: ProviderResolver;
  /** Refresh this long before `expiresAt`. Default 60 s. */
  skewMs?: number;
  /** How long a refresher may hold the cross-process lease. Default 30 s (longer than a token request's timeout). */
  leaseTtlMs?: number;
  /** How often a process waiting on another's refresh re-reads the store. Default 25 ms. */
  pollMs?: number;
  /** Give up waiting for another process's refresh after this long. Default 45 s. */
  waitTimeoutMs?: number;
  discovery?: DiscoveryOptions;
  logger?: Logger;
  /** Told whenever a refresh changes a credential (for status notifications). */
  onChange?: (event: { kind: "refreshed" | "login_required"; record: CredentialRecord }) => void;
}

/** An access token minted for another resource of a grant (`TokenRefresher.mintForResource`). */
export interface MintedToken {
  accessToken: Secret;
  tokenType?: string;
  /** Epoch ms, when the server said. */
  expiresAt?: number;
  scopes: string[];
}

export class TokenRefresher {
  readonly #options: TokenRefresherOptions;
  readonly #inflight = new Map<string, Promise<CredentialRecord>>();
  readonly #locks = new Map<string, Promise<unknown>>();
  // Host, pid and start time: lets a contender on this host see that we were killed and take the lease at once.
  readonly #owner = leaseOwnerId();
  readonly #log: Logger;

  constructor(options: TokenRefresherOptions) {
    this.#options = options;
    this.#log = options.logger ?? silentLogger;
  }

  /** A valid access token for `key`, refreshing first if it is due. */
  async getAccessToken(key: CredentialKey): Promise<Secret> {
    const record = await this.getCredential(key);
    if (!record.tokens.accessToken)
      throw loginRequired(key, "the credential holds no access token");
    return record.tokens.accessToken;
  }

  /** The credential for `key` with a fresh access token. Throws LoginRequiredError when only a new login helps. */
  async getCredential(key: CredentialKey): Promise<CredentialRecord> {
    const record = await this.#options.store.get(key);
    const usable = this.#check(key, record);
    if (usable) return usable;
    return this.#singleFlight(key, () => this.#refreshAcrossProcesses(key));
  }

  /**
   * Refresh now even if the token is still fresh (e.g. after the resource server answered `invalid_token`).
   * `staleVersion`: the record version whose access token was refused; when the stored record is already newer
   * (a concurrent caller refreshed after the same refusal), it is returned without another refresh. Without it,
   * the version stored now is taken as the stale one.
   */
  async forceRefresh(key: CredentialKey, staleVersion?: number): Promise<CredentialRecord> {
    const stale = staleVersion ?? (await this.#options.store.get(key))?.version;
    return this.#singleFlight(key, () => this.#refreshAcrossProcesses(key, stale));
  }

  /**
   * An access token for `resource`, minted from the grant behind `key` by a refresh that names `resource`
   * (RFC 8707 §2.2: a grant may cover several resources), so one sign-in serves several resource servers. It runs
   * under `key`'s single-flight lock and cross-process lease, like a refresh of `key`, because it spends the same
   * refresh token: the rotated one is stored back on `key`'s record, whose own access token is left as it was.
   * Nothing is stored for `resource` (the caller decides where). A refusal marks nothing. Callers must only ask
   * for a resource the grant is known to cover: some servers (oidc-provider with rotation) consume the refresh
   * token before checking `resource`, so a refused request can retire the grant's refresh token.
   */
  mintForResource(key: CredentialKey, resource: string): Promise<MintedToken> {
    return this.#locked(keyId(key), () => this.#mintAcrossProcesses(key, resource));
  }

  async #mintAcrossProcesses(key: CredentialKey, resource: string): Promise<MintedToken> {
    const { store } = this.#options;
    const lease = `refresh:${keyId(key)}`;
    const deadline = Date.now() + (this.#options.waitTimeoutMs ?? 45_000);
    while (!(await store.acquireLease(lease, this.#owner, this.#options.leaseTtlMs ?? 30_000))) {
      if (Date.now() > deadline) {
        throw new TokenEndpointError(
          "refresh_wait_timeout",
          "Another process has been refreshing this credential for too long; try again.",
        );
      }
      await sleep(this.#options.pollMs ?? 25);
    }
    try {
      const record = await store.get(key);
      if (record?.status !== "active" || !record.tokens.refreshToken) {
        throw loginRequired(key, "no usable refresh token is stored");
      }
      await this.#recordIntent(lease, record);
      let response: oauth.TokenEndpointResponse;
      try {
        response = await this.#refreshGrant(record, resource);
      } catch (error) {
        throw toOAuthError(error, "token request for another resource of the grant");
      }
      const { id: _id, version, createdAt: _c, updatedAt: _u, ...input } = record;
      const newRefresh = secret(response.refresh_token);
      if (newRefresh) {
        const stored = await store.compareAndSwap(version, {
          ...input,
          tokens: { ...record.tokens, refreshToken: newRefresh },
        });
        if (!stored) {
          throw new TokenEndpointError(
            "refresh_conflict",
            "The credential changed while a token for another resource was minted; try again.",
          );
        }
      }
      this.#log.info("oauth.minted_for_resource", {
        issuer: record.issuer,
        from: key.resource,
        resource,
      });
      return {
        accessToken: secret(response.access_token) as Secret,
        tokenType: response.token_type,
        expiresAt: expiresAtOf(response),
        scopes: scopesOf(response, record.scopes),
      };
    } finally {
      await store.releaseLease(lease, this.#owner);
    }
  }

  /** One refresh-token spender per key at a time in this process (the lease covers other processes). */
  async #locked<T>(id: string, run: () => Promise<T>): Promise<T> {
    const previous = this.#locks.get(id) ?? Promise.resolve();
    const next = previous.catch(() => {}).then(run);
    this.#locks.set(id, next);
    try {
      return await next;
    } finally {
      if (this.#locks.get(id) === next) this.#locks.delete(id);
    }
  }

  #singleFlight(
    key: CredentialKey,
    run: () => Promise<CredentialRecord>,
  ): Promise<CredentialRecord> {
    const id = keyId(key);
    const existing = this.#inflight.get(id);
    if (existing) return existing;
    const promise = this.#locked(id, run).finally(() => this.#inflight.delete(id));
    this.#inflight.set(id, promise);
    return promise;
  }

  /** Returns the record when it can be used as is, undefined when it needs a refresh, or throws. */
  #check(
    key: CredentialKey,
    record: CredentialRecord | undefined,
    staleVersion?: number,
  ): CredentialRecord | undefined {
    if (!record) throw loginRequired(key, "no credential is stored");
    if (record.status === "login_required")
      throw loginRequired(key, "the refresh token was refused earlier");
    if (staleVersion !== undefined && record.version === staleVersion) return undefined;
    if (staleVersion !== undefined) return record;
    return this.#fresh(record) ? record : undefined;
  }

  #fresh(record: CredentialRecord): boolean {
    if (!record.tokens.accessToken) return false;
    if (record.expiresAt === undefined) return true;
    return record.expiresAt - (this.#options.skewMs ?? 60_000) > Date.now();
  }

  async #refreshAcrossProcesses(
    key: CredentialKey,
    staleVersion?: number,
  ): Promise<CredentialRecord> {
    const { store } = this.#options;
    const lease = `refresh:${keyId(key)}`;
    const deadline = Date.now() + (this.#options.waitTimeoutMs ?? 45_000);
    for (;;) {
      if (await store.acquireLease(lease, this.#owner, this.#options.leaseTtlMs ?? 30_000)) {
        try {
          // Re-read under the lease: another process may have refreshed while we queued.
          const record = await store.get(key);
          const usable = this.#check(key, record, staleVersion);
          if (usable) return usable;
          const interrupted = await this.#recordIntent(lease, record as CredentialRecord);
          return await this.#refresh(record as CredentialRecord, interrupted);
        } finally {
          await store.releaseLease(lease, this.#owner);
        }
      }
      await sleep(this.#options.pollMs ?? 25);
      const usable = this.#check(key, await store.get(key), staleVersion);
      if (usable) return usable;
      if (Date.now() > deadline) {
        throw new TokenEndpointError(
          "refresh_wait_timeout",
          "Another process has been refreshing this credential for too long; try again.",
        );
      }
    }
  }

  /**
   * Writes our intent on the lease and returns the intent a previous holder left there, if it never finished
   * (it was killed, or its lease ran out) and it sent the refresh token we are about to send.
   */
  async #recordIntent(lease: string, record: CredentialRecord): Promise<RefreshIntent | undefined> {
    const { store } = this.#options;
    const fingerprint = refreshTokenFingerprint(record.tokens.refreshToken);
    const previous = await store.getLease?.(lease);
    const left = previous?.owner === this.#owner ? decodeRefreshIntent(previous.note) : undefined;
    await store.setLeaseNote?.(
      lease,
      this.#owner,
      encodeRefreshIntent({ at: Date.now(), refreshToken: fingerprint }),
    );
    // Our own note from an earlier refresh of this key would have been released with the lease, so a note under
    // our owner id here was inherited by a takeover (the row keeps its note): a predecessor's unfinished intent.
    return left?.refreshToken === fingerprint ? left : undefined;
  }

  /** One refresh-token grant request (RFC 6749 §6) for `resource`; errors are the caller's to map. */
  async #refreshGrant(
    record: CredentialRecord,
    resource: string | undefined,
  ): Promise<oauth.TokenEndpointResponse> {
    const given = this.#options.clientFor?.(record);
    const provider = providerOf(record, { client: given, providers: this.#options.providers });
    const as = provider
      ? await provider.server(this.#options.discovery)
      : await discoverAuthorizationServer(record.issuer, this.#options.discovery);
    if (provider?.resourceIndicators === false) {
      // The server takes no RFC 8707 `resource` (Entra v2.0 refuses it): the record's resource is only its vault
      // key, and a token for another resource cannot be asked for at all.
      if (resource && resource !== record.resource) {
        throw new DiscoveryError(
          "resource_indicators_unsupported",
          `${provider.displayName} does not support resource indicators (RFC 8707), so a token for ${resource} ` +
            "cannot be minted from this grant; sign in for that resource on its own.",
        );
      }
      resource = undefined;
    }
    const { client, auth } = clientParts(provider?.client ?? clientOf(record, given));
    // RFC 9449 §5: tokens bound to a key are refreshed with a proof of that key, or a public client's refresh fails.
    const dpop = record.tokens.dpopKey ? await dpopHandle(record.tokens.dpopKey) : undefined;
    return withDpopNonce(dpop, async () => {
      const request = await oauth.refreshTokenGrantRequest(
        as,
        client,
        auth,
        (record.tokens.refreshToken as Secret).reveal(),
        {
          ...requestOptions(as.token_endpoint ?? as.issuer, {}, as),
          additionalParameters: resource ? { resource } : undefined,
          DPoP: dpop,
        },
      );
      return oauth.processRefreshTokenResponse(as, client, request);
    });
  }

  async #refresh(
    record: CredentialRecord,
    interrupted?: RefreshIntent,
    retried = false,
  ): Promise<CredentialRecord> {
    const key = { subject: record.subject, issuer: record.issuer, resource: record.resource };
    if (!record.tokens.refreshToken)
      throw await this.#markLoginRequired(record, "no refresh token is stored");
    let response: oauth.TokenEndpointResponse;
    try {
      // RFC 8707 §2.2: name the resource on refresh too, or the server may mint a token for another audience.
      response = await this.#refreshGrant(record, record.resource);
    } catch (error) {
      const mapped = toOAuthError(error, "token refresh");
      if (mapped instanceof TokenEndpointError && mapped.oauthError === "invalid_grant") {
        // Another writer (a new login, a refresher whose lease outlived ours) may have stored a newer credential
        // since we read ours: the refused token is then simply stale. Only give up when ours is still the latest.
        const current = await this.#options.store.get(key);
        if (current && current.version !== record.version && current.status === "active") {
          if (this.#fresh(current)) return current;
          if (!retried) return this.#refresh(current, undefined, true);
        }
        const why = interrupted
          ? `a refresh started at ${new Date(interrupted.at).toISOString()} was interrupted (its process ` +
            "ended after sending this refresh token and before storing the server's answer), and the server " +
            "has since retired the token (invalid_grant)"
          : "the authorization server refused the refresh token (invalid_grant)";
        throw await this.#markLoginRequired(current ?? record, why);
      }
      this.#log.warn("oauth.refresh_failed", {
        issuer: record.issuer,
        resource: record.resource,
        error: mapped,
      });
      throw mapped;
    }
    const claims = response.id_token ? oauth.getValidatedIdTokenClaims(response) : undefined;
    const next: CredentialInput = {
      ...key,
      clientId: record.clientId,
      ...(record.provider ? { provider: record.provider } : {}),
      tokens: {
        accessToken: secret(response.access_token),
        // RFC 6749 §6: the server may keep the old refresh token; keep ours unless it sent a new one.
        refreshToken: secret(response.refresh_token) ?? record.tokens.refreshToken,
        idToken: secret(response.id_token) ?? record.tokens.idToken,
        tokenType: response.token_type,
        ...(record.tokens.clientSecret ? { clientSecret: record.tokens.clientSecret } : {}),
        // The new tokens are bound to the key the refresh proved (RFC 9449 §5).
        ...(record.tokens.dpopKey ? { dpopKey: record.tokens.dpopKey } : {}),
      },
      expiresAt: expiresAtOf(response),
      scopes: scopesOf(response, record.scopes),
      account: claims
        ? { ...record.account, ...definedOnly(accountFromClaims(claims)) }
        : record.account,
      status: "active",
    };
    const stored = await this.#options.store.compareAndSwap(record.version, next);
    if (!stored) {
      // Our lease expired mid-request, or a new login was stored meanwhile: if what is stored now is usable, it
      // is the newer credential and wins; otherwise the tokens we hold may already be superseded.
      const current = await this.#options.store.get(key);
      if (current?.status === "active" && this.#fresh(current)) return current;
      throw new TokenEndpointError(
        "refresh_conflict",
        "The credential changed while it was being refreshed; try again.",
      );
    }
    this.#log.info("oauth.refreshed", {
      issuer: record.issuer,
      resource: record.resource,
      subject: record.subject,
    });
    this.#options.onChange?.({ kind: "refreshed", record: stored });
    return stored;
  }

  async #markLoginRequired(record: CredentialRecord, reason: string): Promise<LoginRequiredError> {
    const { id: _id, version, createdAt: _c, updatedAt: _u, ...input } = record;
    const stored = await this.#options.store.compareAndSwap(version, {
      ...input,
      status: "login_required",
    });
    this.#log.warn("oauth.login_required", {
      issuer: record.issuer,
      resource: record.resource,
      reason,
    });
    if (stored) this.#options.onChange?.({ kind: "login_required", record: stored });
    return loginRequired(record, reason);
  }
}

function keyId(key: CredentialKey): string {
  return JSON.stringify([key.subject, key.issuer, key.resource]);
}

function loginRequired(key: CredentialKey, reason: string): LoginRequiredError {
  const target = key.resource ? ` for ${key.resource}` : "";
  return new LoginRequiredError(
    "login_required",
    `Sign in again at ${key.issuer}${target}: ${reason}.`,
  );
}

function definedOnly<T extends object>(value: T): Partial<T> {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as Partial<T>;
}

/** When a token response's access token expires (`expires_in` is optional, RFC 6749 §5.1; clamped to 10 years). */
function expiresAtOf(response: oauth.TokenEndpointResponse): number | undefined {
  return expiresAtFrom(response.expires_in);
}

/** The granted scopes: the response's when it names them (RFC 6749 §5.1), else what was held before. */
function scopesOf(response: oauth.TokenEndpointResponse, held: string[]): string[] {
  return response.scope ? response.scope.split(" ").filter(Boolean) : held;
}
