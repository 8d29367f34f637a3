/**
 * Google (OAuth 2.0 and OpenID Connect for installed apps), as developers.google.com/identity describes it:
 * - endpoints: "OAuth 2.0 for Mobile & Desktop Apps", https://developers.google.com/identity/protocols/oauth2/native-app
 *   (authorize at https://accounts.google.com/o/oauth2/v2/auth, token at https://oauth2.googleapis.com/token, revoke
 *   at https://oauth2.googleapis.com/revoke), and the OpenID discovery document
 *   (https://developers.google.com/identity/openid-connect/openid-connect#discovery). Discovery exists, but the
 *   metadata is static here: Google documents the endpoints as stable, a static copy saves a request on every
 *   login and refresh, and it rebases cleanly with `origins` (a discovered document would name the real hosts);
 * - a refresh token comes back only with `access_type=offline`, and on a later consent only with `prompt=consent`
 *   ("OAuth 2.0 for Web Server Applications", "Refreshing an access token (offline access)",
 *   https://developers.google.com/identity/protocols/oauth2/web-server#offline): both are always sent. Refresh
 *   tokens do not rotate (the refresh answer carries none);
 * - PKCE S256: native-app doc, step 1 (`code_challenge`, `code_challenge_method`); the installed-app client's secret
 *   goes in the token request body (native-app doc, step 5 "Exchange authorization code": `client_secret`);
 * - the device flow: "OAuth 2.0 for TV and Limited-Input Device Applications",
 *   https://developers.google.com/identity/protocols/oauth2/limited-input-device, at
 *   https://oauth2.googleapis.com/device/code. Only a short list of scopes is allowed there ("Allowed scopes":
 *   openid, email, profile, drive.file, drive.appdata, youtube, youtube.readonly); others get invalid_scope. Its
 *   answer says `verification_url` (google-device.ts);
 * - ID token `iss` is "https://accounts.google.com" or, for legacy implementations, "accounts.google.com" (OpenID
 *   Connect reference, Discovery Document, `issuer`, https://developers.google.com/identity/openid-connect/reference),
 *   both accepted through oauth4webapi's expected-issuer hook;
 * - `hd`: restricts sign-in to a Google Workspace domain. The authorization parameter is only a hint; Google says to
 *   check that the ID token's `hd` claim is the expected domain ("Validating an ID token",
 *   https://developers.google.com/identity/openid-connect/openid-connect#validatinganidtoken), which this preset does
 *   on every ID token (login, device, refresh) and on userinfo. With `hd` the preset adds `openid` to its scope,
 *   and a sign-in answer without an ID token (a `login({ scope })` lacking openid) is refused (google-hd.ts);
 * - revocation: POST the token to /revoke ("Revoking a token", native-app doc): it revokes the whole grant, so the
 *   refresh token (or, without one, the access token) is sent once; a token already gone answers 400 invalid_token.
 *   The engine's RFC 7009 path would send the access token after the grant is gone and fail, hence a custom call;
 * - the account: the ID token's claims (sub, email, name, picture), else the userinfo endpoint
 *   (https://developers.google.com/identity/openid-connect/openid-connect#obtaininguserprofileinformation).
 */

import type { AccountContext, Provider, ProviderAccount, RevokeContext } from "../oauth/index.ts";
import { accountLookup, apiRequest, str } from "./api.ts";
import { clientOptions, type PresetEntry } from "./catalog.ts";
import { type PresetOptions, presetClient, staticServer } from "./define.ts";
import { ProviderApiError, ProviderConfigError } from "./errors.ts";
import { aliasVerificationUrl } from "./google-device.ts";
import { requireIdToken } from "./google-hd.ts";
import { decodeOrigins, encodeOrigins, rebase } from "./origins.ts";

export interface GoogleOptions extends PresetOptions {
  /** A Google Workspace domain (`example.com`): only its accounts may sign in (checked on the ID token). */
  hd?: string;
}

export const GOOGLE_ISSUER = "https://accounts.google.com";
const DEFAULT_SCOPE = "openid email profile";
const ISSUERS = new Set([GOOGLE_ISSUER, "accounts.google.com"]);

export function google(options: GoogleOptions): Provider {
  const client = presetClient("Google", options, "client_secret_post");
  const hd = checkDomain(options.hd);
  const at = (url: string) => rebase(url, options.origins);
  const base = staticServer({
    displayName: "Google",
    metadata: {
      issuer: GOOGLE_ISSUER,
      authorization_endpoint: "https://accounts.google.com/o/oauth2/v2/auth",
      token_endpoint: "https://oauth2.googleapis.com/token",
      device_authorization_endpoint: "https://oauth2.googleapis.com/device/code",
      revocation_endpoint: "https://oauth2.googleapis.com/revoke",
      userinfo_endpoint: "https://openidconnect.googleapis.com/v1/userinfo",
      jwks_uri: "https://www.googleapis.com/oauth2/v3/certs",
    },
    quirks: {},
    pkce: "s256",
    origins: options.origins,
    expectedIssuer: (claims) => checkIdToken(claims, hd),
  });
  return {
    name: "google",
    displayName: hd ? `Google (${hd})` : "Google",
    issuer: GOOGLE_ISSUER,
    ref: {
      name: "google",
      options: { ...(hd ? { hd } : {}), ...encodeOrigins(options.origins) },
    },
    client,
    flows: ["authorization_code", "device"],
    // Its OAuth docs name no RFC 8707 `resource` parameter: never send it (the vault key keeps it).
    resourceIndicators: false,
    // With hd, openid is always asked for: the domain is checked on the ID token, which only openid brings.
    defaultScope: hd
      ? withOpenid(options.scope ?? DEFAULT_SCOPE)
      : (options.scope ?? DEFAULT_SCOPE),
    authorizationParams: {
      access_type: "offline",
      prompt: "consent",
      ...(hd ? { hd } : {}),
    },
    refresh: {
      issued: "when_asked",
      rotates: false,
      notes:
        "A refresh token is issued with access_type=offline (always asked for); it does not rotate and ends when revoked, after 6 months unused, or on a password change.",
    },
    revocation: {
      kind: "custom",
      revoke: (context) => revokeGrant(at("https://oauth2.googleapis.com/revoke"), context),
    },
    server: async () => {
      const as = aliasVerificationUrl(await base());
      return hd ? requireIdToken(as, hd) : as;
    },
    account: (context) =>
      googleAccount(at("https://openidconnect.googleapis.com/v1/userinfo"), context, hd),
  };
}

/**
 * The issuer an ID token must name (its own `iss` when it is one of Google's two spellings), after checking the
 * Workspace domain. Throwing here fails the token response: nothing is stored for an account outside `hd`.
 */
export function checkIdToken(claims: Record<string, unknown>, hd: string | undefined): string {
  if (hd !== undefined && claims.hd !== hd) {
    throw new ProviderApiError(
      "provider_account_refused",
      `Google signed in an account outside the Workspace domain ${hd}. Sign in again with an account of ${hd}.`,
    );
  }
  return typeof claims.iss === "string" && ISSUERS.has(claims.iss) ? claims.iss : GOOGLE_ISSUER;
}

/** The account from ID token claims, else userinfo (a scope without `openid` returns no ID token). */
export async function googleAccount(
  userinfo: string,
  context: AccountContext,
  hd?: string,
): Promise<ProviderAccount> {
  let claims = context.claims;
  if (!claims) {
    claims = (await accountLookup(userinfo, context, { provider: "Google" })) as Record<
      string,
      unknown
    >;
    // userinfo carries `hd` for Workspace accounts too (same page, "Obtaining user profile information").
    if (hd !== undefined && claims?.hd !== hd) checkIdToken(claims ?? {}, hd);
  }
  return {
    subject: str(claims, "sub"),
    email: str(claims, "email"),
    name: str(claims, "name"),
    avatarUrl: str(claims, "picture"),
    organization: str(claims, "hd"),
  };
}

async function revokeGrant(url: string, context: RevokeContext) {
  const token = context.refreshToken ?? context.accessToken;
  if (!token) return { refreshToken: "absent", accessToken: "absent" } as const;
  const answer = await apiRequest(url, {
    ...context,
    method: "POST",
    provider: "Google",
    what: "revocation",
    headers: { "content-type": "application/x-www-form-urlencoded" },
    body: new URLSearchParams({ token: token.reveal() }).toString(),
  });
  if (answer.status === 200) {
    return {
      refreshToken: context.refreshToken ? "revoked" : "absent",
      accessToken: context.accessToken ? "revoked" : "absent",
    } as const;
  }
  // 400 invalid_token: Google no longer knows the token (expired, or revoked elsewhere): nothing left to revoke.
  if (answer.status === 400 && str(answer.json, "error") === "invalid_token") {
    return { refreshToken: "absent", accessToken: "absent" } as const;
  }
  throw new ProviderApiError(
    "provider_revocation_failed",
    `Google refused the revocation (HTTP ${answer.status}). Try again, or remove the app at https://myaccount.google.com/permissions.`,
    { status: answer.status },
  );
}

function withOpenid(scope: string): string {
  const scopes = scope.split(" ").filter(Boolean);
  return scopes.includes("openid") ? scopes.join(" ") : ["openid", ...scopes].join(" ");
}

function checkDomain(value: string | undefined): string | undefined {
  if (value === undefined || value === "") return undefined;
  if (!/^[a-z0-9]([a-z0-9-]*[a-z0-9])?(\.[a-z0-9]([a-z0-9-]*[a-z0-9])?)+$/i.test(value)) {
    throw new ProviderConfigError(
      "provider_option_invalid",
      `The Google Workspace domain ${JSON.stringify(value.slice(0, 100))} is not a domain name (hd: example.com).`,
    );
  }
  return value.toLowerCase();
}

export const googlePreset: PresetEntry = {
  name: "google",
  displayName: "Google",
  summary: "Google accounts (OpenID Connect); --hd restricts to a Workspace domain",
  flows: ["authorization_code", "device"],
  register:
    'An OAuth client in Google Cloud Console (APIs & Services → Credentials): "Desktop app" for the browser flow, "TVs and Limited Input devices" for --device. Client id and its client secret (Google requires it at the token endpoint even for installed apps).',
  redirectUri: "http://127.0.0.1 on any port (Desktop app clients accept loopback redirects)",
  selfHosted: false,
  secretRequired: {
    when: "always",
    why: "Google requires the client secret at its token endpoint, even for installed apps",
  },
  refresh: "With access_type=offline (always asked): long-lived, not rotated",
  revocation: "POST https://oauth2.googleapis.com/revoke (revokes the whole grant)",
  docs: "https://developers.google.com/identity/protocols/oauth2/native-app",
  fromRef: (ref, client) =>
    google({
      ...clientOptions(client),
      hd: ref.options?.hd,
      origins: decodeOrigins(ref.options?.origins),
    }),
  matchIssuer: (issuer) =>
    issuer.origin === GOOGLE_ISSUER && (issuer.pathname === "/" || issuer.pathname === "")
      ? {}
      : undefined,
};
