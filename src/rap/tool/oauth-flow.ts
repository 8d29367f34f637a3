/**
 * The tool's OAuth client side (RAP §OAuth): a valid token for (user_id, provider) from the vault, refreshed when
 * due; otherwise an authorization URL (PKCE S256, a fresh `state` bound to the pending call); and, at the redirect
 * endpoint, the code exchange and storing the tokens under the user. Every failure becomes a typed outcome whose
 * message is safe to show; the raw errors are only logged (redacted).
 */

import type { Logger } from "../../core/log.ts";
import type { Secret } from "../../core/secret.ts";
import {
  AuthorizationResponseError,
  assertSecureUrl,
  completeAuthorization,
  type DiscoveryOptions,
  LoginRequiredError,
  type LogoutResult,
  logout,
  RateLimitedError,
  startAuthorization,
  TokenRefresher,
} from "../../oauth/index.ts";
import type { CredentialRecord, CredentialStore } from "../../vault/index.ts";
import type { PendingCall, PendingCallAuthorization } from "./options.ts";
import { alreadyTaken, type PendingAuthorizations } from "./pending-calls.ts";
import {
  type ConnectedAccount,
  connectedAccount,
  credentialFor,
  credentialKey,
  type ToolProvider,
} from "./providers.ts";
import { configuredClient, configuredResolver } from "./stored-credentials.ts";

export type { ConnectedAccount };

export type TokenLookup =
  | {
      kind: "token";
      accessToken: Secret;
      secrets: string[];
      /** The scopes the user's grant holds (the vault record's): what a step-up must keep. */
      scopes: string[];
      /** The vault record's version: a forced refresh after this token is refused names it (single-flight). */
      version: number;
    }
  | { kind: "login" }
  | { kind: "error"; message: string };

export type Exchange =
  | { kind: "authorized"; account: ConnectedAccount }
  | { kind: "denied" }
  | { kind: "failed"; message: string };

export interface ProviderAuthOptions {
  providers: ReadonlyMap<string, ToolProvider>;
  store: CredentialStore;
  pending: PendingAuthorizations;
  redirectUri: () => string;
  discovery?: DiscoveryOptions;
  logger: Logger;
}

export class ProviderAuth {
  readonly #options: ProviderAuthOptions;
  readonly #refresher: TokenRefresher;

  constructor(options: ProviderAuthOptions) {
    this.#options = options;
    this.#refresher = new TokenRefresher({
      store: options.store,
      discovery: options.discovery,
      logger: options.logger,
      // A preset's credential names it (ProviderRef): refresh rebuilds it, quirks and all, preferring the tool's
      // configured preset and client (a rotated secret wins over the copy sealed in the record).
      providers: configuredResolver(options.providers),
      clientFor: (record) => configuredClient(options.providers, record),
    });
  }

  /** What the consent page shows about a provider. */
  describe(provider: string): { name: string; scopes: string[] } {
    const entry = this.#provider(provider);
    // Slack and GitHub also write scopes comma-separated; the page lists them one by one either way.
    const scopes = (entry.scope ?? "").split(/[\s,]+/).filter(Boolean);
    return { name: entry.displayName, scopes: [...new Set(scopes)] };
  }

  displayName(provider: string): string {
    return this.#provider(provider).displayName;
  }

  /**
   * A fresh access token for the user, `login` when only the person can help, or a transient error. `force` with
   * `refusedVersion` (the `version` of the lookup whose token the API refused): concurrent refusals of one token
   * make one refresh, the later callers get its result.
   */
  async token(
    provider: string,
    userId: string,
    force = false,
    refusedVersion?: number,
  ): Promise<TokenLookup> {
    try {
      const key = await credentialKey(this.#provider(provider), userId);
      const record = force
        ? await this.#refresher.forceRefresh(key, refusedVersion)
        : await this.#refresher.getCredential(key);
      if (!record.tokens.accessToken) return { kind: "login" };
      return {
        kind: "token",
        accessToken: record.tokens.accessToken,
        secrets: secretsOf(record),
        scopes: [...record.scopes],
        version: record.version,
      };
    } catch (error) {
      if (error instanceof LoginRequiredError) return { kind: "login" };
      this.#options.logger.warn("rap.oauth.token_unavailable", { provider, error });
      const name = this.displayName(provider);
      // A rate limit is the provider asking us to wait (GitHub 403 + x-ratelimit-remaining: 0, Slack 429 +
      // Retry-After): nothing is wrong with the grant, so no new sign-in, just a later retry.
      if (error instanceof RateLimitedError) {
        return {
          kind: "error",
          message: `${name} is limiting requests right now (rate limit), so access could not be renewed. Retry ${retryWhen(error.retryAfterMs)}; you do not need to sign in again.`,
        };
      }
      return {
        kind: "error",
        message: `Access to ${name} could not be renewed right now (the sign-in service did not answer as expected). Try again in a moment.`,
      };
    }
  }

  /**
   * The URL the person must visit; its `state` is bound to `call` and to the browser whose binding cookie hashes to
   * `browser`. HTTPS unless the server is on loopback. `scope` replaces the provider's configured scope (a step-up
   * after `insufficient_scope`).
   */
  async authorizationUrl(call: PendingCall, browser: string, scope?: string): Promise<URL> {
    const entry = this.#provider(call.provider);
    const { url } = await startAuthorization({
      as: await entry.server(),
      client: entry.client,
      redirectUri: this.#options.redirectUri(),
      scope: scope ?? entry.scope,
      resource: entry.resource || undefined,
      extraParams: entry.extraParams,
      scopeFormat: entry.scopeFormat,
      pending: this.#options.pending.bind(call, browser),
    });
    assertSecureUrl(url, "authorization URL");
    return url;
  }

  /** Exchanges the code of an already-taken pending authorization and stores the tokens under the user. */
  async exchange(
    state: string,
    entry: PendingCallAuthorization,
    params: URLSearchParams,
  ): Promise<Exchange> {
    const { call } = entry;
    const provider = this.#provider(call.provider);
    const log = this.#options.logger;
    try {
      const tokens = await completeAuthorization({
        as: await provider.server(),
        client: provider.client,
        callback: params,
        pending: alreadyTaken(state, entry.authorization),
      });
      const account = await connectedAccount(provider, tokens, log);
      const key = await credentialKey(provider, call.userId);
      await this.#options.store.put(credentialFor(provider, tokens, key, account));
      log.info("rap.oauth.authorized", {
        provider: call.provider,
        user_id: call.userId,
        account_sub: account.subject,
        account_login: account.login,
        account_name: account.name,
        account_email: account.email,
      });
      return { kind: "authorized", account };
    } catch (error) {
      if (error instanceof AuthorizationResponseError && error.code === "access_denied") {
        log.info("rap.oauth.denied", { provider: call.provider, user_id: call.userId });
        return { kind: "denied" };
      }
      log.warn("rap.oauth.exchange_failed", { provider: call.provider, error });
      return {
        kind: "failed",
        message: `Signing in to ${provider.displayName} did not complete (${describe(error)}). Ask again to get a new sign-in link.`,
      };
    }
  }

  /**
   * Removes a user's connection: revokes the grant at the provider (a preset's own call, e.g. GitHub's
   * `DELETE /applications/{client_id}/token` or Slack's `auth.revoke`; RFC 7009 otherwise) with the tool's
   * configured client (the record's own when it was issued elsewhere), then deletes the credential. A failed revocation keeps it, so the caller can retry.
   */
  async disconnect(provider: string, userId: string): Promise<LogoutResult> {
    const entry = this.#provider(provider);
    const key = await credentialKey(entry, userId);
    // The configured client when the record was issued to it, else the record's own (review #1).
    const stored = await this.#options.store.get(key);
    const result = await logout({
      store: this.#options.store,
      key,
      client: stored ? configuredClient(this.#options.providers, stored) : entry.client,
      providers: configuredResolver(this.#options.providers),
      discovery: this.#options.discovery,
    });
    this.#options.logger.info("rap.oauth.disconnected", {
      provider,
      user_id: userId,
      found: result.found,
      revoked: result.revoked,
      deleted: result.deleted,
      error: result.error,
    });
    return result;
  }

  #provider(provider: string): ToolProvider {
    const entry = this.#options.providers.get(provider);
    if (!entry) throw new TypeError(`unknown provider ${provider}`);
    return entry;
  }
}

/** A cause the person can act on, without the server's raw text (which may echo request details). */
function describe(error: unknown): string {
  const code = (error as { code?: unknown }).code;
  switch (code) {
    case "invalid_grant":
      return "the sign-in code was invalid or had expired";
    case "invalid_response":
      return "the sign-in service answered with something that is not a token response";
    case "iss_mismatch":
      return "the response came from an unexpected server";
    case "rate_limited":
      return "the sign-in service is limiting requests; wait a minute first";
    case "network_error":
    case "timeout":
    case "server_error":
      return "the sign-in service could not be reached";
    case "authorization_error":
      return "the sign-in service reported an error";
    default:
      return "the sign-in could not be verified";
  }
}

/** What a result must never contain: the user's tokens, and the client secret sealed with them. */
function secretsOf(record: CredentialRecord): string[] {
  const { accessToken, refreshToken, idToken, clientSecret } = record.tokens;
  return [accessToken, refreshToken, idToken, clientSecret].flatMap((s) => (s ? [s.reveal()] : []));
}

/** "in 30 s", "in 2 min", "in a minute": when a rate-limited call may be retried. */
function retryWhen(ms: number | undefined): string {
  if (ms === undefined) return "in a minute";
  const seconds = Math.max(1, Math.ceil(ms / 1000));
  return seconds < 120 ? `in ${seconds} s` : `in ${Math.ceil(seconds / 60)} min`;
}
