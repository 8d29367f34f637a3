/**
 * Linear OAuth 2.0 apps, as "OAuth 2.0 authentication" (https://linear.app/developers/oauth-2-0-authentication)
 * describes them:
 * - authorize at https://linear.app/oauth/authorize ("Redirect user access requests to Linear"; `scope` is a
 *   comma-separated list, `read` always present); PKCE S256 is supported (same page, `code_challenge`);
 * - token at https://api.linear.app/oauth/token with a form body and `client_id`/`client_secret` parameters
 *   ("Exchange code for an access token"); the answer's `scope` is a JSON array (handled by `commaScopes`);
 * - refresh tokens: every app uses them since April 1, 2026 (same page, "Refresh tokens"); access tokens last
 *   24 hours and each refresh returns a new refresh token, the used one ceasing to work; a refresh needs the
 *   client secret;
 * - revocation at https://api.linear.app/oauth/revoke: the access token as a Bearer credential (200, or 400 when
 *   it can no longer be revoked), or RFC 7009 `token` with client credentials for the refresh token ("Revoke an
 *   access token");
 * - the account: GraphQL `{ viewer { id name email displayName avatarUrl } }` at https://api.linear.app/graphql
 *   (https://linear.app/developers/graphql, "Authentication");
 * - rate limits: HTTP 400 `RATELIMITED` with `X-RateLimit-Requests-*` headers,
 *   https://linear.app/developers/rate-limiting (recognised by the engine's `rateLimitOf`).
 */

import type { Provider, RevocationOutcome, RevokeContext } from "../oauth/index.ts";
import { apiRequest, str } from "./api.ts";
import { clientOptions, type PresetEntry } from "./catalog.ts";
import { type PresetOptions, presetClient, staticServer } from "./define.ts";
import { ProviderApiError } from "./errors.ts";
import { decodeOrigins, encodeOrigins, rebase } from "./origins.ts";

export type LinearOptions = PresetOptions;

const WEB = "https://linear.app";
const API = "https://api.linear.app";

export function linear(options: LinearOptions): Provider {
  const client = presetClient("Linear", options, "client_secret_post");
  const at = (url: string) => rebase(url, options.origins);
  return {
    name: "linear",
    displayName: "Linear",
    // Linear publishes no metadata; its authorization origin names it (what an AHP resource would list).
    issuer: WEB,
    ref: { name: "linear", options: { ...encodeOrigins(options.origins) } },
    client,
    flows: ["authorization_code"],
    // Its OAuth docs name no RFC 8707 `resource` parameter: never send it (the vault key keeps it).
    resourceIndicators: false,
    defaultScope: options.scope ?? "read",
    // The authorize request wants a comma-separated list (same page); `read write` given here goes out as `read,write`.
    scopeFormat: { separator: "," },
    refresh: {
      issued: "always",
      rotates: true,
      notes:
        "24 h access tokens; each refresh (which needs the client secret) returns a new refresh token.",
    },
    revocation: {
      kind: "custom",
      revoke: (context) => revoke(at(`${API}/oauth/revoke`), context),
    },
    server: staticServer({
      displayName: "Linear",
      metadata: {
        issuer: WEB,
        authorization_endpoint: `${WEB}/oauth/authorize`,
        token_endpoint: `${API}/oauth/token`,
        revocation_endpoint: `${API}/oauth/revoke`,
      },
      quirks: { commaScopes: true },
      pkce: "s256",
      origins: options.origins,
    }),
    async account(context) {
      const answer = await apiRequest(at(`${API}/graphql`), {
        ...context,
        method: "POST",
        provider: "Linear",
        what: "account lookup",
        headers: {
          authorization: `Bearer ${context.accessToken.reveal()}`,
          "content-type": "application/json",
        },
        body: JSON.stringify({ query: "{ viewer { id name email displayName avatarUrl } }" }),
      });
      const viewer = (answer.json as { data?: { viewer?: unknown } } | undefined)?.data?.viewer;
      if (answer.status !== 200 || typeof viewer !== "object" || viewer === null) {
        throw new ProviderApiError(
          "provider_account_unreadable",
          `Linear refused the account lookup (HTTP ${answer.status}).`,
          { status: answer.status },
        );
      }
      return {
        subject: str(viewer, "id"),
        login: str(viewer, "displayName"),
        name: str(viewer, "name"),
        email: str(viewer, "email"),
        avatarUrl: str(viewer, "avatarUrl"),
      };
    },
  };
}

/**
 * The access token by Bearer (the documented call), then the refresh token by RFC 7009 with client credentials.
 * A 400 means Linear no longer holds that token (revoked with the grant, or expired): nothing left to revoke.
 */
async function revoke(
  url: string,
  context: RevokeContext,
): Promise<{ refreshToken: RevocationOutcome; accessToken: RevocationOutcome }> {
  const call = async (headers: Record<string, string>, body?: string) => {
    const answer = await apiRequest(url, {
      ...context,
      method: "POST",
      provider: "Linear",
      what: "revocation",
      headers: { "content-type": "application/x-www-form-urlencoded", ...headers },
      body,
    });
    if (answer.status === 200) return "revoked" as const;
    if (answer.status === 400) return "absent" as const;
    throw new ProviderApiError(
      "provider_revocation_failed",
      `Linear refused the revocation (HTTP ${answer.status}). Try again, or revoke the app in Linear under Settings → Account → Security & access.`,
      { status: answer.status },
    );
  };
  const accessToken = context.accessToken
    ? await call({ authorization: `Bearer ${context.accessToken.reveal()}` })
    : "absent";
  let refreshToken: RevocationOutcome = "absent";
  if (context.refreshToken && !context.client.clientSecret && accessToken !== "revoked") {
    // Linear takes a refresh token for revocation only with client credentials, which a public client does not
    // have, and it refused the access token (expired there, or revoked): whether the grant still lives is
    // unknown. Saying "absent" would delete a credential whose refresh token may still be valid at Linear.
    throw new ProviderApiError(
      "provider_revocation_unconfirmed",
      "Linear no longer accepts this sign-in's access token, and it revokes the refresh token only with the " +
        "app's client secret, which this app (a public client) does not have; the sign-in may still be active. " +
        "Revoke the app in Linear under Settings → Account → Security & access, then delete the credential here.",
    );
  }
  if (context.refreshToken && context.client.clientSecret) {
    const form = new URLSearchParams({
      token: context.refreshToken.reveal(),
      token_type_hint: "refresh_token",
      client_id: context.client.clientId,
      client_secret: context.client.clientSecret.reveal(),
    });
    refreshToken = await call({}, form.toString());
    // The access token's revocation ended the grant: the refresh token went with it.
    if (refreshToken === "absent" && accessToken === "revoked") refreshToken = "revoked";
  }
  return { refreshToken, accessToken };
}

export const linearPreset: PresetEntry = {
  name: "linear",
  displayName: "Linear",
  summary: "Linear OAuth 2.0 apps (PKCE, rotating refresh tokens)",
  flows: ["authorization_code"],
  register:
    "An OAuth2 application (Settings → API → OAuth applications) with the callback URL below. Client id; the client secret for refresh and revocation.",
  redirectUri: "http://127.0.0.1/callback",
  selfHosted: false,
  refresh: "24 h access tokens; rotating refresh tokens (need the client secret)",
  revocation:
    "POST api.linear.app/oauth/revoke (Bearer access token; RFC 7009 for the refresh token)",
  docs: "https://linear.app/developers/oauth-2-0-authentication",
  fromRef: (ref, client) =>
    linear({ ...clientOptions(client), origins: decodeOrigins(ref.options?.origins) }),
  matchIssuer: (issuer) =>
    issuer.origin === WEB && issuer.pathname.replace(/\/$/, "") === "" ? {} : undefined,
};
