/**
 * Sign-in to an MCP server's authorization server (MCP authorization 2026-07-28): discovery.ts finds and checks the
 * resource and the authorization server (RFC 9728, RFC 8414/OIDC with exact issuer, PKCE S256, endpoints on the
 * issuer's origin, the 2025-03-26 fallback); `resource` = that resource on every leg, RFC 9207 `iss` checked before
 * the code is redeemed (the engine's completeAuthorization), `offline_access` when listed.
 * Registration in the spec's order (registration.ts). The person is reached through the host: the authorization URL
 * (`onAuthorizationUrl`) or, for hosts without a browser, the device flow's code (`onDeviceCode`, RFC 8628, with
 * `resource` on the device authorization and token requests).
 */

import {
  type AuthorizationServer,
  CancelledError,
  type DevicePrompt,
  isReservedSubject,
  login,
  MetadataCache,
  type OAuthClient,
  type ProtectedResourceMetadata,
  RESERVED_SUBJECT_PREFIX,
  TokenEndpointError,
} from "../../oauth/index.ts";
import type { CredentialRecord, CredentialStore } from "../../vault/index.ts";
import type { UnauthorizedHints } from "./challenge.ts";
import {
  assertVerificationOnIssuer,
  discoverMcpAuthorization,
  type McpAuthorizationTarget,
  type McpDiscoveryOptions,
} from "./discovery.ts";
import { assertBound, type DpopPolicy, wantsDpop } from "./dpop-policy.ts";
import { McpAuthError } from "./errors.ts";
import {
  clientForServer,
  forgetDynamicClient,
  type RegistrationOptions,
  type SignInMethod,
} from "./registration.ts";
import { displayMcpServerUrl } from "./server-url.ts";

export interface SignInOptions extends RegistrationOptions {
  /** Authorization servers allowed to keep endpoints off their issuer's origin (discovery.ts). Default none. */
  crossOriginEndpoints?: McpDiscoveryOptions["crossOriginEndpoints"];
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
  /** DPoP-bound tokens (dpop-policy.ts); default "auto". */
  dpop?: DpopPolicy;
}

/**
 * Scopes to ask for (MCP 2026-07-28 "Scope Selection Strategy"): the challenge's, else the metadata's
 * `scopes_supported`, else none (the `scope` parameter is then left out), plus `offline_access` when the
 * authorization server lists it.
 */
export function scopesFor(
  hints: UnauthorizedHints,
  prm: ProtectedResourceMetadata | undefined,
  as: AuthorizationServer,
): string {
  const scopes = new Set(hints.scope ?? prm?.scopes_supported ?? []);
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
  const target = await discoverMcpAuthorization(canonicalUri, hints, {
    ...discovery,
    cache: new MetadataCache(),
    crossOriginEndpoints: options.crossOriginEndpoints,
  });
  try {
    const record = await signInAt(options, target);
    return await assertBound(options.dpop, record, options.store, canonicalUri);
  } catch (error) {
    // Nothing said this server has OAuth endpoints: when one is missing, say that rather than how it answered.
    const missing =
      error instanceof TokenEndpointError &&
      (error.status === 404 || error.status === 405 || error.code === "invalid_response");
    if (!target.defaultEndpoints || !missing) throw error;
    throw new McpAuthError(
      "metadata_not_found",
      `The MCP server ${displayMcpServerUrl(canonicalUri)} publishes no OAuth metadata (no RFC 9728 protected resource metadata, no RFC 8414 metadata at its origin), and signing in at the 2025-03-26 default endpoints (/authorize, /token, /register) failed too. Check the server's URL, or ask its operator how to sign in.`,
      { cause: error },
    );
  }
}

async function signInAt(
  options: SignInOptions,
  target: McpAuthorizationTarget,
): Promise<CredentialRecord> {
  const { as } = target;
  const method = signInMethodFor(options, as);
  const { client, kind } = await clientForServer(options, as, method);
  try {
    return await signInAs(options, target, method, client);
  } catch (error) {
    // A stored registration the server no longer knows (its storage was reset, the client was deleted) fails at
    // the device authorization or token endpoint: forget it and register once again. At the authorization endpoint
    // the browser shows the error instead; the registration store's RFC 7592 check catches that case beforehand.
    const refused = (error as { oauthError?: unknown }).oauthError;
    if (kind !== "dynamic" || (refused !== "invalid_client" && refused !== "unauthorized_client"))
      throw error;
    await forgetDynamicClient(options, as, method, client.clientId);
    const again = await clientForServer(options, as, method);
    return signInAs(options, target, method, again.client);
  }
}

async function signInAs(
  options: SignInOptions,
  target: McpAuthorizationTarget,
  method: SignInMethod,
  client: OAuthClient,
): Promise<CredentialRecord> {
  const { canonicalUri, hints } = options;
  const { as } = target;
  const common = {
    dpop: wantsDpop(options.dpop, hints, as, canonicalUri),
    // The checked metadata itself, not the issuer to discover again: a 2025-03-26 server's default endpoints
    // exist nowhere else, and what was checked is what is used.
    as,
    client,
    store: options.store,
    // "" (not undefined, which would mean login()'s default OIDC scopes) leaves `scope` out of the requests.
    scope: scopesFor(hints, target.prm, as),
    resource: target.resource,
    subject: options.subject,
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
        onDevicePrompt: (prompt) => {
          // The person types the code only on the authorization server's own origin (RFC 8628 §5.4).
          assertVerificationOnIssuer(
            as,
            prompt.verificationUri,
            canonicalUri,
            options.crossOriginEndpoints,
          );
          if (prompt.verificationUriComplete) {
            assertVerificationOnIssuer(
              as,
              prompt.verificationUriComplete,
              canonicalUri,
              options.crossOriginEndpoints,
            );
          }
          return onDeviceCode(prompt);
        },
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
