/** Google's published metadata, as the simulator serves it: the OpenID discovery document (real URLs), the device-flow scope allowlist and the default user. */
import type { SimUser } from "./sim-grants-b.ts";

export const GOOGLE_ISSUER = "https://accounts.google.com";

// https://developers.google.com/identity/openid-connect/openid-connect#discovery (the document Google serves at
// https://accounts.google.com/.well-known/openid-configuration): real URLs; the simulator serves every one of them
// at the same path on its own origin.
export const GOOGLE_DISCOVERY = {
  issuer: GOOGLE_ISSUER,
  authorization_endpoint: "https://accounts.google.com/o/oauth2/v2/auth",
  device_authorization_endpoint: "https://oauth2.googleapis.com/device/code",
  token_endpoint: "https://oauth2.googleapis.com/token",
  userinfo_endpoint: "https://openidconnect.googleapis.com/v1/userinfo",
  revocation_endpoint: "https://oauth2.googleapis.com/revoke",
  jwks_uri: "https://www.googleapis.com/oauth2/v3/certs",
  response_types_supported: ["code", "token", "id_token", "code token", "code id_token", "none"],
  subject_types_supported: ["public"],
  id_token_signing_alg_values_supported: ["RS256"],
  scopes_supported: ["openid", "email", "profile"],
  token_endpoint_auth_methods_supported: ["client_secret_post", "client_secret_basic"],
  claims_supported: [
    "aud",
    "email",
    "email_verified",
    "exp",
    "family_name",
    "given_name",
    "iat",
    "iss",
    "name",
    "picture",
    "sub",
  ],
  code_challenge_methods_supported: ["plain", "S256"],
  grant_types_supported: [
    "authorization_code",
    "refresh_token",
    "urn:ietf:params:oauth:grant-type:device_code",
    "urn:ietf:params:oauth:grant-type:jwt-bearer",
  ],
};

// https://developers.google.com/identity/protocols/oauth2/limited-input-device#allowedscopes: the device flow
// grants only these; anything else is invalid_scope.
export const GOOGLE_DEVICE_SCOPES = new Set([
  "openid",
  "email",
  "profile",
  "https://www.googleapis.com/auth/userinfo.email",
  "https://www.googleapis.com/auth/userinfo.profile",
  "https://www.googleapis.com/auth/drive.appdata",
  "https://www.googleapis.com/auth/drive.file",
  "https://www.googleapis.com/auth/youtube",
  "https://www.googleapis.com/auth/youtube.readonly",
]);

export const GOOGLE_DEFAULT_USERS: SimUser[] = [
  {
    id: "108712345678901234567",
    login: "alice@example.com",
    name: "Alice Example",
    email: "alice@example.com",
    avatar: "https://lh3.googleusercontent.com/a/alice",
  },
];

/** Google accepts loopback redirect URIs on any port for desktop clients (native-app doc, "Loopback IP address"). */
export function isLoopbackRedirect(uri: string): boolean {
  try {
    const u = new URL(uri);
    return u.protocol === "http:" && ["127.0.0.1", "[::1]", "localhost"].includes(u.hostname);
  } catch {
    return false;
  }
}
