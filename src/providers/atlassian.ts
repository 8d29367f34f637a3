/**
 * Atlassian Cloud (Jira, Confluence, ...) OAuth 2.0 (3LO) apps, as developer.atlassian.com describes them:
 * - endpoints and parameters: "OAuth 2.0 (3LO) apps", https://developer.atlassian.com/cloud/jira/platform/oauth-2-3lo-apps/
 *   step 1 (authorize at https://auth.atlassian.com/authorize with `audience=api.atlassian.com` (required) and
 *   `prompt=consent`), step 2 (POST https://auth.atlassian.com/oauth/token with a JSON body carrying
 *   `client_id` and `client_secret`; the answer is `{access_token, expires_in, scope}` without `token_type`);
 * - refresh tokens only with the `offline_access` scope, and they rotate (each use returns a new one):
 *   same page, "Use a refresh token to get another access token and refresh token pair", and
 *   https://developer.atlassian.com/cloud/oauth/getting-started/refresh-tokens/ ("rotating refresh tokens";
 *   an unknown or expired one is refused with 403 `invalid_grant`);
 * - PKCE is not mentioned in these docs: marked undocumented, so only a confidential client signs in (every 3LO
 *   app has a secret anyway);
 * - the account: `GET https://api.atlassian.com/me` with the read:me scope (same page, "How do I retrieve the
 *   public profile of the authenticated user?"); the sites the grant covers (cloudid):
 *   `GET https://api.atlassian.com/oauth/token/accessible-resources` (step 3.1); the first site's name is shown as
 *   the organization;
 * - no revocation API: a person removes the app under "Connected apps" in their Atlassian account
 *   (https://id.atlassian.com/manage-profile/apps), so signing out deletes locally and points there;
 * - rate limits: 429 with Retry-After, https://developer.atlassian.com/cloud/jira/platform/rate-limiting/
 *   (handled by the engine and `apiRequest`).
 */

import type { AccountContext, Provider } from "../oauth/index.ts";
import { accountLookup, apiRequest, str } from "./api.ts";
import { clientOptions, type PresetEntry } from "./catalog.ts";
import { type PresetOptions, presetClient, staticServer } from "./define.ts";
import { decodeOrigins, encodeOrigins, rebase } from "./origins.ts";

export type AtlassianOptions = PresetOptions;

const AUTH = "https://auth.atlassian.com";
const API = "https://api.atlassian.com";
const MANAGE_URL = "https://id.atlassian.com/manage-profile/apps";

export function atlassian(options: AtlassianOptions): Provider {
  const client = presetClient("Atlassian", options, "client_secret_post");
  const at = (url: string) => rebase(url, options.origins);
  return {
    name: "atlassian",
    displayName: "Atlassian",
    issuer: AUTH,
    ref: { name: "atlassian", options: { ...encodeOrigins(options.origins) } },
    client,
    flows: ["authorization_code"],
    // Its OAuth docs name no RFC 8707 `resource` parameter: never send it (the vault key keeps it).
    resourceIndicators: false,
    // read:me for the account; offline_access for a refresh token. Product scopes (read:jira-work, ...) are the
    // caller's to add.
    defaultScope: options.scope ?? "read:me offline_access",
    authorizationParams: { audience: "api.atlassian.com", prompt: "consent" },
    refresh: {
      issued: "when_asked",
      rotates: true,
      notes:
        "Ask for offline_access. 1 h access tokens; every refresh returns a new refresh token (90 days of inactivity, 365 days at most).",
    },
    revocation: { kind: "none", manageUrl: MANAGE_URL },
    server: staticServer({
      displayName: "Atlassian",
      metadata: {
        issuer: AUTH,
        authorization_endpoint: `${AUTH}/authorize`,
        token_endpoint: `${AUTH}/oauth/token`,
      },
      quirks: { jsonRequestBody: true, bearerTokenType: true },
      pkce: "undocumented",
      origins: options.origins,
    }),
    async account(context) {
      const me = await accountLookup(at(`${API}/me`), context, {
        provider: "Atlassian",
        needs: "read:me",
      });
      return {
        subject: str(me, "account_id"),
        name: str(me, "name"),
        email: str(me, "email"),
        avatarUrl: str(me, "picture"),
        organization: await firstSite(at(`${API}/oauth/token/accessible-resources`), context),
      };
    },
  };
}

/** The first site the grant covers, by name; a failure here costs only the display field. */
async function firstSite(url: string, context: AccountContext): Promise<string | undefined> {
  try {
    const answer = await apiRequest(url, {
      ...context,
      provider: "Atlassian",
      what: "site lookup",
      headers: { authorization: `Bearer ${context.accessToken.reveal()}` },
    });
    const sites = answer.json;
    return answer.status === 200 && Array.isArray(sites) ? str(sites[0], "name") : undefined;
  } catch {
    return undefined;
  }
}

export const atlassianPreset: PresetEntry = {
  name: "atlassian",
  displayName: "Atlassian",
  summary: "Atlassian Cloud (Jira, Confluence) OAuth 2.0 (3LO) apps",
  flows: ["authorization_code"],
  register:
    "An OAuth 2.0 integration in the developer console (developer.atlassian.com/console/myapps) with the User identity API (read:me) and the product scopes you need. Client id and secret.",
  // "the redirect_uri must match this URL" (https://developer.atlassian.com/cloud/oauth/getting-started/enabling-oauth-3lo/):
  // no loopback port leeway is documented.
  redirectUri:
    "http://127.0.0.1:PORT/callback with a port you choose, and the same port to agentauth login --redirect-port PORT (Atlassian matches the callback URL exactly)",
  selfHosted: false,
  secretRequired: {
    when: "always",
    why: "Atlassian requires the app's client secret to redeem a code",
  },
  refresh: "With offline_access: 1 h access tokens, rotating refresh tokens",
  revocation:
    "None: remove the app at id.atlassian.com/manage-profile/apps (signing out deletes locally)",
  docs: "https://developer.atlassian.com/cloud/jira/platform/oauth-2-3lo-apps/",
  fromRef: (ref, client) =>
    atlassian({ ...clientOptions(client), origins: decodeOrigins(ref.options?.origins) }),
  matchIssuer: (issuer) =>
    issuer.origin === AUTH && issuer.pathname.replace(/\/$/, "") === "" ? {} : undefined,
};
