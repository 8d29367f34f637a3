/**
 * What the engine needs to know about an OAuth provider (GitHub, Slack, Google, a generic server, ...): where its
 * endpoints are, which flows it runs, how to read the account and revoke, and the wire quirks its token endpoint
 * has. The presets themselves are data in `src/providers/`; the engine only sees this contract, so it stays
 * provider-agnostic, and a stored credential names its provider (`ProviderRef`) so later refresh, revoke and
 * `agentauth token` calls rebuild it without flags.
 */

import type { Secret } from "../core/secret.ts";
import type { AccountInfo, ProviderRef } from "../vault/types.ts";
import type { OAuthClient } from "./client.ts";
import type { AuthorizationServer, DiscoveryOptions } from "./discovery.ts";
import type { RequestPolicy } from "./http.ts";
import type { RevocationOutcome } from "./revoke.ts";

export type { ProviderRef };

export type ProviderFlow = "authorization_code" | "device";

/** What the token endpoint answered, normalised by the provider's quirks; extra fields kept (`team`, `owner`, ...). */
export type TokenResponseBody = Record<string, unknown>;

/** Who signed in, as the provider's account API or ID token says. `subject` is the provider's stable user id. */
export interface ProviderAccount extends AccountInfo {
  subject?: string;
}

export interface AccountContext extends RequestPolicy {
  accessToken: Secret;
  /** The token response body (after quirks): Slack's `authed_user`/`team`, Notion's `owner`, ... */
  response: TokenResponseBody;
  /** Validated ID token claims, when the provider returned an ID token. */
  claims?: Record<string, unknown>;
}

export interface RevokeContext extends RequestPolicy {
  client: OAuthClient;
  accessToken?: Secret;
  refreshToken?: Secret;
}

/**
 * The code a custom `revoke` throws (any `AgentAuthError`) when the provider refused the access token as expired or
 * unknown while a refresh token is held: `logout()` then refreshes (storing the rotated tokens) and calls it once
 * more with the fresh token. Thrown again, it reaches the caller, whose message must say what to do.
 */
export const ACCESS_TOKEN_REJECTED = "access_token_rejected";

/** How a provider lets a grant be revoked. */
export type Revocation =
  /** RFC 7009 at the server metadata's `revocation_endpoint`. */
  | { kind: "rfc7009" }
  /** A provider-specific call (GitHub's `DELETE /applications/{client_id}/token`, Slack's `auth.revoke`). */
  | {
      kind: "custom";
      revoke(
        context: RevokeContext,
      ): Promise<{ refreshToken: RevocationOutcome; accessToken: RevocationOutcome }>;
    }
  /** No API: the person removes the app on the provider's page (`manageUrl`, when known). */
  | { kind: "none"; manageUrl?: string };

/** How a provider's refresh behaves, as its documentation states (shown by `agentauth providers`). */
export interface RefreshBehaviour {
  /** Whether tokens expire and a refresh token is issued at all (GitHub OAuth Apps: no). */
  issued: "always" | "never" | "when_asked" | "when_enabled";
  /** Whether each refresh returns a new refresh token and retires the old one. */
  rotates: boolean;
  /** Human text: lifetimes, what must be asked for (`offline_access`, `access_type=offline`). */
  notes?: string;
}

/**
 * Slack asks for a user token's scopes in `user_scope` (its `scope` is the bot's), comma-separated: the engine
 * then sends the requested scopes there, in that form, and no `scope`.
 */
export interface ScopeFormat {
  /** The parameter that carries the scopes. Default `scope`. */
  parameter?: string;
  /** Default " ". */
  separator?: string;
}

/** A configured provider: a preset's description plus the client registered with it. */
export interface Provider {
  /** The preset's name ("github", "google", "generic"). */
  readonly name: string;
  readonly displayName: string;
  /**
   * The issuer identifier: the vault key's `issuer`, and what an AHP/MCP resource lists in
   * `authorization_servers` (GitHub: `https://github.com/login/oauth`).
   */
  readonly issuer: string;
  /** What the vault stores to rebuild this provider later (no secrets). */
  readonly ref: ProviderRef;
  readonly client: OAuthClient;
  readonly flows: readonly ProviderFlow[];
  /** Scopes asked for when the caller names none. */
  readonly defaultScope?: string;
  /** Extra authorization request parameters the provider needs (`access_type=offline`, `audience`, ...). */
  readonly authorizationParams?: Readonly<Record<string, string>>;
  /** How scopes go on the authorization request, when not RFC 6749 §3.3's space-separated `scope`. */
  readonly scopeFormat?: ScopeFormat;
  readonly refresh: RefreshBehaviour;
  readonly revocation: Revocation;
  /**
   * Whether the server takes RFC 8707 `resource` parameters. Absent = true. False (every preset whose docs do not
   * mention RFC 8707; Microsoft Entra v2.0 refuses `resource` with AADSTS901002): the engine never sends
   * `resource`, though a login still stores the credential under it (the vault key).
   */
  readonly resourceIndicators?: boolean;
  /** The authorization server metadata (static or discovered), with the provider's quirks attached. */
  server(options?: DiscoveryOptions): Promise<AuthorizationServer>;
  /** Reads the signed-in account (REST `/user`, userinfo, the token response). Callers ignore its failures. */
  account?(context: AccountContext): Promise<ProviderAccount>;
}

/**
 * Rebuilds a provider from what a credential stored: its `ProviderRef` and client secret. `src/providers` supplies
 * one (`resolveProvider`); the engine takes it as an option so it never imports the presets.
 */
export type ProviderResolver = (ref: ProviderRef, client: OAuthClient) => Provider;
