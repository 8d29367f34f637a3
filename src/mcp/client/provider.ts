/**
 * `agentAuthProvider(options)`: the official MCP SDK's client `AuthProvider` (`@modelcontextprotocol/client` 2.x:
 * `token()` before every request, `onUnauthorized(ctx)` on a 401, then the transport retries once) on agentauth's
 * engine. Tokens come from the `TokenRefresher` over the vault, keyed {subject, issuer, resource = the server's
 * canonical URI}, so a thousand concurrent requests at expiry share one refresh (single flight in the process, the
 * store's lease across processes). A 401 forces one refresh per stale record version, shared by every request that
 * saw it; only a refused refresh token (`login_required`) starts a sign-in, itself single-flight, through the host's
 * `onAuthorizationUrl` (or, without a browser, the device flow's `onDeviceCode`), or fails with a typed
 * `login_required` when the host gave neither.
 */

import type { AuthProvider, FetchLike } from "@modelcontextprotocol/client";
import {
  type DevicePrompt,
  type DiscoveryOptions,
  isReservedSubject,
  LoginRequiredError,
  MetadataCache,
  type OAuthClient,
  TokenRefresher,
} from "../../oauth/index.ts";
import type { CredentialKey, CredentialStore } from "../../vault/index.ts";
import { readUnauthorized, type UnauthorizedHints } from "./challenge.ts";
import { discoverMcpAuthorization, type McpDiscoveryOptions } from "./discovery.ts";
import { McpAuthError } from "./errors.ts";
import { checkClientIdUrl } from "./metadata-document.ts";
import type { SignInMethod } from "./registration.ts";
import { canonicalMcpServerUrl, displayMcpServerUrl, McpServerUrlError } from "./server-url.ts";
import { signInToMcpServer } from "./sign-in.ts";
import { addsScopes, DEFAULT_MAX_STEP_UPS, scopeUnion } from "./step-up.ts";

/** The SDK declares `UnauthorizedContext` but does not export it (2.4.0): take it from `AuthProvider`. */
type UnauthorizedContext = Parameters<NonNullable<AuthProvider["onUnauthorized"]>>[0];

export interface AgentAuthProviderOptions {
  /** The MCP server's URL (the Streamable HTTP endpoint); its canonical form is the RFC 8707 `resource`. */
  serverUrl: string | URL;
  /** The vault holding the credential. */
  store: CredentialStore;
  /** Whose credential this is (the vault subject), e.g. the local user. */
  subject: string;
  /** The authorization server's issuer when known; otherwise learnt from the server's metadata on the first 401. */
  issuer?: string;
  /** Share one refresher between providers over the same store (default: one per provider). */
  refresher?: TokenRefresher;
  /** Asked to show the person the authorization URL (open a browser, print it, elicit it). Without it and without
   * `onDeviceCode`, a needed sign-in fails with `McpAuthError` `login_required`. */
  onAuthorizationUrl?: (url: URL) => Promise<void>;
  /**
   * For hosts without a browser: show the person the verification URL and code of the device flow (RFC 8628). Used
   * when `signInMethod` is "device", or when it is the only callback given and the server has the device flow.
   */
  onDeviceCode?: (prompt: DevicePrompt) => Promise<void>;
  /** Default: "browser" when `onAuthorizationUrl` is given, else "device". */
  signInMethod?: SignInMethod;
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
  /** The RFC 8707 resource this provider's tokens are for. */
  readonly canonicalUri: string;
  /**
   * Pass as the transport's `fetch` option: it notes which stored token each response answered, so a 401 forces a
   * refresh of exactly that token's version. Without it a 401 is taken to be about the token last handed out,
   * which under concurrency can cost one extra refresh (never a lost refresh token).
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

// A few recent tokens suffice: a response answers a token handed out moments before.
const REMEMBERED_TOKENS = 8;

/**
 * The client's key for a server: its canonical URI through the one MCP server URL check (`canonicalMcpServerUrl`):
 * absolute https (plain http only on loopback: the provider sends tokens there, OAuth 2.1 §1.5), scheme and host
 * lower-cased, no fragment, the path kept as given since MCP servers are often one path of a larger origin. No user
 * name or password (it would be a secret in the vault key and in the RFC 8707 resource sent to the authorization
 * server). A query is kept: the host configured the URL and connects to it as given. Code `invalid_server_url`.
 * (The server side's `canonicalServerUri` is stricter: it checks an operator's configuration, this a URL the host
 * was given.)
 */
export function serverResourceUri(serverUrl: string | URL): string {
  try {
    return canonicalMcpServerUrl(serverUrl, { query: "allow" }).href;
  } catch (error) {
    if (!(error instanceof McpServerUrlError)) throw error;
    throw new McpAuthError("invalid_server_url", error.message);
  }
}

/**
 * @example
 * const authProvider = agentAuthProvider({ serverUrl, store: vault, subject: "alice", onAuthorizationUrl: open });
 * const transport = new StreamableHTTPClientTransport(new URL(serverUrl), { authProvider, fetch: authProvider.fetch });
 * await new Client({ name: "app", version: "1" }).connect(transport);
 *
 * // A host without a browser, which publishes a client metadata document (used where the server supports it):
 * agentAuthProvider({ serverUrl, store: vault, subject: "alice",
 *   clientMetadataUrl: "https://app.example/oauth/client.json",
 *   onDeviceCode: async (p) => print(`Open ${p.verificationUri} and enter ${p.userCode}`) });
 */
export function agentAuthProvider(options: AgentAuthProviderOptions): AgentAuthProvider {
  const canonicalUri = serverResourceUri(options.serverUrl);
  // How messages name the server: a kept query may be a key (shown as `?…`).
  const shown = displayMcpServerUrl(canonicalUri);
  if (isReservedSubject(options.subject)) {
    throw new McpAuthError(
      "invalid_subject",
      'Subjects starting with "agentauth:" are agentauth\'s own vault records (client registrations); choose another subject.',
    );
  }
  // Checked now, so a misconfigured host learns at start-up rather than at an authorization server's error page.
  const clientMetadataUrl =
    options.clientMetadataUrl === undefined
      ? undefined
      : checkClientIdUrl(options.clientMetadataUrl, {
          allowInsecure: options.allowInsecureClientMetadataUrl,
        });
  if (options.signInMethod !== undefined && !["browser", "device"].includes(options.signInMethod)) {
    throw new McpAuthError("sign_in_unavailable", 'signInMethod must be "browser" or "device".');
  }
  const refresher = options.refresher ?? new TokenRefresher({ store: options.store });
  const registrations = new Map<string, Promise<OAuthClient>>();
  let issuer = options.issuer;
  // The RFC 8707 resource tokens are kept under: the server's URL until its metadata names a covering resource
  // (a root document names the origin); learnt with the issuer at each 401.
  let resource = canonicalUri;
  // The version of the record whose token was last handed out: a 401 is taken to be about that version.
  let handedVersion: number | undefined;
  // One forced refresh per stale version, shared by every request that saw it.
  const forced = new Map<number, Promise<void>>();
  let signingIn: Promise<void> | undefined;
  // Access token → record version, and response → the version of the token it answered (see `fetch`).
  const versionOfToken = new Map<string, number>();
  const answered = new WeakMap<Response, number>();
  // Responses to requests that carried no token (seen through `fetch`): their 401 says nothing about a stored one.
  const bare = new WeakSet<Response>();
  let stepUps = 0;
  let issuerCheck: Promise<{ issuer: string; resource: string }> | undefined;

  const keyOf = (iss: string): CredentialKey => ({
    subject: options.subject,
    issuer: iss,
    resource,
  });

  async function token(): Promise<string | undefined> {
    if (!issuer) return undefined;
    try {
      const record = await refresher.getCredential(keyOf(issuer));
      handedVersion = record.version;
      const value = record.tokens.accessToken?.reveal();
      if (value !== undefined && !versionOfToken.has(value)) {
        versionOfToken.set(value, record.version);
        if (versionOfToken.size > REMEMBERED_TOKENS) {
          versionOfToken.delete(versionOfToken.keys().next().value as string);
        }
      }
      return value;
    } catch (error) {
      // No usable credential: send the request bare, so the server's 401 tells us where to sign in.
      if (error instanceof LoginRequiredError) return undefined;
      throw error;
    }
  }

  async function stepUp(challenge: ScopeChallenge): Promise<void> {
    const stored = issuer ? await options.store.get(keyOf(issuer)) : undefined;
    const granted = stored?.scopes ?? [];
    const wanted = scopeUnion(granted, challenge.requiredScope);
    if (!addsScopes(wanted, granted)) {
      throw new McpAuthError(
        "step_up_adds_nothing",
        `The MCP server ${shown} asked for scopes that are already granted; signing in again would not help. Check the server's scope requirements.`,
      );
    }
    if (stepUps >= (options.maxStepUps ?? DEFAULT_MAX_STEP_UPS)) {
      throw new McpAuthError(
        "step_up_exhausted",
        `The MCP server ${shown} asked for more scopes ${stepUps} times; agentauth stops here. Check the server's scope requirements.`,
      );
    }
    const metadataUrl = challenge.resourceMetadataUrl;
    if (metadataUrl && metadataUrl.origin !== new URL(canonicalUri).origin) {
      throw new McpAuthError(
        "resource_metadata_cross_origin",
        `The MCP server ${shown} pointed its resource metadata at ${metadataUrl.origin}, another origin; agentauth does not follow it. Check the server's authorization setup.`,
      );
    }
    stepUps++;
    await signIn({ scope: wanted, resourceMetadataUrl: metadataUrl });
  }

  async function signIn(hints: UnauthorizedHints): Promise<void> {
    if (!options.onAuthorizationUrl && !options.onDeviceCode) {
      throw new McpAuthError(
        "login_required",
        `Signing in to the MCP server ${shown} is needed, and no way to ask the person was given; ${shown === canonicalUri ? `run \`agentauth mcp login ${canonicalUri}\` or ` : ""}pass onAuthorizationUrl (or onDeviceCode).`,
      );
    }
    signingIn ??= signInToMcpServer({
      canonicalUri,
      subject: options.subject,
      store: options.store,
      hints,
      onAuthorizationUrl: options.onAuthorizationUrl,
      onDeviceCode: options.onDeviceCode,
      signInMethod: options.signInMethod,
      clientFor: options.clientFor,
      clientMetadataUrl,
      registrations,
      clientName: options.clientName,
      discovery: options.discovery,
      crossOriginEndpoints: options.crossOriginEndpoints,
      timeoutMs: options.signInTimeoutMs ?? 300_000,
      signal: options.signInSignal?.(),
    })
      .then((record) => {
        issuer = record.issuer;
        resource = record.resource;
      })
      .finally(() => {
        signingIn = undefined;
      });
    return signingIn;
  }

  async function refreshAfter401(iss: string, seen: number): Promise<void> {
    const key = keyOf(iss);
    const current = await options.store.get(key);
    // Someone (this process or another) already replaced the token the server refused.
    if (current && current.version > seen && current.status === "active") return;
    let run = forced.get(seen);
    if (!run) {
      run = refresher.forceRefresh(key).then(() => undefined);
      forced.set(seen, run);
      // Forget it once settled and replaced, so the map stays small; a late 401 for `seen` sees the newer version.
      run.finally(() => forced.delete(seen)).catch(() => {});
    }
    return run;
  }

  /**
   * The authorization server the MCP server names now, and the resource it covers. Credentials and registrations are
   * keyed by issuer, so a server that moved to another authorization server leads to a new sign-in (and
   * registration) there (MCP 2026-07-28; RFC 6749 §2.2). Concurrent 401s share one discovery. When the issuer is
   * known and discovery fails, the known one is kept: a flaky metadata endpoint must not sign the user out.
   */
  function currentAuthority(
    hints: UnauthorizedHints,
  ): Promise<{ issuer: string; resource: string }> {
    issuerCheck ??= (async () => {
      try {
        // The protected resource metadata is read afresh (never cached): a 401 is the moment a moved server shows it.
        const target = await discoverMcpAuthorization(canonicalUri, hints, {
          ...options.discovery,
          crossOriginEndpoints: options.crossOriginEndpoints,
        });
        return { issuer: target.as.issuer, resource: target.resource };
      } catch (error) {
        if (issuer) return { issuer, resource };
        throw error;
      }
    })().finally(() => {
      issuerCheck = undefined;
    });
    return issuerCheck;
  }

  async function onUnauthorized(ctx: UnauthorizedContext): Promise<void> {
    const hints = readUnauthorized(ctx.response.headers.get("www-authenticate"), ctx.serverUrl);
    ({ issuer, resource } = await currentAuthority(hints));
    const seen = answered.get(ctx.response) ?? handedVersion;
    const stored = await options.store.get(keyOf(issuer));
    // A request sent without a token (the issuer was not known yet): its 401 only named the issuer, so a stored
    // credential is used as it is (refreshed only if it is due), not force-refreshed at every process start.
    const sentBare =
      bare.has(ctx.response) || (!answered.has(ctx.response) && handedVersion === undefined);
    if (sentBare && stored?.status === "active") {
      try {
        await refresher.getCredential(keyOf(issuer));
        return;
      } catch (error) {
        if (error instanceof LoginRequiredError) return signIn(hints);
        throw error;
      }
    }
    if (stored?.status !== "active" || !stored.tokens.refreshToken) {
      return signIn(hints);
    }
    try {
      await refreshAfter401(issuer as string, seen ?? stored.version);
    } catch (error) {
      if (error instanceof LoginRequiredError) return signIn(hints);
      throw error;
    }
  }

  const fetchNoting: FetchLike = async (url, init) => {
    const response = await fetch(url, init);
    const authorization = new Headers(init?.headers).get("authorization");
    const version = authorization && versionOfToken.get(authorization.replace(/^Bearer /i, ""));
    if (typeof version === "number") answered.set(response, version);
    else if (!authorization) bare.add(response);
    return response;
  };

  return { canonicalUri, token, onUnauthorized, fetch: fetchNoting, stepUp };
}
