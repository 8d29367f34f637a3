/** What a host gives `agentAuthProvider` and what it gets back (provider.ts builds it). */

import type { AuthProvider, FetchLike } from "@modelcontextprotocol/client";
import type {
  DevicePrompt,
  DiscoveryOptions,
  OAuthClient,
  TokenRefresher,
} from "../../oauth/index.ts";
import type { CredentialStore } from "../../vault/index.ts";
import type { McpDiscoveryOptions } from "./discovery.ts";
import type { DpopPolicy } from "./dpop-policy.ts";
import type { McpGrant } from "./grants.ts";
import type { SignInMethod } from "./registration.ts";

export interface AgentAuthProviderOptions {
  /** The MCP server's URL (the Streamable HTTP endpoint); its canonical form is the RFC 8707 `resource`. */
  serverUrl: string | URL;
  /** The vault holding the credential. */
  store: CredentialStore;
  /** Whose credential this is (the vault subject), e.g. the local user, or the workload for a `grant`. */
  subject: string;
  /** The authorization server's issuer when known; otherwise learnt from the server's metadata on the first 401. */
  issuer?: string;
  /** Share one refresher between providers over the same store (default: one per provider). */
  refresher?: TokenRefresher;
  /** Asked to show the person the authorization URL (open a browser, print it, elicit it). Without it and without
   * `onDeviceCode` (or a `grant`), a needed sign-in fails with `McpAuthError` `login_required`. */
  onAuthorizationUrl?: (url: URL) => Promise<void>;
  /**
   * For hosts without a browser: show the person the verification URL and code of the device flow (RFC 8628). Used
   * when `signInMethod` is "device", or when it is the only callback given and the server has the device flow.
   */
  onDeviceCode?: (prompt: DevicePrompt) => Promise<void>;
  /** Default: "browser" when `onAuthorizationUrl` is given, else "device". */
  signInMethod?: SignInMethod;
  /**
   * Sign in without a person (grants.ts): `clientCredentials()`, `workloadIdentity({ assertion })` or
   * `enterpriseManaged({ idp, idToken })`. The client comes from `clientFor`; the person callbacks are not used.
   */
  grant?: McpGrant;
  /** A pre-registered client for an issuer; without one, a client metadata document or dynamic registration. */
  clientFor?: (issuer: string) => OAuthClient | undefined;
  /**
   * The HTTPS URL where the host publishes its client metadata document (build it with `clientMetadataDocument`):
   * the client_id at authorization servers that advertise `client_id_metadata_document_supported`.
   */
  clientMetadataUrl?: string;
  /** Accept an http `clientMetadataUrl` on a loopback host: tests and local development only. */
  allowInsecureClientMetadataUrl?: boolean;
  clientName?: string;
  discovery?: DiscoveryOptions;
  /**
   * Authorization servers (issuers) allowed to keep their endpoints on another origin than the issuer, or `true` for
   * any. Default none: an authorization server learnt from the MCP server whose authorization, token or device
   * endpoint is elsewhere is refused (`endpoint_off_issuer`), since that is how a hostile server captures a sign-in
   * at a real one (RFC 9700 §4.4). Give it only for servers you trust (Google, Amazon Cognito need it).
   */
  crossOriginEndpoints?: McpDiscoveryOptions["crossOriginEndpoints"];
  /**
   * DPoP-bound tokens (RFC 9449): "auto" (default) when the server offers the DPoP scheme and its authorization
   * server takes ES256 proofs; "require" refuses anything else; "off" never. Bound tokens need `fetch` below.
   */
  dpop?: DpopPolicy;
  /** How long a sign-in may wait for the person. Default 5 minutes. */
  signInTimeoutMs?: number;
  /**
   * Read when a sign-in starts: aborting the signal it returns ends that sign-in (its loopback listener closes) with
   * `CancelledError`, e.g. when the host's connection to the person closes or the person logs out. A function,
   * since a provider outlives one such signal.
   */
  signInSignal?: () => AbortSignal | undefined;
  /** How many step-ups (`stepUp`) this provider allows. Default 3. */
  maxStepUps?: number;
}

/** What `stepUp` needs from the SDK's `InsufficientScopeError` (its `requiredScope` is space-separated). */
export interface ScopeChallenge {
  requiredScope?: string;
  resourceMetadataUrl?: URL;
}

export interface AgentAuthProvider extends AuthProvider {
  /** The MCP server's canonical URI (the resource is this, or the covering resource its metadata names). */
  readonly canonicalUri: string;
  /**
   * Pass as the transport's `fetch` option: it notes which stored token each response answered, so a 401 forces a
   * refresh of exactly that token's version, and it presents DPoP-bound tokens with their proofs (presenter.ts).
   * Without it a 401 is taken to be about the token last handed out, which under concurrency can cost one extra
   * refresh (never a lost refresh token), and a DPoP-bound credential cannot be used (`dpop_needs_fetch`).
   */
  readonly fetch: FetchLike;
  /**
   * After the SDK throws `InsufficientScopeError` (a 403 `insufficient_scope`): signs in again for the union of
   * the granted and the required scopes, then the host retries the call. Bounded by `maxStepUps`; typed
   * `McpAuthError` `step_up_exhausted` beyond it, `step_up_adds_nothing` when the server asks for scopes
   * already granted.
   */
  stepUp(challenge: ScopeChallenge): Promise<void>;
}
