/** The strict oidc-provider configuration of the embedded authorization server (pure: options in, configuration out). */

import type {
  Adapter,
  ClientMetadata,
  Configuration,
  JWK,
  KoaContextWithOIDC,
} from "oidc-provider";
import { errors } from "oidc-provider";
import { AgentAuthError } from "../core/errors.ts";
import {
  deviceConfirmPage,
  deviceInputResponse,
  deviceSuccessPage,
  errorPage,
  shownClientName,
} from "./pages.ts";
import { demoClaims, findDemoUser } from "./users.ts";

/** The public client `agentauth login` uses by default: PKCE, loopback redirects on any port (RFC 8252 §7.3). */
export const CLI_CLIENT_ID = "agentauth-cli";
/**
 * The example ACP agent's own public client (`agentauth acp example-agent`): a component of its own, so its
 * tokens and revocations never touch the CLI's (issue 8 §4.5).
 */
export const EXAMPLE_AGENT_CLIENT_ID = "agentauth-example-agent";
/**
 * The example RAP tool's public client (`startExampleTool({ clientId })`), so the demo need not register one per
 * start: its OAuth redirect `http://127.0.0.1:PORT/oauth/callback` on any port (RFC 8252 §7.3).
 */
export const EXAMPLE_TOOL_CLIENT_ID = "agentauth-example-tool";
/** The console's public client: "Connect" comes back to `http://127.0.0.1:PORT/connect/callback`, any port. */
export const CONSOLE_CLIENT_ID = "agentauth-console";

export const SUPPORTED_SCOPES = [
  "openid",
  "profile",
  "email",
  "org",
  "offline_access",
  "read",
  "write",
  "admin",
];
/** Scopes a resource server (RFC 8707 resource indicator) may be granted; the OIDC ones stay with the issuer. */
export const RESOURCE_SCOPES = ["read", "write", "admin"];

/** oidc-provider endpoint paths to change (its `routes` configuration). */
export interface IdpRoutes {
  authorization?: string;
  registration?: string;
  token?: string;
}

export interface IdpConfigOptions {
  /** The first signs; all are published in the JWKS. */
  signingKeys: JWK[];
  cookieKeys: string[];
  /** Extra clients (confidential ones for tests, say) next to the built-in CLI client. */
  clients?: ClientMetadata[];
  accessTokenTtlSeconds?: number;
  /** Access token lifetimes for particular resources (RFC 8707 indicators, compared as URLs); others get the default. */
  resourceTokenTtlSeconds?: Record<string, number>;
  refreshTokenTtlSeconds?: number;
  deviceCodeTtlSeconds?: number;
  /** Resources that get opaque access tokens (checked by introspection) instead of RFC 9068 JWTs. */
  opaqueResources?: string[];
  adapter: new (name: string) => Adapter;
  /** RFC 7591 dynamic registration at /reg. Default true. */
  dynamicRegistration?: boolean;
  /** Advertise `client_id_metadata_document_supported` (the adapter resolves client_id URLs). Default false. */
  clientIdMetadataDocuments?: boolean;
  routes?: IdpRoutes;
  /** RFC 9449 §8: every DPoP proof at the token endpoint must carry a nonce this secret (32 bytes) derives. */
  dpopNonceSecret?: Buffer;
}

/**
 * What a resource (RFC 8707 indicator) may be granted and how its access tokens look: RFC 9068 JWTs signed ES256
 * (resource servers verify offline against the JWKS), opaque on request; also used by the custom grants.
 */
export function resourceServerInfo(
  options: Pick<
    IdpConfigOptions,
    "accessTokenTtlSeconds" | "resourceTokenTtlSeconds" | "opaqueResources"
  >,
) {
  const accessTokenTtl = options.accessTokenTtlSeconds ?? 3600;
  const resourceTtl = resourceTtls(options.resourceTokenTtlSeconds ?? {});
  return (resource: string) => {
    assertResourceIndicator(resource);
    return {
      scope: RESOURCE_SCOPES.join(" "),
      audience: resource,
      accessTokenTTL: resourceTtl(resource) ?? accessTokenTtl,
      ...(options.opaqueResources?.includes(resource)
        ? { accessTokenFormat: "opaque" as const }
        : { accessTokenFormat: "jwt" as const, jwt: { sign: { alg: "ES256" as const } } }),
    };
  };
}

export function buildConfiguration(options: IdpConfigOptions): Configuration {
  const accessTokenTtl = options.accessTokenTtlSeconds ?? 3600;
  return {
    adapter: options.adapter,
    clients: [
      cliClient(),
      nativeClient(EXAMPLE_AGENT_CLIENT_ID, "agentauth example ACP agent"),
      codeClient(EXAMPLE_TOOL_CLIENT_ID, "agentauth example RAP tool", "/oauth/callback"),
      codeClient(CONSOLE_CLIENT_ID, "agentauth console", "/connect/callback"),
      ...(options.clients ?? []),
    ],
    jwks: { keys: options.signingKeys },
    ...(options.routes ? { routes: { ...options.routes } } : {}),
    // oidc-provider's own defaults for this object, plus CIMD when on (its built-in CIMD feature stays off: see
    // client-metadata-documents.ts for why the adapter resolves client_id URLs instead).
    discovery: {
      claim_types_supported: ["normal"],
      ...(options.clientIdMetadataDocuments ? { client_id_metadata_document_supported: true } : {}),
    },
    // One ES256 key signs everything; clients (static or registered) default to it.
    clientDefaults: {
      id_token_signed_response_alg: "ES256",
      grant_types: ["authorization_code", "refresh_token"],
    },
    cookies: { keys: options.cookieKeys },
    scopes: SUPPORTED_SCOPES,
    claims: {
      openid: ["sub"],
      profile: ["name", "preferred_username"],
      email: ["email", "email_verified"],
      org: ["org"],
    },
    // ID tokens carry the profile claims so clients can show the account without a userinfo call.
    conformIdTokenClaims: false,
    async findAccount(_ctx, sub) {
      const user = findDemoUser(sub);
      if (!user) return undefined;
      return { accountId: user.sub, claims: async () => demoClaims(user) };
    },
    // OAuth 2.1 / RFC 9700: PKCE for every client, S256 only (oidc-provider 9 supports no `plain`).
    pkce: { required: () => true },
    // RFC 9700 §4.14.2: rotate refresh tokens for every client; reuse of a rotated one revokes the grant.
    rotateRefreshToken: () => true,
    issueRefreshToken: async (_ctx, client) => client.grantTypeAllowed("refresh_token"),
    interactions: { url: (_ctx, interaction) => `/interaction/${interaction.uid}` },
    ttl: {
      // A function, not a number: a number would override the resource server's accessTokenTTL (per-resource TTLs).
      AccessToken: (_ctx, token) => token.resourceServer?.accessTokenTTL ?? accessTokenTtl,
      AuthorizationCode: 60,
      DeviceCode: options.deviceCodeTtlSeconds ?? 600,
      Grant: 14 * 24 * 3600,
      IdToken: 3600,
      Interaction: 600,
      RefreshToken: options.refreshTokenTtlSeconds ?? 14 * 24 * 3600,
      Session: 3600,
    },
    clientBasedCORS: (_ctx, origin, client) =>
      client.redirectUris?.some((uri) => URL.parse(uri)?.origin === origin) ?? false,
    features: {
      devInteractions: { enabled: false },
      // RFC 6749 §4.4, for clients registered with the grant type (the MCP client-credentials extension).
      clientCredentials: { enabled: true },
      // RFC 9449: on for every client that sends a proof (oidc-provider's default), with server nonces when asked.
      dPoP: options.dpopNonceSecret
        ? { enabled: true, nonceSecret: options.dpopNonceSecret, requireNonce: () => true }
        : { enabled: true },
      deviceFlow: {
        enabled: true,
        charset: "base-20",
        mask: "****-****",
        userCodeInputSource: async (ctx, form, out, err) => {
          ctx.body = deviceInputResponse(form, out, err, err && (await deviceClientName(ctx)));
        },
        userCodeConfirmSource: async (ctx, form, client, _info, userCode) => {
          ctx.body = deviceConfirmPage(
            form,
            shownClientName(client.clientName, client.clientId),
            userCode,
          );
        },
        successSource: async (ctx) => {
          const client = ctx.oidc.client;
          ctx.body = deviceSuccessPage(client?.clientName ?? client?.clientId ?? "the application");
        },
      },
      // Explicit policies (oidc-provider's defaults, restated): a default one prints a NOTICE on stdout when first
      // called, which would break `idp serve`'s one-ready-line stdout. Public clients only see and revoke their own tokens.
      introspection: {
        enabled: true,
        allowedPolicy: (_ctx, client, token) =>
          client.clientAuthMethod !== "none" || token.clientId === client.clientId,
      },
      revocation: {
        enabled: true,
        allowedPolicy: (_ctx, client, token) => {
          if (token.clientId === client.clientId) return true;
          if (client.clientAuthMethod === "none") return false;
          throw new errors.InvalidRequest("client is not authorized to revoke the presented token");
        },
      },
      registration: { enabled: options.dynamicRegistration ?? true },
      userinfo: { enabled: true },
      resourceIndicators: {
        enabled: true,
        defaultResource: async (_ctx, _client, oneOf) => oneOf,
        useGrantedResource: async () => false,
        getResourceServerInfo: async (_ctx, resource) => resourceServerInfo(options)(resource),
      },
    },
    async renderError(ctx: KoaContextWithOIDC, out) {
      ctx.type = "html";
      ctx.body = errorPage(
        String(out.error),
        out.error_description ? String(out.error_description) : undefined,
        ctx.oidc?.client?.clientName ?? ctx.oidc?.client?.clientId,
      );
    },
  };
}

/** On the device flow's resume route ctx.oidc.client is unset: find the client through the interaction. */
async function deviceClientName(ctx: KoaContextWithOIDC): Promise<string | undefined> {
  const { oidc } = ctx;
  const id =
    oidc.client?.clientId ??
    oidc.entities.Interaction?.params.client_id ??
    oidc.deviceCode?.clientId;
  if (typeof id !== "string") return undefined;
  const client = await oidc.provider.Client.find(id).catch(() => undefined);
  return shownClientName(client?.clientName, id);
}

function cliClient(): ClientMetadata {
  return nativeClient(CLI_CLIENT_ID, "agentauth CLI");
}

function nativeClient(clientId: string, name: string): ClientMetadata {
  return {
    client_id: clientId,
    client_name: name,
    application_type: "native",
    token_endpoint_auth_method: "none",
    grant_types: [
      "authorization_code",
      "refresh_token",
      "urn:ietf:params:oauth:grant-type:device_code",
    ],
    response_types: ["code"],
    redirect_uris: ["http://127.0.0.1/callback"],
  };
}

/**
 * A public browser-flow client (code + PKCE + refresh, no device flow) with one loopback redirect path. Native, so
 * oidc-provider matches a loopback IP redirect URI on any port (RFC 8252 §7.3), like the CLI's.
 */
function codeClient(clientId: string, name: string, callbackPath: string): ClientMetadata {
  return {
    client_id: clientId,
    client_name: name,
    application_type: "native",
    token_endpoint_auth_method: "none",
    grant_types: ["authorization_code", "refresh_token"],
    response_types: ["code"],
    redirect_uris: [`http://127.0.0.1${callbackPath}`],
  };
}

/** Per-resource TTLs looked up by normalized URL, so `https://a.test` and `https://a.test/` are one resource. */
export function resourceTtls(
  ttls: Record<string, number>,
): (resource: string) => number | undefined {
  const byUrl = new Map<string, number>();
  for (const [resource, seconds] of Object.entries(ttls)) {
    const url = URL.parse(resource);
    if (!url || !Number.isInteger(seconds) || seconds < 1)
      throw new AgentAuthError(
        "idp_invalid_option",
        `resourceTokenTtlSeconds: "${resource}" needs an absolute URL and a whole number of seconds (at least 1)`,
      );
    byUrl.set(url.href, seconds);
  }
  return (resource) => {
    const url = URL.parse(resource);
    return url ? byUrl.get(url.href) : undefined;
  };
}

/** RFC 8707 §2: an absolute URI without a fragment. */
function assertResourceIndicator(resource: string): void {
  const url = URL.parse(resource);
  if (!url || url.hash || (url.protocol !== "https:" && url.protocol !== "http:")) {
    throw new errors.InvalidTarget("resource must be an absolute http(s) URI without a fragment");
  }
}
