/**
 * GitHub (github.com and GitHub Enterprise Server), OAuth Apps and GitHub Apps, as docs.github.com describes them:
 * - endpoints: "Authorizing OAuth apps", https://docs.github.com/apps/oauth-apps/building-oauth-apps/authorizing-oauth-apps
 *   (web flow at /login/oauth/authorize and /login/oauth/access_token, device flow at /login/device/code, no
 *   RFC 8414 metadata; GHES: the same paths on the host, REST API under /api/v3);
 * - the token endpoint answers form-encoded unless sent `Accept: application/json`, and errors with HTTP 200
 *   (same page, "Response", and "Troubleshooting OAuth app access token request errors",
 *   https://docs.github.com/apps/oauth-apps/maintaining-oauth-apps/troubleshooting-oauth-app-access-token-request-errors);
 * - scopes are comma-separated (same page, step 2 response: `scope=repo%2Cgist`);
 * - PKCE S256 is accepted on the web flow (same page, step 1 parameters `code_challenge`, `code_challenge_method`);
 * - GitHub App user tokens expire after 8 h with a single-use refresh token (`bad_refresh_token` once used),
 *   "Refreshing user access tokens", https://docs.github.com/apps/creating-github-apps/authenticating-with-a-github-app/refreshing-user-access-tokens;
 * - revocation: REST "Delete an app token", `DELETE /applications/{client_id}/token`, Basic client credentials,
 *   https://docs.github.com/rest/apps/oauth-applications#delete-an-app-token ("revoke a single token"): one
 *   credential's token, not "Delete an app authorization" (`/grant`), which "will also delete all OAuth tokens
 *   associated with the application for the user" (every other credential of the same app and person). The docs
 *   do not say whether a GitHub App token's refresh token goes with it; the engine refreshes an expired token first
 *   so a live token is deleted (GitHub takes only "a valid OAuth access_token");
 * - the account: REST "Get the authenticated user", `GET /user`, https://docs.github.com/rest/users/users;
 * - rate limits: 403/429 with `x-ratelimit-remaining: 0`, https://docs.github.com/rest/using-the-rest-api/rate-limits-for-the-rest-api.
 */

import {
  ACCESS_TOKEN_REJECTED,
  type Provider,
  type RevocationOutcome,
  type RevokeContext,
} from "../oauth/index.ts";
import { accountLookup, apiRequest, str } from "./api.ts";
import { clientOptions, type PresetEntry } from "./catalog.ts";
import { type PresetOptions, presetClient, selfHostedOrigin, staticServer } from "./define.ts";
import { ProviderApiError, ProviderConfigError } from "./errors.ts";
import { decodeOrigins, encodeOrigins, rebase } from "./origins.ts";

export interface GitHubOptions extends PresetOptions {
  /** GitHub Enterprise Server: `https://HOST` (HTTP only on loopback). Default github.com. */
  host?: string;
  /** `oauth_app` (tokens never expire) or `github_app` (8 h tokens, single-use refresh tokens). Default oauth_app. */
  app?: "oauth_app" | "github_app";
}

const API_VERSION = "2022-11-28";

export function github(options: GitHubOptions): Provider {
  const host = selfHostedOrigin(options.host, "GitHub Enterprise", "https://github.example.com");
  const web = host ?? "https://github.com";
  const api = host ? `${host}/api/v3` : "https://api.github.com";
  const app = options.app ?? "oauth_app";
  const client = presetClient("GitHub", options, "client_secret_post");
  const issuer = `${web}/login/oauth`;
  const at = (url: string) => rebase(url, options.origins);
  return {
    name: "github",
    displayName: host ? `GitHub Enterprise (${new URL(host).host})` : "GitHub",
    issuer,
    ref: {
      name: "github",
      options: {
        app,
        ...(host ? { host } : {}),
        ...encodeOrigins(options.origins),
      },
    },
    client,
    flows: ["authorization_code", "device"],
    defaultScope: options.scope ?? (app === "oauth_app" ? "read:user" : undefined),
    refresh:
      app === "github_app"
        ? {
            issued: "when_enabled",
            rotates: true,
            notes:
              "GitHub App user tokens expire after 8 hours (when the app's token expiration is on); each refresh token works once and lasts 6 months.",
          }
        : { issued: "never", rotates: false, notes: "OAuth App tokens do not expire." },
    // GitHub's OAuth docs name no `resource` parameter (RFC 8707): never send it.
    resourceIndicators: false,
    revocation: {
      kind: "custom",
      revoke: (context) =>
        revokeToken(at(`${api}/applications/${context.client.clientId}/token`), web, context),
    },
    server: staticServer({
      displayName: "GitHub",
      metadata: {
        issuer,
        authorization_endpoint: `${web}/login/oauth/authorize`,
        token_endpoint: `${web}/login/oauth/access_token`,
        device_authorization_endpoint: `${web}/login/device/code`,
      },
      quirks: {
        acceptJson: true,
        errorsWithStatus200: true,
        commaScopes: true,
        bearerTokenType: true,
        // The documented refusals that mean "this code or refresh token is gone": sign in again.
        errorCodes: { bad_refresh_token: "invalid_grant", bad_verification_code: "invalid_grant" },
      },
      pkce: "s256",
      origins: options.origins,
    }),
    async account(context) {
      const user = await accountLookup(at(`${api}/user`), context, {
        provider: "GitHub",
        headers: { "x-github-api-version": API_VERSION },
      });
      return {
        subject: str(user, "id"),
        login: str(user, "login"),
        name: str(user, "name"),
        email: str(user, "email"),
        avatarUrl: str(user, "avatar_url"),
      };
    },
  };
}

/** `DELETE /applications/{client_id}/grant`: revokes every token of the grant, refresh tokens included. */
async function revokeToken(
  url: string,
  web: string,
  context: RevokeContext,
): Promise<{ refreshToken: RevocationOutcome; accessToken: RevocationOutcome }> {
  const { client } = context;
  if (!client.clientSecret) {
    throw new ProviderConfigError(
      "provider_client_secret_missing",
      "Revoking a GitHub authorization needs the app's client secret (GitHub authenticates the call with it).",
    );
  }
  if (!context.accessToken) return { refreshToken: "absent", accessToken: "absent" };
  const basic = Buffer.from(`${client.clientId}:${client.clientSecret.reveal()}`).toString(
    "base64",
  );
  const answer = await apiRequest(url, {
    ...context,
    method: "DELETE",
    provider: "GitHub",
    what: "revocation",
    headers: {
      authorization: `Basic ${basic}`,
      "content-type": "application/json",
      "x-github-api-version": API_VERSION,
    },
    body: JSON.stringify({ access_token: context.accessToken.reveal() }),
  });
  const refresh: RevocationOutcome = context.refreshToken ? "revoked" : "absent";
  // 204: revoked. 404: GitHub no longer knows the access token (revoked, or expired by GitHub's clock). Without a
  // refresh token nothing is left to revoke. With one, GitHub may still honour it and no call revokes a refresh
  // token alone: ACCESS_TOKEN_REJECTED makes logout() refresh (stored) and try once more with the new token.
  if (answer.status === 204) return { refreshToken: refresh, accessToken: "revoked" };
  if (answer.status === 404 && !context.refreshToken)
    return { refreshToken: "absent", accessToken: "absent" };
  if (answer.status === 404) {
    throw new ProviderApiError(
      ACCESS_TOKEN_REJECTED,
      "GitHub no longer accepts this credential's access token, so it could not revoke it, and its refresh token " +
        `may still work. Remove the app's access at ${web}/settings/applications (GitHub Apps: ` +
        `${web}/settings/apps/authorizations), then delete the credential (agentauth vault delete).`,
      { status: answer.status },
    );
  }
  throw new ProviderApiError(
    answer.status === 401 ? "provider_client_refused" : "provider_revocation_failed",
    answer.status === 401
      ? "GitHub refused the app's client credentials for the revocation; check the client id and secret."
      : `GitHub refused the revocation (HTTP ${answer.status}). Try again, or revoke the app at ${web}/settings/applications.`,
    { status: answer.status },
  );
}

export const githubPreset: PresetEntry = {
  name: "github",
  displayName: "GitHub",
  summary: "github.com and GitHub Enterprise Server (--provider-host); OAuth Apps and GitHub Apps",
  flows: ["authorization_code", "device"],
  register:
    "An OAuth App or a GitHub App (Settings → Developer settings). Client id; the client secret for the browser flow, refresh and revocation; enable Device Flow for --device.",
  redirectUri: "http://127.0.0.1/callback (GitHub accepts any port on a loopback callback URL)",
  selfHosted: true,
  secretRequired: {
    when: "browser",
    why: "GitHub's token endpoint requires the app's client secret to redeem a browser sign-in's code",
  },
  refresh: "OAuth Apps: tokens never expire. GitHub Apps: 8 h tokens, single-use refresh tokens",
  revocation:
    "DELETE /applications/{client_id}/token (this credential's token; needs the client secret)",
  docs: "https://docs.github.com/apps/oauth-apps/building-oauth-apps/authorizing-oauth-apps",
  fromRef: (ref, client) =>
    github({
      ...clientOptions(client),
      host: ref.options?.host,
      app: ref.options?.app === "github_app" ? "github_app" : "oauth_app",
      origins: decodeOrigins(ref.options?.origins),
    }),
  matchIssuer: (issuer) =>
    issuer.origin === "https://github.com" && issuer.pathname.replace(/\/$/, "") === "/login/oauth"
      ? {}
      : undefined,
};
