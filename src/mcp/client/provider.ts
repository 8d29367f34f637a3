/**
 * `agentAuthProvider(options)`: the official MCP SDK's client `AuthProvider` (`@modelcontextprotocol/client` 2.x:
 * `token()` before every request, `onUnauthorized(ctx)` on a 401, then the transport retries once) on agentauth's
 * engine. Tokens come from the `TokenRefresher` over the vault, keyed {subject, issuer, resource = the server's
 * canonical URI or the covering resource its metadata names}, so a thousand concurrent requests at expiry share one
 * refresh (single flight in the process, the store's lease across processes). A 401 forces one refresh per stale
 * record version, shared by every request that saw it; only a refused refresh token (`login_required`) starts a
 * sign-in, itself single-flight, through the host's `onAuthorizationUrl` (or, without a browser, the device flow's
 * `onDeviceCode`), or the host's `grant` when no person is involved (grants.ts), or fails with a typed
 * `login_required` when the host gave none. DPoP-bound tokens (RFC 9449) travel only through `fetch`
 * (presenter.ts).
 */

import type { AuthProvider } from "@modelcontextprotocol/client";
import {
  isReservedSubject,
  LoginRequiredError,
  type OAuthClient,
  TokenRefresher,
} from "../../oauth/index.ts";
import type { CredentialKey, CredentialRecord } from "../../vault/index.ts";
import { readUnauthorized, type UnauthorizedHints } from "./challenge.ts";
import { coveringResource, discoverMcpAuthorization } from "./discovery.ts";
import { McpAuthError } from "./errors.ts";
import { signInWithGrant } from "./machine-sign-in.ts";
import { checkClientIdUrl } from "./metadata-document.ts";
import { createPresenter } from "./presenter.ts";
import type {
  AgentAuthProvider,
  AgentAuthProviderOptions,
  ScopeChallenge,
} from "./provider-options.ts";
import { canonicalMcpServerUrl, displayMcpServerUrl, McpServerUrlError } from "./server-url.ts";
import { signInToMcpServer } from "./sign-in.ts";
import { addsScopes, DEFAULT_MAX_STEP_UPS, scopeUnion } from "./step-up.ts";

export type { AgentAuthProvider, AgentAuthProviderOptions, ScopeChallenge };

/** The SDK declares `UnauthorizedContext` but does not export it (2.4.0): take it from `AuthProvider`. */
type UnauthorizedContext = Parameters<NonNullable<AuthProvider["onUnauthorized"]>>[0];

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
  // Until a 401's discovery says which resource the server names: what the vault already keeps for it (below).
  let resourceLookup: Promise<void> | undefined;
  // The version of the record whose token was last handed out: a 401 is taken to be about that version.
  let handedVersion: number | undefined;
  // One forced refresh per stale version, shared by every request that saw it.
  const forced = new Map<number, Promise<void>>();
  let signingIn: Promise<void> | undefined;
  const presenter = createPresenter();
  let stepUps = 0;
  let issuerCheck: Promise<{ issuer: string; resource: string }> | undefined;
  // What the last 401 said (its DPoP offer, scopes), for a grant that runs again at expiry without one.
  let lastHints: UnauthorizedHints = {};

  const keyOf = (iss: string): CredentialKey => ({
    subject: options.subject,
    issuer: iss,
    resource,
  });

  /**
   * Once, before discovery has said: the vault's credential for this server under this issuer, its own URL first,
   * else the longest resource covering it (a root metadata document's origin), so a new process uses a stored
   * sign-in at once instead of sending a request bare to learn the resource again.
   */
  function storedResource(iss: string): Promise<void> {
    resourceLookup ??= (async () => {
      if (await options.store.get(keyOf(iss))) return;
      const covering = (await options.store.list({ subject: options.subject, issuer: iss }))
        .map((c) => c.resource)
        .filter((r) => coveringResource(r, canonicalUri) !== undefined)
        .sort((a, b) => b.length - a.length)[0];
      if (covering) resource = covering;
    })().catch(() => {});
    return resourceLookup;
  }

  async function token(): Promise<string | undefined> {
    if (!issuer) return undefined;
    await storedResource(issuer);
    let record: CredentialRecord;
    try {
      record = await refresher.getCredential(keyOf(issuer));
    } catch (error) {
      if (!(error instanceof LoginRequiredError)) throw error;
      // A grant without a person runs again when its token has expired (it has no refresh token), rather than
      // sending the request bare to learn what it already knows.
      if (!options.grant) return undefined;
      await signIn(lastHints);
      record = await refresher.getCredential(keyOf(issuer));
    }
    handedVersion = record.version;
    return presenter.hand(record);
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
    // A bound credential is replaced by a bound one: the 403 says nothing about the scheme.
    await signIn({
      scope: wanted,
      resourceMetadataUrl: metadataUrl,
      dpop: !!stored?.tokens.dpopKey,
    });
  }

  async function signIn(hints: UnauthorizedHints): Promise<void> {
    if (!options.grant && !options.onAuthorizationUrl && !options.onDeviceCode) {
      throw new McpAuthError(
        "login_required",
        `Signing in to the MCP server ${shown} is needed, and no way to ask the person was given; ${shown === canonicalUri ? `run \`agentauth mcp login ${canonicalUri}\` or ` : ""}pass onAuthorizationUrl (or onDeviceCode).`,
      );
    }
    const common = {
      canonicalUri,
      store: options.store,
      hints,
      clientFor: options.clientFor,
      discovery: options.discovery,
      crossOriginEndpoints: options.crossOriginEndpoints,
      dpop: options.dpop,
    };
    signingIn ??= (
      options.grant
        ? signInWithGrant({ ...common, subject: options.subject, grant: options.grant })
        : signInToMcpServer({
            ...common,
            subject: options.subject,
            onAuthorizationUrl: options.onAuthorizationUrl,
            onDeviceCode: options.onDeviceCode,
            signInMethod: options.signInMethod,
            clientMetadataUrl,
            registrations,
            clientName: options.clientName,
            timeoutMs: options.signInTimeoutMs ?? 300_000,
            signal: options.signInSignal?.(),
          })
    )
      .then((record) => {
        issuer = record.issuer;
        resource = record.resource;
        resourceLookup = Promise.resolve();
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
    lastHints = hints;
    ({ issuer, resource } = await currentAuthority(hints));
    resourceLookup = Promise.resolve();
    const seen = presenter.answered(ctx.response) ?? handedVersion;
    const stored = await options.store.get(keyOf(issuer));
    if (stored?.tokens.dpopKey && !presenter.seen(ctx.response)) {
      // The transport does not use the provider's fetch, the only way a DPoP-bound token is presented.
      throw new McpAuthError(
        "dpop_needs_fetch",
        `The credential for the MCP server ${shown} is bound to a DPoP key (RFC 9449), and the transport did not send it through the provider: pass fetch: authProvider.fetch to the transport. A bound token is never sent as a bearer token.`,
      );
    }
    // A request sent without a token (the issuer was not known yet): its 401 only named the issuer, so a stored
    // credential is used as it is (refreshed only if it is due), not force-refreshed at every process start.
    const sentBare =
      presenter.bare(ctx.response) ||
      (presenter.answered(ctx.response) === undefined && handedVersion === undefined);
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

  return { canonicalUri, token, onUnauthorized, fetch: presenter.fetch, stepUp };
}
