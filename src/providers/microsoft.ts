/**
 * Microsoft Entra ID (Microsoft identity platform v2.0: work, school and personal Microsoft accounts), as
 * learn.microsoft.com/entra/identity-platform describes it:
 * - endpoints under https://login.microsoftonline.com/{tenant}/oauth2/v2.0/ (authorize, token, devicecode):
 *   "OAuth 2.0 authorization code flow", https://learn.microsoft.com/entra/identity-platform/v2-oauth2-auth-code-flow,
 *   and "OAuth 2.0 device authorization grant", https://learn.microsoft.com/entra/identity-platform/v2-oauth2-device-code.
 *   Static metadata (the per-tenant discovery document exists; static saves a request and rebases with `origins`);
 * - `tenant`: common (default), organizations, consumers, a tenant id or a domain; the ID token issuer check per
 *   tenant, including the multi-tenant `{tenantid}` template, is in microsoft-tenant.ts;
 * - the preset's `issuer` (vault key, AHP/MCP identifier) is `https://login.microsoftonline.com/<tenant>/v2.0` as
 *   configured;
 * - `offline_access` earns a refresh token ("Permissions and consent", `offline_access`,
 *   https://learn.microsoft.com/entra/identity-platform/permissions-consent-overview); refresh tokens replace
 *   themselves on every use and the old one is not revoked ("Refresh tokens",
 *   https://learn.microsoft.com/entra/identity-platform/refresh-tokens);
 * - PKCE S256 is supported (auth-code doc, `code_challenge`; required for SPAs, recommended for all). A confidential
 *   (web) app sends `client_secret` in the body (auth-code doc, "Redeem a code for an access token");
 * - the device flow refuses with `authorization_declined` (device-code doc, "Expected errors"), mapped to RFC 8628's
 *   access_denied; `bad_verification_code` (device code not recognised) and `interaction_required` (conditional
 *   access demands a fresh sign-in; "Handle errors", https://learn.microsoft.com/entra/identity-platform/reference-error-codes)
 *   mapped to invalid_grant, so a refresh refused so marks the credential login_required;
 * - no revocation API for an app's user tokens (no RFC 7009 endpoint; Graph's revokeSignInSessions signs the person
 *   out of every app, too broad for a sign-out): kind "none"; the person removes the app at My Apps
 *   (https://myapps.microsoft.com) or, for personal accounts, at https://account.live.com/consent/Manage;
 * - the account from the ID token (oid, preferred_username, name, email, tid), else Graph `GET /me`
 *   (https://learn.microsoft.com/graph/api/user-get).
 */

import type { AccountContext, Provider, ProviderAccount } from "../oauth/index.ts";
import { accountLookup, str } from "./api.ts";
import { clientOptions, type PresetEntry } from "./catalog.ts";
import { type PresetOptions, presetClient, staticServer } from "./define.ts";
import { checkTenant, expectedIssuer, LOGIN, tenantOfIssuer } from "./microsoft-tenant.ts";
import { decodeOrigins, encodeOrigins, rebase } from "./origins.ts";

export interface MicrosoftOptions extends PresetOptions {
  /** common (default), organizations, consumers, a tenant id (GUID) or a verified domain. */
  tenant?: string;
}

export function microsoft(options: MicrosoftOptions): Provider {
  const tenant = checkTenant(options.tenant);
  const client = presetClient("Microsoft", options, "client_secret_post");
  const base = `${LOGIN}/${tenant}/oauth2/v2.0`;
  const issuer = `${LOGIN}/${tenant}/v2.0`;
  const at = (url: string) => rebase(url, options.origins);
  return {
    name: "microsoft",
    displayName: tenant === "common" ? "Microsoft" : `Microsoft (${tenant})`,
    issuer,
    ref: { name: "microsoft", options: { tenant, ...encodeOrigins(options.origins) } },
    client,
    flows: ["authorization_code", "device"],
    defaultScope: options.scope ?? "openid profile email offline_access",
    refresh: {
      issued: "when_asked",
      rotates: true,
      notes:
        "A refresh token with the offline_access scope (in the default); each refresh returns a new one (90 days; 24 hours for single-page apps).",
    },
    // Entra v2.0 takes the resource in each scope and refuses RFC 8707 `resource` (AADSTS901002,
    // https://learn.microsoft.com/en-us/entra/identity-platform/reference-error-codes).
    resourceIndicators: false,
    revocation: {
      kind: "none",
      manageUrl:
        tenant === "consumers"
          ? "https://account.live.com/consent/Manage"
          : "https://myapps.microsoft.com",
    },
    server: staticServer({
      displayName: "Microsoft",
      metadata: {
        issuer,
        authorization_endpoint: `${base}/authorize`,
        token_endpoint: `${base}/token`,
        device_authorization_endpoint: `${base}/devicecode`,
        userinfo_endpoint: "https://graph.microsoft.com/oidc/userinfo",
        jwks_uri: `${LOGIN}/${tenant}/discovery/v2.0/keys`,
      },
      quirks: {
        errorCodes: {
          authorization_declined: "access_denied",
          bad_verification_code: "invalid_grant",
          interaction_required: "invalid_grant",
        },
      },
      pkce: "s256",
      origins: options.origins,
      expectedIssuer: (claims) => expectedIssuer(tenant, claims),
    }),
    account: (context) => microsoftAccount(at("https://graph.microsoft.com/v1.0/me"), context),
  };
}

/**
 * The account: subject = `oid` (the user's immutable object id, the same for every app; `sub` is pairwise per
 * app), organization = `tid`. Without an ID token (a scope without openid), Graph `/me`.
 */
export async function microsoftAccount(
  me: string,
  context: AccountContext,
): Promise<ProviderAccount> {
  const claims = context.claims;
  if (claims) {
    return {
      subject: str(claims, "oid") ?? str(claims, "sub"),
      login: str(claims, "preferred_username"),
      name: str(claims, "name"),
      email: str(claims, "email"),
      organization: str(claims, "tid"),
    };
  }
  const user = await accountLookup(me, context, { provider: "Microsoft Graph" });
  return {
    subject: str(user, "id"),
    login: str(user, "userPrincipalName"),
    name: str(user, "displayName"),
    email: str(user, "mail"),
  };
}

export const microsoftPreset: PresetEntry = {
  name: "microsoft",
  displayName: "Microsoft Entra ID",
  summary:
    "Microsoft work, school and personal accounts (--tenant common|organizations|consumers|<id>)",
  flows: ["authorization_code", "device"],
  register:
    'An app registration in the Entra admin center (App registrations): client id; add the "Mobile and desktop applications" platform with the redirect URI and turn on "Allow public client flows" for --device; a client secret only for a web app.',
  redirectUri:
    "http://127.0.0.1/callback under Mobile and desktop applications (Entra ignores the port of a loopback redirect URI: learn.microsoft.com/entra/identity-platform/reply-url, localhost exceptions)",
  selfHosted: false,
  refresh: "With offline_access (default scope): rotating refresh tokens, 90 days",
  revocation: "No API: remove the app at https://myapps.microsoft.com (personal: account.live.com)",
  docs: "https://learn.microsoft.com/entra/identity-platform/v2-oauth2-auth-code-flow",
  fromRef: (ref, client) =>
    microsoft({
      ...clientOptions(client),
      tenant: ref.options?.tenant,
      origins: decodeOrigins(ref.options?.origins),
    }),
  matchIssuer: (issuer) => {
    const tenant = tenantOfIssuer(issuer);
    return tenant ? { tenant } : undefined;
  },
};
