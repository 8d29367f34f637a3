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
  type AuthorizationServer,
  assertSecureUrl,
  completeAuthorization,
  credentialFromTokens,
  type DiscoveryOptions,
  discoverAuthorizationServer,
  LoginRequiredError,
  startAuthorization,
  TokenRefresher,
  type TokenSet,
} from "../../oauth/index.ts";
import type { CredentialKey, CredentialRecord, CredentialStore } from "../../vault/index.ts";
import type { OAuthProviderConfig, PendingCall, PendingCallAuthorization } from "./options.ts";
import { alreadyTaken, type PendingAuthorizations } from "./pending-calls.ts";

export type TokenLookup =
  | { kind: "token"; accessToken: Secret; secrets: string[] }
  | { kind: "login" }
  | { kind: "error"; message: string };

/** Who signed in, as far as the tool can read it (ID token claims, then the provider's `account` hook). */
export interface ConnectedAccount {
  subject?: string;
  name?: string;
  email?: string;
}

export type Exchange =
  | { kind: "authorized"; account: ConnectedAccount }
  | { kind: "denied" }
  | { kind: "failed"; message: string };

export interface ProviderAuthOptions {
  providers: Record<string, OAuthProviderConfig>;
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
      // Refresh with the client the tokens were issued to (a confidential one authenticates).
      clientFor: (record) =>
        Object.values(options.providers).find(
          (p) => p.client.clientId === record.clientId && sameIssuer(p.issuer, record.issuer),
        )?.client ?? { clientId: record.clientId },
    });
  }

  /** What the consent page shows about a provider. */
  describe(provider: string): { name: string; scopes: string[] } {
    const config = this.#provider(provider);
    return {
      name: this.displayName(provider),
      scopes: (config.scope ?? "").split(" ").filter(Boolean),
    };
  }

  displayName(provider: string): string {
    return this.#provider(provider).displayName ?? provider;
  }

  /** A fresh access token for the user, `login` when only the person can help, or a transient error. */
  async token(provider: string, userId: string, force = false): Promise<TokenLookup> {
    try {
      const key = await this.#key(provider, userId);
      const record = force
        ? await this.#refresher.forceRefresh(key)
        : await this.#refresher.getCredential(key);
      if (!record.tokens.accessToken) return { kind: "login" };
      return { kind: "token", accessToken: record.tokens.accessToken, secrets: secretsOf(record) };
    } catch (error) {
      if (error instanceof LoginRequiredError) return { kind: "login" };
      this.#options.logger.warn("rap.oauth.token_unavailable", { provider, error });
      return {
        kind: "error",
        message: `Access to ${this.displayName(provider)} could not be renewed right now (the sign-in service did not answer as expected). Try again in a moment.`,
      };
    }
  }

  /** The URL the person must visit; its `state` is bound to `call`. HTTPS unless the server is on loopback. */
  async authorizationUrl(call: PendingCall): Promise<URL> {
    const config = this.#provider(call.provider);
    const as = await this.#server(call.provider);
    const { url } = await startAuthorization({
      as,
      client: config.client,
      redirectUri: this.#options.redirectUri(),
      scope: config.scope,
      resource: config.resource,
      extraParams: config.extraParams,
      pending: this.#options.pending.bind(call),
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
    const config = this.#provider(call.provider);
    const log = this.#options.logger;
    try {
      const as = await this.#server(call.provider);
      const tokens = await completeAuthorization({
        as,
        client: config.client,
        callback: params,
        pending: alreadyTaken(state, entry.authorization),
      });
      const account = await this.#account(call.provider, tokens);
      const record = credentialFromTokens(tokens, {
        subject: call.userId,
        issuer: as.issuer,
        resource: config.resource ?? "",
        clientId: config.client.clientId,
      });
      // The vault's display fields say which provider account this user_id is now bound to (issue 8 §1.2).
      record.account = {
        ...record.account,
        ...(account.name ? { name: account.name } : {}),
        ...(account.email ? { email: account.email } : {}),
        label: account.email ?? account.name ?? account.subject ?? record.account.label,
      };
      await this.#options.store.put(record);
      log.info("rap.oauth.authorized", {
        provider: call.provider,
        user_id: call.userId,
        account_sub: account.subject,
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
      const name = this.displayName(call.provider);
      return {
        kind: "failed",
        message: `Signing in to ${name} did not complete (${describe(error)}). Ask again to get a new sign-in link.`,
      };
    }
  }

  /** ID token claims first; the provider's `account` hook (e.g. a /me endpoint) fills in or overrides them. */
  async #account(provider: string, tokens: TokenSet): Promise<ConnectedAccount> {
    const fromToken: ConnectedAccount = {
      subject: tokens.subject,
      name: tokens.account.name,
      email: tokens.account.email,
    };
    const hook = this.#provider(provider).account;
    if (!hook) return fromToken;
    try {
      const read = await hook(tokens.accessToken);
      return {
        subject: read?.subject ?? fromToken.subject,
        name: read?.name ?? fromToken.name,
        email: read?.email ?? fromToken.email,
      };
    } catch (error) {
      this.#options.logger.warn("rap.oauth.account_unreadable", { provider, error });
      return fromToken;
    }
  }

  async #key(provider: string, userId: string): Promise<CredentialKey> {
    const as = await this.#server(provider);
    return {
      subject: userId,
      issuer: as.issuer,
      resource: this.#provider(provider).resource ?? "",
    };
  }

  #server(provider: string): Promise<AuthorizationServer> {
    return discoverAuthorizationServer(this.#provider(provider).issuer, this.#options.discovery);
  }

  #provider(provider: string): OAuthProviderConfig {
    const config = this.#options.providers[provider];
    if (!config) throw new TypeError(`unknown provider ${provider}`);
    return config;
  }
}

/** A cause the person can act on, without the server's raw text (which may echo request details). */
function describe(error: unknown): string {
  const code = (error as { code?: unknown }).code;
  switch (code) {
    case "invalid_grant":
      return "the sign-in code was invalid or had expired";
    case "iss_mismatch":
      return "the response came from an unexpected server";
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

function secretsOf(record: CredentialRecord): string[] {
  const { accessToken, refreshToken, idToken } = record.tokens;
  return [accessToken, refreshToken, idToken].flatMap((s) => (s ? [s.reveal()] : []));
}

function sameIssuer(a: string, b: string): boolean {
  return a.replace(/\/+$/, "") === b.replace(/\/+$/, "");
}
