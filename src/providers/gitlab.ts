/**
 * GitLab (gitlab.com, GitLab Self-Managed and Dedicated) as an OAuth 2.0 / OpenID Connect provider, as
 * docs.gitlab.com describes it:
 * - endpoints: "OAuth 2.0 identity provider API", https://docs.gitlab.com/api/oauth2/ (authorize at
 *   HOST/oauth/authorize, token at HOST/oauth/token; the same paths on a self-managed host; Doorkeeper underneath);
 *   OpenID Connect discovery at HOST/.well-known/openid-configuration with issuer = HOST,
 *   https://docs.gitlab.com/integration/openid_connect_provider/ (static here, like every preset, so a
 *   credential's refresh needs no discovery round trip);
 * - PKCE S256: same page, "Authorization code with Proof Key for Code Exchange (PKCE)";
 * - the device flow at HOST/oauth/authorize_device: same page, "Device authorization grant flow" (GitLab 17.1+);
 * - access tokens expire after two hours, and each refresh returns a new refresh token (the used one stops
 *   working): same page, "Access token expiration" and the refresh_token examples;
 * - client credentials in the request body: the token request examples send `client_id` and `client_secret`
 *   as parameters (Doorkeeper also takes HTTP Basic);
 * - revocation: RFC 7009 at HOST/oauth/revoke, same page, "Revoke a token";
 * - the account: "Get the current user", `GET /api/v4/user` (needs read_user or api),
 *   https://docs.gitlab.com/api/users/#get-the-current-user;
 * - rate limits: 429 with Retry-After, https://docs.gitlab.com/security/rate_limits/ (handled by the engine).
 */

import type { Provider } from "../oauth/index.ts";
import { accountLookup, str } from "./api.ts";
import { clientOptions, type PresetEntry } from "./catalog.ts";
import { type PresetOptions, presetClient, selfHostedOrigin, staticServer } from "./define.ts";
import { decodeOrigins, encodeOrigins, rebase } from "./origins.ts";

export interface GitLabOptions extends PresetOptions {
  /** A self-managed or Dedicated instance: `https://HOST` (HTTP only on loopback). Default gitlab.com. */
  host?: string;
}

const GITLAB_COM = "https://gitlab.com";

export function gitlab(options: GitLabOptions): Provider {
  const given = selfHostedOrigin(options.host, "GitLab", "https://gitlab.example.com");
  // gitlab.com given as a host is simply the default.
  const host = given === GITLAB_COM ? undefined : given;
  const origin = host ?? GITLAB_COM;
  const client = presetClient("GitLab", options, "client_secret_post");
  const at = (url: string) => rebase(url, options.origins);
  return {
    name: "gitlab",
    displayName: host ? `GitLab (${new URL(host).host})` : "GitLab",
    // OpenID Connect discovery names the instance's origin as the issuer (no trailing slash).
    issuer: origin,
    ref: {
      name: "gitlab",
      options: { ...(host ? { host } : {}), ...encodeOrigins(options.origins) },
    },
    client,
    flows: ["authorization_code", "device"],
    // Its OAuth docs name no RFC 8707 `resource` parameter: never send it (the vault key keeps it).
    resourceIndicators: false,
    defaultScope: options.scope ?? "read_user",
    refresh: {
      issued: "always",
      rotates: true,
      notes:
        "Access tokens expire after 2 hours; each refresh returns a new refresh token and retires the old one.",
    },
    revocation: { kind: "rfc7009" },
    server: staticServer({
      displayName: "GitLab",
      metadata: {
        issuer: origin,
        authorization_endpoint: `${origin}/oauth/authorize`,
        token_endpoint: `${origin}/oauth/token`,
        device_authorization_endpoint: `${origin}/oauth/authorize_device`,
        revocation_endpoint: `${origin}/oauth/revoke`,
        userinfo_endpoint: `${origin}/oauth/userinfo`,
        jwks_uri: `${origin}/oauth/discovery/keys`,
      },
      // Doorkeeper answers RFC 6749 JSON; 429s are recognised by the engine whatever the quirks.
      quirks: {},
      pkce: "s256",
      origins: options.origins,
    }),
    async account(context) {
      const user = await accountLookup(at(`${origin}/api/v4/user`), context, {
        provider: "GitLab",
        needs: "read_user or api",
      });
      return {
        subject: str(user, "id"),
        login: str(user, "username"),
        name: str(user, "name"),
        email: str(user, "email") ?? str(user, "public_email"),
        avatarUrl: str(user, "avatar_url"),
      };
    },
  };
}

export const gitlabPreset: PresetEntry = {
  name: "gitlab",
  displayName: "GitLab",
  summary: "gitlab.com and GitLab Self-Managed/Dedicated (--provider-host); OpenID Connect",
  flows: ["authorization_code", "device"],
  register:
    "An application (User settings → Applications, or a group/instance application) with the read_user scope; untick Confidential for a PKCE-only client, or keep the secret. The device flow needs GitLab 17.1+.",
  redirectUri: "http://127.0.0.1/callback",
  selfHosted: true,
  refresh: "2 h access tokens; rotating refresh tokens",
  revocation: "RFC 7009 at /oauth/revoke",
  docs: "https://docs.gitlab.com/api/oauth2/",
  fromRef: (ref, client) =>
    gitlab({
      ...clientOptions(client),
      host: ref.options?.host,
      origins: decodeOrigins(ref.options?.origins),
    }),
  matchIssuer: (issuer) =>
    issuer.origin === GITLAB_COM && issuer.pathname.replace(/\/$/, "") === "" ? {} : undefined,
};
