/**
 * The authorization code flow (RFC 6749 §4.1) as OAuth 2.1 wants it: PKCE S256 always, a library-owned `state`,
 * the RFC 9207 `iss` check, the RFC 8707 `resource` on both legs, and `nonce` whenever an ID token may come back.
 */

import * as oauth from "oauth4webapi";
import { Secret } from "../core/secret.ts";
import { clientParts, type OAuthClient } from "./client.ts";
import { type AuthorizationServer, assertPkceS256 } from "./discovery.ts";
import { type DpopHandle, withDpopNonce } from "./dpop.ts";
import { AuthorizationResponseError, quote, toOAuthError } from "./errors.ts";
import { type RequestPolicy, requestOptions } from "./http.ts";
import type { PendingStore } from "./pending.ts";
import type { ScopeFormat } from "./provider.ts";
import { type TokenSet, toTokenSet } from "./tokens.ts";

/** What is remembered between the redirect and the callback. The verifier never leaves the process. */
export interface PendingAuthorization {
  issuer: string;
  clientId: string;
  redirectUri: string;
  codeVerifier: Secret;
  nonce?: string;
  scope?: string;
  resource?: string;
}

export interface StartAuthorizationOptions {
  as: AuthorizationServer;
  client: OAuthClient;
  redirectUri: string;
  scope?: string;
  resource?: string;
  pending: PendingStore<PendingAuthorization>;
  /** Extra authorization request parameters (`prompt`, `login_hint`, …); cannot override the protected ones. */
  extraParams?: Record<string, string>;
  /** Where and how the scopes go (Slack: `user_scope`, comma-separated); default `scope`, space-separated. */
  scopeFormat?: ScopeFormat;
}

export interface StartedAuthorization {
  url: URL;
  state: string;
}

const PROTECTED_PARAMS = new Set([
  "client_id",
  "redirect_uri",
  "response_type",
  "state",
  "code_challenge",
  "code_challenge_method",
  "nonce",
  "resource",
  "scope",
]);

export async function startAuthorization(
  options: StartAuthorizationOptions,
): Promise<StartedAuthorization> {
  const { as } = options;
  assertPkceS256(as, options.client);
  if (!as.authorization_endpoint) {
    throw new AuthorizationResponseError(
      "unsupported",
      `The authorization server ${as.issuer} has no authorization endpoint.`,
    );
  }
  const codeVerifier = oauth.generateRandomCodeVerifier();
  const wantsIdToken = options.scope?.split(" ").includes("openid") ?? false;
  const nonce = wantsIdToken ? oauth.generateRandomNonce() : undefined;
  const state = await options.pending.create({
    issuer: as.issuer,
    clientId: options.client.clientId,
    redirectUri: options.redirectUri,
    codeVerifier: new Secret(codeVerifier),
    nonce,
    scope: options.scope,
    resource: options.resource,
  });
  const url = new URL(as.authorization_endpoint);
  const scopeParameter = options.scopeFormat?.parameter ?? "scope";
  for (const [name, value] of Object.entries(options.extraParams ?? {})) {
    if (!PROTECTED_PARAMS.has(name) && name !== scopeParameter) url.searchParams.set(name, value);
  }
  url.searchParams.set("client_id", options.client.clientId);
  url.searchParams.set("redirect_uri", options.redirectUri);
  url.searchParams.set("response_type", "code");
  url.searchParams.set("code_challenge", await oauth.calculatePKCECodeChallenge(codeVerifier));
  url.searchParams.set("code_challenge_method", "S256");
  url.searchParams.set("state", state);
  if (nonce) url.searchParams.set("nonce", nonce);
  if (options.scope) {
    const scopes = options.scope.split(" ").filter(Boolean);
    url.searchParams.set(scopeParameter, scopes.join(options.scopeFormat?.separator ?? " "));
  }
  if (options.resource) url.searchParams.set("resource", options.resource);
  return { url, state };
}

export interface CompleteAuthorizationOptions extends RequestPolicy {
  as: AuthorizationServer;
  client: OAuthClient;
  /** The full redirect the browser landed on, or its query parameters. */
  callback: URL | URLSearchParams;
  pending: PendingStore<PendingAuthorization>;
  /** Ask for DPoP-bound tokens (RFC 9449 §5), proving this key at the token endpoint. */
  dpop?: DpopHandle;
}

/**
 * Checks the callback in the order that keeps attackers out: `state` first (unknown, replayed or expired → refused
 * before anything else happens), then `iss` (RFC 9207), then any error the server sent, then the code exchange.
 */
export async function completeAuthorization(
  options: CompleteAuthorizationOptions,
): Promise<TokenSet> {
  const params = options.callback instanceof URL ? options.callback.searchParams : options.callback;
  const pending = await options.pending.consume(params.get("state"));
  const { as } = options;
  if (pending.issuer !== as.issuer || pending.clientId !== options.client.clientId) {
    throw new AuthorizationResponseError(
      "state_invalid",
      "The authorization response belongs to a different server or client.",
    );
  }
  const { client, auth } = clientParts(options.client);
  let validated: URLSearchParams;
  try {
    validated = oauth.validateAuthResponse(as, client, params, oauth.skipStateCheck);
  } catch (error) {
    throw authResponseFailure(error);
  }
  try {
    const tokens = await withDpopNonce(options.dpop, async () => {
      const response = await oauth.authorizationCodeGrantRequest(
        as,
        client,
        auth,
        validated,
        pending.redirectUri,
        pending.codeVerifier.reveal(),
        {
          ...requestOptions(as.token_endpoint ?? as.issuer, options, as),
          additionalParameters: pending.resource ? { resource: pending.resource } : undefined,
          DPoP: options.dpop,
        },
      );
      return oauth.processAuthorizationCodeResponse(as, client, response, {
        expectedNonce: pending.nonce ?? oauth.expectNoNonce,
        requireIdToken: pending.nonce !== undefined,
      });
    });
    return toTokenSet(tokens, pending.scope);
  } catch (error) {
    throw toOAuthError(error, "authorization code exchange");
  }
}

/**
 * `access_denied` means the person declined, or the server refused the request itself after the person approved
 * (oidc-provider: "no scope was granted"). A server's own explanation is quoted and the request named as refused;
 * only a denial that says it was the person's, or says nothing, is told as theirs.
 */
function accessDeniedText(description: string | undefined): string {
  if (
    description &&
    !/\b(user|end-user|person|you)\b.*\b(denied|declined|cancel|abort)/i.test(description)
  ) {
    return (
      `The authorization server refused the request (${quote(description)}). If you approved it, the request ` +
      "itself was refused: check the scope asked for (--scope) and the client's registration at the server."
    );
  }
  return description
    ? `Access was denied at the authorization server (${quote(description)}). Sign in again and approve the request to continue.`
    : "Access was denied at the authorization server: the request was declined, or the server refused it. Sign in again and approve it; if you did approve, check the scope asked for and the client's registration.";
}

function authResponseFailure(error: unknown): Error {
  if (error instanceof oauth.AuthorizationResponseError) {
    const denied = error.error === "access_denied";
    return new AuthorizationResponseError(
      denied ? "access_denied" : "authorization_error",
      denied
        ? accessDeniedText(error.error_description)
        : `The authorization server returned an error (${quote(error.error, 64)}${error.error_description ? `: ${quote(error.error_description)}` : ""}).`,
      { cause: error, oauthError: error.error },
    );
  }
  if (error instanceof oauth.OperationProcessingError && /iss/.test(error.message)) {
    return new AuthorizationResponseError(
      "iss_mismatch",
      "The authorization response's iss parameter is missing or names another server (RFC 9207); refusing it as a possible mix-up attack.",
      { cause: error },
    );
  }
  return new AuthorizationResponseError(
    "authorization_response_invalid",
    "The authorization response is malformed.",
    { cause: error },
  );
}
