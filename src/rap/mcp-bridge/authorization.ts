/**
 * Where the bridge's users sign in, learnt from the MCP server (MCP authorization 2026-07-28): its RFC 9728
 * protected-resource metadata (path-aware well-known URL, then the root one), the first authorization server it
 * names (RFC 8414 / OIDC discovery, exact issuer match, PKCE S256 required), and the tool's client there: the
 * operator's pre-registered one, else RFC 7591 dynamic registration with the TOOL's own redirect URI (its OAuth
 * callback endpoint). The result is an `OAuthProviderConfig` for the tool kit, with `resource` = the MCP server's
 * canonical URI (or the covering resource its metadata names), so the authorization request, the code exchange and
 * every refresh name it (RFC 8707).
 */

import { discoverMcpAuthorization, scopesFor } from "../../mcp/client/index.ts";
import {
  type AuthorizationServer,
  type DiscoveryOptions,
  type OAuthClient,
  type ProtectedResourceMetadata,
  type RegistrationMetadata,
  registerClient,
  storedRegistration,
} from "../../oauth/index.ts";
import type { CredentialStore } from "../../vault/index.ts";
import type { OAuthProviderConfig } from "../tool/options.ts";
import { McpBridgeError } from "./errors.ts";

export interface McpAuthorizationOptions {
  canonicalUri: string;
  /** `${publicBaseUrl}/oauth/callback`: registered with a dynamically registered client. */
  redirectUri: string;
  client?: OAuthClient;
  scope?: string;
  clientName: string;
  displayName: string;
  discovery?: DiscoveryOptions;
  /** Where the registration is kept and found again at the next start (the tool's vault). */
  store?: CredentialStore;
}

export interface McpAuthorization {
  provider: OAuthProviderConfig;
  /** Set when the client is a dynamic registration (without a store: keep it and pass it as `client` next time). */
  registered?: OAuthClient;
  /** True when that registration was found in the store rather than made now. */
  reused?: boolean;
}

/** The MCP server's metadata and its authorization server (no registration yet). */
export interface DiscoveredMcpServer {
  prm: ProtectedResourceMetadata;
  as: AuthorizationServer;
  /** The RFC 8707 resource the metadata names: the server's URL, or its origin or a path prefix of it. */
  resource: string;
}

export async function discoverMcpServer(
  canonicalUri: string,
  discovery?: DiscoveryOptions,
): Promise<DiscoveredMcpServer> {
  try {
    // The MCP client's discovery and checks (exact issuer, PKCE S256, endpoints on the issuer's origin); a server
    // without RFC 9728 metadata is not bridged: the tool kit finds the authorization server by its issuer.
    const target = await discoverMcpAuthorization(canonicalUri, {}, discovery);
    if (!target.prm) throw new Error("the MCP server publishes no protected resource metadata");
    return { prm: target.prm, as: target.as, resource: target.resource };
  } catch (error) {
    throw new McpBridgeError(
      "mcp_discovery_failed",
      `Where users of the MCP server ${canonicalUri} sign in could not be discovered (its OAuth protected resource metadata or its authorization server's metadata is missing or unusable). Check serverUrl and that the server is running, then start the tool again.`,
      { cause: error },
    );
  }
}

/**
 * The provider entry for the tool kit, registering the tool as a client first when no client was given (done
 * after the tool list was read, so a bridge that cannot start leaves no registration behind).
 */
export async function mcpProvider(
  { prm, as, resource }: DiscoveredMcpServer,
  options: McpAuthorizationOptions,
): Promise<McpAuthorization> {
  const { canonicalUri, discovery } = options;
  let client = options.client;
  let registered: OAuthClient | undefined;
  let reused: boolean | undefined;
  if (!client) {
    try {
      const loopback = isLoopback(new URL(options.redirectUri));
      const metadata: RegistrationMetadata = {
        client_name: options.clientName,
        // RFC 8252 §7.3: a native client's loopback redirect matches any port; a deployed tool is a web client.
        application_type: loopback ? "native" : "web",
        redirect_uris: [options.redirectUri],
        grant_types: ["authorization_code", "refresh_token"],
        response_types: ["code"],
        token_endpoint_auth_method: "none",
      };
      if (options.store) {
        // Kept in the vault under the redirect URI and the rest of the metadata: a restart signs users in as the
        // same client (their consent holds), and a changed publicBaseUrl registers a new one.
        const stored = await storedRegistration({
          store: options.store,
          as,
          metadata,
          ...discovery,
        });
        registered = stored.client;
        reused = stored.reused;
      } else {
        registered = await registerClient({ as, metadata, ...discovery });
      }
      client = registered;
    } catch (error) {
      throw new McpBridgeError(
        "mcp_registration_failed",
        `The authorization server ${as.issuer} of the MCP server ${canonicalUri} did not register this tool as a client (dynamic registration). Register a client with the redirect URI ${options.redirectUri} there and pass it as \`client\`.`,
        { cause: error },
      );
    }
  }
  return {
    provider: {
      issuer: as.issuer,
      client,
      scope: options.scope ?? (scopesFor({}, prm, as) || undefined),
      resource,
      displayName: options.displayName,
    },
    registered,
    reused,
  };
}

function isLoopback(url: URL): boolean {
  const host = url.hostname;
  return host === "localhost" || host === "[::1]" || /^127\.\d+\.\d+\.\d+$/.test(host);
}
