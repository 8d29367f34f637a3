/**
 * The building blocks every preset uses: its client (id, secret wrapped, the auth method the provider documents)
 * and its static authorization server metadata, with endpoints rebased and the provider's quirks attached.
 */

import * as oauth from "oauth4webapi";
import { Secret } from "../core/secret.ts";
import {
  type AuthorizationServer,
  type HttpQuirks,
  isLoopback,
  type OAuthClient,
  pkceUndocumented,
  type QuirkyServer,
  quirksFetch,
  serverFetch,
} from "../oauth/index.ts";
import { ProviderConfigError } from "./errors.ts";
import { checkOrigins, type OriginMap, rebase } from "./origins.ts";

/** What every preset factory accepts. */
export interface PresetOptions {
  /** The OAuth client id registered with the provider. */
  clientId: string;
  /** A confidential client's secret (wrap it in `Secret`; a plain string is wrapped here). */
  clientSecret?: Secret | string;
  /** Scopes to ask for instead of the preset's default. */
  scope?: string;
  /** Send requests for the provider's origins elsewhere (a proxy; a simulator in tests): `{ real: replacement }`. */
  origins?: OriginMap;
}

export function presetClient(
  displayName: string,
  options: PresetOptions,
  authMethod: "client_secret_basic" | "client_secret_post",
): OAuthClient {
  if (typeof options.clientId !== "string" || options.clientId.trim() === "") {
    throw new ProviderConfigError(
      "provider_client_id_missing",
      `${displayName} needs the client id of the app you registered with it (clientId / --client-id).`,
    );
  }
  const secret =
    options.clientSecret instanceof Secret
      ? options.clientSecret
      : typeof options.clientSecret === "string" && options.clientSecret !== ""
        ? new Secret(options.clientSecret)
        : undefined;
  return secret
    ? { clientId: options.clientId, clientSecret: secret, authMethod }
    : { clientId: options.clientId, authMethod: "none" };
}

export interface StaticServerSpec {
  displayName: string;
  metadata: {
    issuer: string;
    authorization_endpoint?: string;
    token_endpoint: string;
    device_authorization_endpoint?: string;
    revocation_endpoint?: string;
    userinfo_endpoint?: string;
    jwks_uri?: string;
  };
  quirks: HttpQuirks;
  /** "s256": the provider documents PKCE S256; "undocumented": it does not (confidential clients only). */
  pkce: "s256" | "undocumented";
  origins?: OriginMap;
  /**
   * ID token issuer per token, for issuers that are templates (Microsoft's multi-tenant
   * `https://login.microsoftonline.com/{tenantid}/v2.0`): oauth4webapi's `_expectedIssuer` hook.
   */
  expectedIssuer?: (claims: Record<string, unknown>) => string;
}

// oauth4webapi exports this hook for issuer templates (it is how openid-client supports Entra ID multi-tenant
// apps) but leaves it out of its type declarations.
const expectedIssuerHook = (oauth as unknown as { _expectedIssuer: symbol })._expectedIssuer;

/** Metadata built once per preset instance; `issuer` is never rebased (it is an identifier, not a URL to call). */
export function staticServer(spec: StaticServerSpec): () => Promise<AuthorizationServer> {
  const origins = checkOrigins(spec.origins);
  const { issuer, ...endpoints } = spec.metadata;
  const server: QuirkyServer & Record<symbol, unknown> = { issuer };
  for (const [name, url] of Object.entries(endpoints)) {
    if (url !== undefined) (server as Record<string, unknown>)[name] = rebase(url, origins);
  }
  if (spec.pkce === "s256")
    (server as Record<string, unknown>).code_challenge_methods_supported = ["S256"];
  else server[pkceUndocumented] = true;
  server[serverFetch] = quirksFetch(spec.quirks, spec.displayName);
  const expected = spec.expectedIssuer;
  if (expected) {
    server[expectedIssuerHook] = (result: { claims: Record<string, unknown> }) =>
      expected(result.claims);
  }
  return async () => server;
}

/**
 * A self-hosted server's origin (GitHub Enterprise Server, GitLab self-managed): https, or http on loopback only
 * (`isLoopback`, the engine's rule for every OAuth URL), and the origin alone, without a path.
 */
export function selfHostedOrigin(
  value: string | undefined,
  product: string,
  example: string,
): string | undefined {
  if (value === undefined || value === "") return undefined;
  const url = URL.parse(value);
  if (!url || !(url.protocol === "https:" || (url.protocol === "http:" && isLoopback(url)))) {
    throw new ProviderConfigError(
      "provider_host_invalid",
      `The ${product} host ${JSON.stringify(value)} must be an https:// URL (http:// only on loopback).`,
    );
  }
  if (url.pathname !== "/" || url.search || url.hash) {
    throw new ProviderConfigError(
      "provider_host_invalid",
      `The ${product} host is the server's origin alone (${example}), without a path.`,
    );
  }
  return url.origin;
}
