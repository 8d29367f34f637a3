/**
 * Sign-in to an MCP server's authorization server (MCP authorization 2026-07-28): RFC 9728 protected-resource
 * discovery (the 401's `resource_metadata`, else the path-aware well-known URL, else the root one), RFC 8414/OIDC
 * discovery with exact issuer match, PKCE S256 required, `resource` = the server's canonical URI on every leg, RFC
 * 9207 `iss` checked before the code is redeemed (the engine's completeAuthorization), `offline_access` when listed.
 * Registration in the spec's order (registration.ts). The person is reached through the host: the authorization URL
 * (`onAuthorizationUrl`) or, for hosts without a browser, the device flow's code (`onDeviceCode`, RFC 8628, with
 * `resource` on the device authorization and token requests).
 */

import {
  type AuthorizationServer,
  assertPkceS256,
  CancelledError,
  type DevicePrompt,
  type DiscoveryOptions,
  discoverAuthorizationServer,
  discoverProtectedResource,
  isReservedSubject,
  login,
  MetadataCache,
  type OAuthClient,
  type ProtectedResourceMetadata,
  RESERVED_SUBJECT_PREFIX,
} from "../../oauth/index.ts";
import type { CredentialRecord, CredentialStore } from "../../vault/index.ts";
import type { UnauthorizedHints } from "./challenge.ts";
import { McpAuthError } from "./errors.ts";
import {
  clientForServer,
  forgetDynamicClient,
  type RegistrationOptions,
  type SignInMethod,
} from "./registration.ts";
import { displayMcpServerUrl } from "./server-url.ts";

export interface SignInOptions extends RegistrationOptions {
  canonicalUri: string;
  /** The vault subject; undefined lets the engine pick it as `login()` does (the ID token's sub, else "default"). */
  subject?: string;
  store: CredentialStore;
  hints: UnauthorizedHints;
  /** Browser flow: show the person the authorization URL. */
  onAuthorizationUrl?: (url: URL) => Promise<void>;
  /** Device flow (RFC 8628): show the person the verification URL and code. */
  onDeviceCode?: (prompt: DevicePrompt) => Promise<void>;
  /** Default: browser when `onAuthorizationUrl` is given, else device when the server has the device flow. */
  signInMethod?: SignInMethod;
  timeoutMs?: number;
  /** Ends the sign-in (the loopback listener or the device polling) with `CancelledError` when aborted. */
  signal?: AbortSignal;
}

/** RFC 9728 §3 + MCP: the challenge's URL first, then path-aware well-known, then the root well-known URL. */
export async function discoverServerMetadata(
  canonicalUri: string,
  hints: UnauthorizedHints,
  discovery: DiscoveryOptions = {},
): Promise<ProtectedResourceMetadata> {
  if (hints.resourceMetadataUrl) {
    return discoverProtectedResource(canonicalUri, {
      ...discovery,
      resourceMetadataUrl: hints.resourceMetadataUrl,
    });
  }
  try {
    return await discoverProtectedResource(canonicalUri, discovery);
  } catch (pathAware) {
    const root = new URL("/.well-known/oauth-protected-resource", canonicalUri);
    try {
      return await discoverProtectedResource(canonicalUri, {
        ...discovery,
        resourceMetadataUrl: root,
      });
    } catch {
      throw pathAware;
    }
  }
}

/** The authorization server the metadata names (the first one: MCP lets the client choose). */
export async function authorizationServerOf(
  prm: ProtectedResourceMetadata,
  canonicalUri: string,
  discovery?: DiscoveryOptions,
): Promise<AuthorizationServer> {
  const issuer = prm.authorization_servers?.[0];
  if (!issuer) {
    throw new McpAuthError(
      "no_authorization_server",
      `The MCP server ${displayMcpServerUrl(canonicalUri)} names no authorization server in its protected resource metadata; it cannot be signed in to.`,
    );
  }
  const as = await discoverAuthorizationServer(issuer, discovery);
  assertPkceS256(as);
  return as;
}

/** Scopes to ask for: the challenge's, else the metadata's, plus `offline_access` when the server lists it. */
export function scopesFor(
  hints: UnauthorizedHints,
  prm: ProtectedResourceMetadata,
  as: AuthorizationServer,
): string {
  const scopes = new Set(hints.scope ?? prm.scopes_supported ?? []);
  if (as.scopes_supported?.includes("offline_access")) scopes.add("offline_access");
  return [...scopes].join(" ");
}

export async function signInToMcpServer(options: SignInOptions): Promise<CredentialRecord> {
  const { canonicalUri, hints, discovery } = options;
  if (options.subject !== undefined && isReservedSubject(options.subject)) {
    throw new McpAuthError(
      "invalid_subject",
      `Subjects starting with "${RESERVED_SUBJECT_PREFIX}" are agentauth's own vault records; choose another subject.`,
    );
  }
  // Read afresh: a sign-in follows a 401, and the server may have moved to another authorization server.
  const prm = await discoverServerMetadata(canonicalUri, hints, {
    ...discovery,
    cache: new MetadataCache(),
  });
  const as = await authorizationServerOf(prm, canonicalUri, discovery);
  const method = signInMethodFor(options, as);
  const { client, kind } = await clientForServer(options, as, method);
  try {
    return await signInAs(options, prm, as, method, client);
  } catch (error) {
    // A stored registration the server no longer knows (its storage was reset, the client was deleted) fails at
    // the device authorization or token endpoint: forget it and register once again. At the authorization endpoint
    // the browser shows the error instead; the registration store's RFC 7592 check catches that case beforehand.
    const refused = (error as { oauthError?: unknown }).oauthError;
    if (kind !== "dynamic" || (refused !== "invalid_client" && refused !== "unauthorized_client"))
      throw error;
    await forgetDynamicClient(options, as, method, client.clientId);
    const again = await clientForServer(options, as, method);
    return signInAs(options, prm, as, method, again.client);
  }
}

async function signInAs(
  options: SignInOptions,
  prm: ProtectedResourceMetadata,
  as: AuthorizationServer,
  method: SignInMethod,
  client: OAuthClient,
): Promise<CredentialRecord> {
  const { canonicalUri, hints, discovery } = options;
  const common = {
    issuer: as.issuer,
    client,
    store: options.store,
    scope: scopesFor(hints, prm, as),
    resource: canonicalUri,
    subject: options.subject,
    discovery,
  };
  if (method === "device") {
    const onDeviceCode = options.onDeviceCode as NonNullable<SignInOptions["onDeviceCode"]>;
    const timeout = AbortSignal.timeout(options.timeoutMs ?? 300_000);
    try {
      // The device code itself never leaves the engine: the host sees only what the person needs.
      return await login({
        ...common,
        flow: "device",
        signal: options.signal ? AbortSignal.any([timeout, options.signal]) : timeout,
        onDevicePrompt: (prompt) => onDeviceCode(prompt),
      });
    } catch (error) {
      if (!(error instanceof CancelledError && timeout.aborted && !options.signal?.aborted))
        throw error;
      throw new McpAuthError(
        "login_timeout",
        `Nobody entered the code for the MCP server ${displayMcpServerUrl(canonicalUri)} in time; sign in again and enter the new code.`,
        { cause: error },
      );
    }
  }
  const onAuthorizationUrl = options.onAuthorizationUrl as NonNullable<
    SignInOptions["onAuthorizationUrl"]
  >;
  return login({
    ...common,
    flow: "browser",
    timeoutMs: options.timeoutMs,
    signal: options.signal,
    openUrl: (url) => onAuthorizationUrl(url),
  });
}

/**
 * The browser flow when the host can show a URL (the default), the device flow (RFC 8628) when the host asked for
 * it or can only show a code, and the server has a device authorization endpoint.
 */
export function signInMethodFor(
  options: Pick<
    SignInOptions,
    "signInMethod" | "onAuthorizationUrl" | "onDeviceCode" | "canonicalUri"
  >,
  as: AuthorizationServer,
): SignInMethod {
  const method = options.signInMethod ?? (options.onAuthorizationUrl ? "browser" : "device");
  if (method === "browser") {
    if (!options.onAuthorizationUrl) {
      throw new McpAuthError(
        "sign_in_unavailable",
        `signInMethod "browser" needs onAuthorizationUrl to show the person where to sign in to ${displayMcpServerUrl(options.canonicalUri)}; pass it, or use the device flow with onDeviceCode.`,
      );
    }
    return "browser";
  }
  if (!options.onDeviceCode) {
    throw new McpAuthError(
      "sign_in_unavailable",
      `signInMethod "device" needs onDeviceCode to show the person the code for ${displayMcpServerUrl(options.canonicalUri)}; pass it, or use the browser flow with onAuthorizationUrl.`,
    );
  }
  if (!as.device_authorization_endpoint) {
    throw new McpAuthError(
      "device_flow_unsupported",
      `The authorization server ${as.issuer} of the MCP server ${displayMcpServerUrl(options.canonicalUri)} has no device flow (RFC 8628); sign in with a browser instead (pass onAuthorizationUrl).`,
    );
  }
  return "device";
}
