/** GitLab's published shapes, as the simulator serves them for one instance (gitlab.com or self-managed, its origin being the host): OpenID discovery, Doorkeeper error bodies, the user in /api/v4/user and /oauth/userinfo, default users and scopes. */
import type { SimUser } from "./sim-grants-b.ts";

// https://docs.gitlab.com/integration/openid_connect_provider/ ("Shared information" / discovery at
// HOST/.well-known/openid-configuration). The simulator's own origin is the instance's host, like a self-managed
// GitLab, so every URL names it.
export function gitlabDiscovery(host: string): Record<string, unknown> {
  return {
    issuer: host,
    authorization_endpoint: `${host}/oauth/authorize`,
    token_endpoint: `${host}/oauth/token`,
    revocation_endpoint: `${host}/oauth/revoke`,
    introspection_endpoint: `${host}/oauth/introspect`,
    userinfo_endpoint: `${host}/oauth/userinfo`,
    jwks_uri: `${host}/oauth/discovery/keys`,
    // Device authorization grant: GitLab 17.1+ (https://docs.gitlab.com/api/oauth2/#device-authorization-grant-flow).
    device_authorization_endpoint: `${host}/oauth/authorize_device`,
    scopes_supported: GITLAB_SCOPES,
    response_types_supported: ["code"],
    response_modes_supported: ["query", "fragment", "form_post"],
    grant_types_supported: [
      "authorization_code",
      "password",
      "client_credentials",
      "device_code",
      "refresh_token",
    ],
    token_endpoint_auth_methods_supported: ["client_secret_basic", "client_secret_post"],
    subject_types_supported: ["public"],
    id_token_signing_alg_values_supported: ["RS256"],
    claim_types_supported: ["normal"],
    claims_supported: [
      "iss",
      "sub",
      "aud",
      "exp",
      "iat",
      "sub_legacy",
      "name",
      "nickname",
      "preferred_username",
      "email",
      "email_verified",
      "website",
      "profile",
      "picture",
      "groups",
      "groups_direct",
      "https://gitlab.org/claims/groups/owner",
      "https://gitlab.org/claims/groups/maintainer",
      "https://gitlab.org/claims/groups/developer",
    ],
    code_challenge_methods_supported: ["plain", "S256"],
  };
}

// https://docs.gitlab.com/integration/oauth_provider/#view-all-authorized-applications ("Authorized applications"
// scopes) and https://docs.gitlab.com/user/profile/personal_access_tokens/#personal-access-token-scopes.
export const GITLAB_SCOPES = [
  "api",
  "read_api",
  "read_user",
  "create_runner",
  "manage_runner",
  "k8s_proxy",
  "read_repository",
  "write_repository",
  "read_registry",
  "write_registry",
  "ai_features",
  "sudo",
  "admin_mode",
  "openid",
  "profile",
  "email",
];

/** Doorkeeper's error descriptions, which GitLab answers verbatim (RFC 6749 §5.2 shape). */
export const DOORKEEPER = {
  invalid_grant:
    "The provided authorization grant is invalid, expired, revoked, does not match the redirection URI used in the authorization request, or was issued to another client.",
  invalid_client:
    "Client authentication failed due to unknown client, no client authentication included, or unsupported authentication method.",
  invalid_request:
    "The request is missing a required parameter, includes an unsupported parameter value, or is otherwise malformed.",
  invalid_scope: "The requested scope is invalid, unknown, or malformed.",
  access_denied: "The resource owner or authorization server denied the request.",
  unsupported_grant_type:
    "The authorization grant type is not supported by the authorization server.",
  authorization_pending:
    "The authorization request is still pending as the end user hasn't yet completed the user interaction steps.",
  slow_down: "The client is polling too quickly and should back off at a reasonable rate.",
  expired_token: "The device_code has expired, and the device authorization session has concluded.",
  invalid_code_verifier: "The code verifier does not match the code challenge.",
};

export const GITLAB_DEFAULT_USERS: SimUser[] = [
  {
    id: "1",
    login: "alice",
    name: "Alice Example",
    email: "alice@example.com",
    avatar: "https://secure.gravatar.com/avatar/alice?s=80&d=identicon",
  },
];

/** https://docs.gitlab.com/api/users/#get-the-current-user (a subset of the documented fields). */
export function apiUser(host: string, u: SimUser, withEmail: boolean): Record<string, unknown> {
  return {
    id: Number(u.id),
    username: u.login,
    name: u.name,
    state: "active",
    locked: false,
    avatar_url: u.avatar,
    web_url: `${host}/${u.login}`,
    created_at: "2012-05-23T08:00:58Z",
    bio: "",
    public_email: null,
    ...(withEmail ? { email: u.email, commit_email: u.email } : {}),
    two_factor_enabled: true,
    external: false,
    private_profile: false,
  };
}

/** https://docs.gitlab.com/integration/openid_connect_provider/#shared-information (userinfo claims). */
export function userinfoClaims(host: string, u: SimUser): Record<string, unknown> {
  return {
    sub: u.id,
    sub_legacy: `${u.id}-legacy`,
    name: u.name,
    nickname: u.login,
    preferred_username: u.login,
    email: u.email,
    email_verified: true,
    website: "",
    profile: `${host}/${u.login}`,
    picture: u.avatar,
    groups: [],
  };
}
