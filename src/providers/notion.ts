/**
 * Notion public connections (OAuth), as developers.notion.com describes them:
 * - authorize at https://api.notion.com/v1/oauth/authorize with `owner=user` ("Authorization", step 1,
 *   https://developers.notion.com/docs/authorization);
 * - the token: `POST https://api.notion.com/v1/oauth/token` with HTTP Basic client credentials and a JSON body
 *   ("Create a token", https://developers.notion.com/reference/create-a-token); the answer carries `bot_id`,
 *   `workspace_id`, `workspace_name` and `owner` (`{type: "user", user: {id, name, avatar_url, person: {email}}}`)
 *   and no `expires_in`;
 * - refresh: `grant_type=refresh_token` at the same endpoint returns a new access token and a new refresh token
 *   ("Refresh a token", https://developers.notion.com/reference/refresh-a-token);
 * - revocation: `POST https://api.notion.com/v1/oauth/revoke`, Basic credentials and `{"token": ...}`
 *   ("Revoke a token", https://developers.notion.com/reference/revoke-token); a token it does not know is a 400;
 * - PKCE is not mentioned: marked undocumented, so only a confidential client (every public connection has a
 *   secret) signs in;
 * - the account is read from the token answer's `owner.user` and `workspace_name`, with no extra call;
 * - rate limits: 429 `rate_limited` with Retry-After, https://developers.notion.com/reference/request-limits.
 */

import type { Provider, RevocationOutcome, RevokeContext } from "../oauth/index.ts";
import { apiRequest, str } from "./api.ts";
import { clientOptions, type PresetEntry } from "./catalog.ts";
import { type PresetOptions, presetClient, staticServer } from "./define.ts";
import { ProviderApiError, ProviderConfigError } from "./errors.ts";
import { decodeOrigins, encodeOrigins, rebase } from "./origins.ts";

export type NotionOptions = PresetOptions;

const API = "https://api.notion.com";

export function notion(options: NotionOptions): Provider {
  const client = presetClient("Notion", options, "client_secret_basic");
  const at = (url: string) => rebase(url, options.origins);
  return {
    name: "notion",
    displayName: "Notion",
    issuer: API,
    ref: { name: "notion", options: { ...encodeOrigins(options.origins) } },
    client,
    flows: ["authorization_code"],
    // Its OAuth docs name no RFC 8707 `resource` parameter: never send it (the vault key keeps it).
    resourceIndicators: false,
    // Notion has no scopes: a connection's capabilities are set when it is created.
    defaultScope: options.scope,
    authorizationParams: { owner: "user" },
    refresh: {
      issued: "always",
      rotates: true,
      notes: "Access tokens carry no expiry; each refresh returns a new refresh token.",
    },
    revocation: {
      kind: "custom",
      revoke: (context) => revoke(at(`${API}/v1/oauth/revoke`), context),
    },
    server: staticServer({
      displayName: "Notion",
      metadata: {
        issuer: API,
        authorization_endpoint: `${API}/v1/oauth/authorize`,
        token_endpoint: `${API}/v1/oauth/token`,
      },
      quirks: { jsonRequestBody: true, bearerTokenType: true },
      pkce: "undocumented",
      origins: options.origins,
    }),
    async account({ response }) {
      const owner = response.owner as { user?: { person?: unknown } } | undefined;
      const user = owner?.user;
      return {
        subject: str(user, "id"),
        name: str(user, "name"),
        email: str(user?.person, "email"),
        avatarUrl: str(user, "avatar_url"),
        organization: str(response, "workspace_name"),
      };
    },
  };
}

/** Each token in turn; a 400 means Notion no longer knows it (revoked with the other, or never valid). */
async function revoke(
  url: string,
  context: RevokeContext,
): Promise<{ refreshToken: RevocationOutcome; accessToken: RevocationOutcome }> {
  const { client } = context;
  if (!client.clientSecret) {
    throw new ProviderConfigError(
      "provider_client_secret_missing",
      "Revoking a Notion token needs the connection's client secret (Notion authenticates the call with it).",
    );
  }
  const basic = Buffer.from(`${client.clientId}:${client.clientSecret.reveal()}`).toString(
    "base64",
  );
  const call = async (token: string): Promise<"revoked" | "absent"> => {
    const answer = await apiRequest(url, {
      ...context,
      method: "POST",
      provider: "Notion",
      what: "revocation",
      headers: { authorization: `Basic ${basic}`, "content-type": "application/json" },
      body: JSON.stringify({ token }),
    });
    if (answer.status === 200) return "revoked";
    if (answer.status === 400) return "absent";
    throw new ProviderApiError(
      answer.status === 401 ? "provider_client_refused" : "provider_revocation_failed",
      answer.status === 401
        ? "Notion refused the connection's client credentials for the revocation; check the client id and secret."
        : `Notion refused the revocation (HTTP ${answer.status}). Try again, or remove the connection in Notion (Settings → Connections).`,
      { status: answer.status },
    );
  };
  const accessToken = context.accessToken ? await call(context.accessToken.reveal()) : "absent";
  let refreshToken: RevocationOutcome = context.refreshToken
    ? await call(context.refreshToken.reveal())
    : "absent";
  // Revoking the access token ended the connection's grant: its refresh token went with it.
  if (context.refreshToken && refreshToken === "absent" && accessToken === "revoked") {
    refreshToken = "revoked";
  }
  return { refreshToken, accessToken };
}

export const notionPreset: PresetEntry = {
  name: "notion",
  displayName: "Notion",
  summary: "Notion public connections (OAuth); the workspace is shown as the organization",
  flows: ["authorization_code"],
  register:
    "A public connection (notion.so/profile/integrations) with the redirect URI below. Client id and client secret (both needed).",
  redirectUri: "http://127.0.0.1/callback",
  selfHosted: false,
  secretRequired: {
    when: "always",
    why: "Notion requires the connection's client secret to redeem a code",
  },
  refresh: "Tokens carry no expiry; refresh returns a new refresh token",
  revocation: "POST api.notion.com/v1/oauth/revoke (needs the client secret)",
  docs: "https://developers.notion.com/docs/authorization",
  fromRef: (ref, client) =>
    notion({ ...clientOptions(client), origins: decodeOrigins(ref.options?.origins) }),
  matchIssuer: (issuer) =>
    issuer.origin === API && issuer.pathname.replace(/\/$/, "") === "" ? {} : undefined,
};
