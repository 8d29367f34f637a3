/**
 * Slack (OAuth v2, user tokens), as docs.slack.dev (formerly api.slack.com) describes it:
 * - endpoints: "Installing with OAuth", https://docs.slack.dev/authentication/installing-with-oauth (authorize at
 *   https://slack.com/oauth/v2/authorize, exchange at https://slack.com/api/oauth.v2.access; no RFC 8414 metadata);
 * - user scopes go in `user_scope`, not `scope` (same page, "Asking for scopes": `scope` asks for the bot's
 *   scopes, `user_scope` for a user token acting as the person who approves). An agent acts for a person, so this
 *   preset asks for user scopes: its `scopeFormat` makes the engine send the requested scopes (the preset's
 *   `scope` option, the default, or a scope given to `login()`) as `user_scope`, comma-separated, and no `scope`
 *   (no bot token is minted);
 * - scopes are comma-separated in the authorize URL and in answers (same page);
 * - the user token is nested in `authed_user` with `token_type: "user"`, the top level holds a bot token only when
 *   bot scopes were asked for (oauth.v2.access, https://docs.slack.dev/reference/methods/oauth.v2.access,
 *   "Example response"): quirks nestedTokens + bearerTokenType;
 * - every answer is HTTP 200, failures are `{"ok": false, "error": "invalid_code"}` (same method page, "Errors";
 *   "Web API basics", https://docs.slack.dev/apis/web-api/): quirk okFalseErrors, with the refusals that mean
 *   "sign in again" mapped to RFC 6749's invalid_grant and the client refusals to invalid_client;
 * - client credentials preferably with HTTP Basic (oauth.v2.access, `client_id`: "If possible, avoid sending
 *   client_id and client_secret as parameters ... supply [them] using the HTTP Basic authentication scheme");
 * - PKCE: oauth.v2.access takes `code_verifier` ("Used for PKCE"), so S256 is sent on every login;
 * - redirect URLs must use HTTPS ("Installing with OAuth", "Asking for scopes": "The redirect_uri must use HTTPS",
 *   and so must a Redirect URL configured for the app). `agentauth login`'s loopback listener is plain
 *   http://127.0.0.1, which real Slack refuses to register: the browser login works against Slack only through an
 *   HTTPS redirect that hands the code on (a RAP tool's own callback, a hosted relay). Slack has no device flow;
 * - token rotation (opt-in per app): "Using token rotation", https://docs.slack.dev/authentication/using-token-rotation
 *   (12 h `xoxe.` tokens with a `refresh_token`, refreshed at oauth.v2.access with grant_type=refresh_token;
 *   a used refresh token is retired: invalid_refresh_token); without rotation user tokens never expire;
 * - revocation: `auth.revoke`, https://docs.slack.dev/reference/methods/auth.revoke (the token as Bearer);
 * - the account: the exchange answer's `authed_user.id` and `team`, and `auth.test`
 *   (https://docs.slack.dev/reference/methods/auth.test) for the handle and the workspace URL;
 * - rate limits: HTTP 429 with Retry-After, https://docs.slack.dev/apis/web-api/rate-limits (the engine's quirks
 *   and `apiRequest` turn it into RateLimitedError).
 */

import type { Provider } from "../oauth/index.ts";
import { clientOptions, type PresetEntry } from "./catalog.ts";
import { type PresetOptions, presetClient, staticServer } from "./define.ts";
import { decodeOrigins, encodeOrigins, rebase } from "./origins.ts";
import { slackAccount, slackRevoke, slackScopes } from "./slack-api.ts";

/** A user token that can read the person's own profile: the smallest useful default; name your own scopes. */
export const SLACK_DEFAULT_USER_SCOPE = "users:read";

export type SlackOptions = PresetOptions;

export function slack(options: SlackOptions): Provider {
  const client = presetClient("Slack", options, "client_secret_basic");
  const userScope = slackScopes(options.scope ?? SLACK_DEFAULT_USER_SCOPE);
  const at = (url: string) => rebase(url, options.origins);
  const issuer = "https://slack.com";
  return {
    name: "slack",
    displayName: "Slack",
    issuer,
    ref: {
      name: "slack",
      options: {
        // As given, so the CLI's check that an option was taken as typed (`scope=a b`) holds; rebuilt the same.
        ...(options.scope !== undefined ? { scope: options.scope } : {}),
        ...encodeOrigins(options.origins),
      },
    },
    client,
    flows: ["authorization_code"],
    // Slack's `scope` is the bot's (see the header): the user's scopes go in `user_scope`, comma-separated, so
    // a scope given to login() (or `agentauth login --scope`) is a user scope too.
    defaultScope: userScope.split(",").join(" "),
    scopeFormat: { parameter: "user_scope", separator: "," },
    refresh: {
      issued: "when_enabled",
      rotates: true,
      notes:
        "With token rotation enabled for the app, user tokens last 12 hours and each refresh token works once; without it, user tokens never expire.",
    },
    // Slack's oauth.v2 docs name no `resource` parameter (RFC 8707): never send it.
    resourceIndicators: false,
    revocation: {
      kind: "custom",
      revoke: (context) =>
        slackRevoke({ revoke: at("https://slack.com/api/auth.revoke") }, context),
    },
    server: staticServer({
      displayName: "Slack",
      metadata: {
        issuer,
        authorization_endpoint: "https://slack.com/oauth/v2/authorize",
        token_endpoint: "https://slack.com/api/oauth.v2.access",
      },
      quirks: {
        okFalseErrors: true,
        nestedTokens: "authed_user",
        // Review #6: a workspace bot token (top level, or token_type "bot") is never stored as the person's.
        requireNested: true,
        commaScopes: true,
        bearerTokenType: true,
        errorCodes: {
          invalid_code: "invalid_grant",
          invalid_refresh_token: "invalid_grant",
          bad_redirect_uri: "invalid_grant",
          invalid_client_id: "invalid_client",
          bad_client_secret: "invalid_client",
        },
      },
      pkce: "s256",
      origins: options.origins,
    }),
    account: (context) => slackAccount(at("https://slack.com/api/auth.test"), context),
  };
}

export const slackPreset: PresetEntry = {
  name: "slack",
  displayName: "Slack",
  summary: "Slack workspaces: user tokens (user_scope), optional token rotation",
  flows: ["authorization_code"],
  register:
    "A Slack app (api.slack.com/apps) with the user token scopes you need and your redirect URL under OAuth & Permissions. Client id and client secret (Slack requires the secret at every exchange); turn on token rotation for expiring tokens.",
  redirectUri:
    "An https:// Redirect URL: Slack refuses plain http ones, so agentauth's http://127.0.0.1 loopback callback needs an HTTPS relay in front of it",
  selfHosted: false,
  secretRequired: {
    when: "always",
    why: "Slack requires the app's client secret at every exchange",
  },
  httpsRedirectOnly: true,
  refresh: "Only with token rotation: 12 h tokens, single-use refresh tokens",
  revocation: "auth.revoke with the token",
  docs: "https://docs.slack.dev/authentication/installing-with-oauth",
  fromRef: (ref, client) =>
    slack({
      ...clientOptions(client),
      scope: ref.options?.scope,
      origins: decodeOrigins(ref.options?.origins),
    }),
  matchIssuer: (issuer) =>
    issuer.origin === "https://slack.com" && (issuer.pathname === "/" || issuer.pathname === "")
      ? {}
      : undefined,
};
