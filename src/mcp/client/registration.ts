/**
 * Which OAuth client the MCP client signs in as, in the order MCP authorization 2026-07-28 ("Client Registration
 * Approaches") gives: a pre-registered client for this issuer; else a Client ID Metadata Document, when the
 * authorization server advertises `client_id_metadata_document_supported` and the host publishes one (client_id =
 * its URL, public client, PKCE); else RFC 7591 dynamic registration when the server has a registration endpoint;
 * else a typed error that tells the host to pre-register.
 *
 * Dynamic registrations are kept in the vault (oauth/registration-store.ts: one record per issuer and per
 * registration metadata, so the browser and the device method, and other client names, never share), so every
 * provider, process and restart over one vault signs in as one client; each sign-in reads the vault again. Without a
 * store (a caller of `clientForServer` that gives none) they live in `registrations`, in memory, per issuer and
 * method.
 */

import {
  type AuthorizationServer,
  type DiscoveryOptions,
  forgetRegistration,
  type OAuthClient,
  type RegistrationMetadata,
  registerClient,
  storedRegistration,
} from "../../oauth/index.ts";
import type { CredentialStore } from "../../vault/index.ts";
import { McpAuthError } from "./errors.ts";
import { DEVICE_CODE_GRANT, LOOPBACK_REDIRECT_URI } from "./metadata-document.ts";
import { displayMcpServerUrl } from "./server-url.ts";

export type SignInMethod = "browser" | "device";

export interface RegistrationOptions {
  canonicalUri: string;
  /** Pre-registered client per issuer. */
  clientFor?: (issuer: string) => OAuthClient | undefined;
  /** The URL of the host's client metadata document (already checked); used when the server supports it. */
  clientMetadataUrl?: string;
  /** Dynamic registrations of this provider, by `issuer method`. */
  registrations: Map<string, Promise<OAuthClient>>;
  clientName?: string;
  discovery?: DiscoveryOptions;
  /** Where dynamic registrations are kept across providers and processes (the credentials' vault). */
  store?: CredentialStore;
}

/** How the client was found, for hosts and tests that want to know. */
export type RegistrationKind = "pre-registered" | "metadata-document" | "dynamic";

export async function clientForServer(
  options: RegistrationOptions,
  as: AuthorizationServer,
  method: SignInMethod,
): Promise<{ client: OAuthClient; kind: RegistrationKind }> {
  const preRegistered = options.clientFor?.(as.issuer);
  if (preRegistered) return { client: preRegistered, kind: "pre-registered" };
  if (as.client_id_metadata_document_supported === true && options.clientMetadataUrl) {
    return {
      client: { clientId: options.clientMetadataUrl, authMethod: "none" },
      kind: "metadata-document",
    };
  }
  if (!as.registration_endpoint) {
    throw new McpAuthError(
      "registration_unavailable",
      `The authorization server ${as.issuer} of the MCP server ${displayMcpServerUrl(options.canonicalUri)} offers no way for agentauth to register a client` +
        (as.client_id_metadata_document_supported === true
          ? " other than a client metadata document, and none was given. Publish one (clientMetadataDocument) and pass clientMetadataUrl,"
          : " (no dynamic registration, no client metadata documents).") +
        " Register a client there and pass it with clientFor.",
    );
  }
  const metadata = registrationMetadata(options, method, as);
  if (options.store) {
    // Read from the vault at each sign-in (sign-ins are rare), not cached here: the store checks that the server
    // still knows the client, and another process may have replaced it.
    const stored = await storedRegistration({
      store: options.store,
      as,
      metadata,
      ...options.discovery,
    });
    return { client: stored.client, kind: "dynamic" };
  }
  const key = `${as.issuer} ${method}`;
  let registration = options.registrations.get(key);
  if (!registration) {
    registration = registerClient({ as, metadata, ...options.discovery });
    registration.catch(() => options.registrations.delete(key));
    options.registrations.set(key, registration);
  }
  return { client: await registration, kind: "dynamic" };
}

/**
 * What agentauth registers as for a sign-in method: a native client on the loopback redirect (RFC 8252), public
 * (PKCE, no secret) unless the server lists token endpoint methods without `none`: then the confidential method it
 * lists, basic before post, since asking for a method the server does not take only earns a refusal.
 */
export function registrationMetadata(
  options: Pick<RegistrationOptions, "clientName">,
  method: SignInMethod,
  as?: Pick<AuthorizationServer, "token_endpoint_auth_methods_supported">,
): RegistrationMetadata {
  return {
    client_name: options.clientName ?? "agentauth MCP client",
    application_type: "native",
    redirect_uris: [LOOPBACK_REDIRECT_URI],
    grant_types: [
      "authorization_code",
      "refresh_token",
      ...(method === "device" ? [DEVICE_CODE_GRANT] : []),
    ],
    response_types: ["code"],
    token_endpoint_auth_method: registrationAuthMethod(as?.token_endpoint_auth_methods_supported),
  };
}

/**
 * RFC 8414 §2 says an absent list means `client_secret_basic`, but servers that register MCP clients dynamically
 * take public clients as a rule, and a native client's secret protects nothing (RFC 8252 §8.5): absent → `none`.
 */
export function registrationAuthMethod(
  supported: readonly string[] | undefined,
): RegistrationMetadata["token_endpoint_auth_method"] {
  if (!supported || supported.length === 0 || supported.includes("none")) return "none";
  if (supported.includes("client_secret_basic")) return "client_secret_basic";
  if (supported.includes("client_secret_post")) return "client_secret_post";
  return "none";
}

/**
 * After the authorization server refused a dynamically registered client (`invalid_client`, `unauthorized_client`):
 * forgets it here and in the vault, so the next sign-in registers again.
 */
export async function forgetDynamicClient(
  options: RegistrationOptions,
  as: AuthorizationServer,
  method: SignInMethod,
  clientId: string,
): Promise<void> {
  options.registrations.delete(`${as.issuer} ${method}`);
  if (options.store) {
    await forgetRegistration(
      options.store,
      as.issuer,
      registrationMetadata(options, method, as),
      clientId,
    );
  }
}
