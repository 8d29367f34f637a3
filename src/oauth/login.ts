/**
 * One call from "not signed in" to "credential in the vault": discovery (or a provider preset), a device or browser
 * flow, the provider's account, storage with the provider and client registration.
 */

import { AgentAuthError } from "../core/errors.ts";
import { type Logger, silentLogger } from "../core/log.ts";
import type { Secret } from "../core/secret.ts";
import type { AccountInfo, CredentialRecord, CredentialStore } from "../vault/types.ts";
import {
  completeAuthorization,
  type PendingAuthorization,
  startAuthorization,
} from "./authorization-code.ts";
import type { OAuthClient } from "./client.ts";
import { type DevicePrompt, deviceLogin } from "./device.ts";
import {
  type AuthorizationServer,
  type DiscoveryOptions,
  discoverAuthorizationServer,
} from "./discovery.ts";
import { dpopHandle, generateDpopKey } from "./dpop.ts";
import { DeviceFlowError, LoginRequiredError } from "./errors.ts";
import type { RequestPolicy } from "./http.ts";
import { listenOnLoopback } from "./loopback.ts";
import { MemoryPendingStore } from "./pending.ts";
import type { Provider, ProviderAccount } from "./provider.ts";
import { assertUsableProviderSubject, assertUsableSubject } from "./subject.ts";
import { credentialFromTokens, type TokenSet } from "./tokens.ts";

export const DEFAULT_LOGIN_SCOPE = "openid profile email offline_access";

export interface LoginOptions {
  /** A discoverable authorization server (RFC 8414 / OIDC); or give `provider` (or `as`) instead. */
  issuer?: string;
  /** Metadata the caller already discovered and checked (the MCP client's, which may be a 2025-03-26 default). */
  as?: AuthorizationServer;
  /** A provider preset (`github({ clientId })`, `slack(...)`, `generic(...)`) from `agentauth/providers`. */
  provider?: Provider;
  /** Required with `issuer`; a provider carries its own. */
  client?: OAuthClient;
  flow: "device" | "browser";
  store: CredentialStore;
  scope?: string;
  resource?: string;
  /** Device flow: more resources the grant covers (RFC 8707 §2); the stored token is bound to `resource`. */
  alsoResources?: readonly string[];
  /** The vault subject; default the provider's account id, else the ID token's `sub`, else "default". */
  subject?: string;
  /** Device flow: show the person the URL and code. */
  onDevicePrompt?: (prompt: DevicePrompt) => void | Promise<void>;
  onPoll?: (event: { result: "pending" | "slow_down"; intervalSeconds: number }) => void;
  /** Browser flow: open (or print) the authorization URL. */
  openUrl?: (url: URL) => void | Promise<void>;
  /**
   * Browser flow: the loopback port to listen on (default: any free one). For providers that match the redirect
   * URI exactly (Atlassian): register `http://127.0.0.1:<port>/callback` and give the same port here.
   */
  redirectPort?: number;
  signal?: AbortSignal;
  timeoutMs?: number;
  discovery?: DiscoveryOptions;
  logger?: Logger;
  /** Ask for DPoP-bound tokens (RFC 9449) with a new key, kept sealed with them when the server binds them. */
  dpop?: boolean;
}

export async function login(options: LoginOptions): Promise<CredentialRecord> {
  const log = options.logger ?? silentLogger;
  const { provider } = options;
  const client = provider?.client ?? options.client;
  if (!client || (!provider && !options.issuer && !options.as)) {
    throw new TypeError(
      "login() needs either a provider, or an issuer (or its metadata) and a client",
    );
  }
  // Before anything is sent: nobody should sign in only to be told the subject cannot be used.
  assertUsableSubject(options.subject);
  if (
    provider &&
    !provider.flows.includes(options.flow === "device" ? "device" : "authorization_code")
  ) {
    throw new DeviceFlowError(
      "flow_unsupported",
      `${provider.displayName} does not support the ${options.flow} flow; use --${options.flow === "device" ? "browser" : "device"} instead.`,
    );
  }
  const as = provider
    ? await provider.server(options.discovery)
    : (options.as ??
      (await discoverAuthorizationServer(options.issuer as string, options.discovery)));
  const scope = options.scope ?? (provider ? provider.defaultScope : DEFAULT_LOGIN_SCOPE);
  // A provider without RFC 8707 support gets no `resource` (Entra refuses it); the record is still keyed by it.
  const sends = provider?.resourceIndicators !== false;
  const resource = sends ? options.resource : undefined;
  const dpopKey = options.dpop ? await generateDpopKey() : undefined;
  const dpop = dpopKey ? await dpopHandle(dpopKey) : undefined;
  let tokens: TokenSet;
  if (options.flow === "device") {
    tokens = await deviceLogin({
      dpop,
      as,
      client,
      scope,
      resource,
      alsoResources: sends ? options.alsoResources : undefined,
      signal: options.signal,
      onPrompt: options.onDevicePrompt ?? (() => {}),
      onPoll: options.onPoll,
    });
  } else {
    const listener = await listenOnLoopback({ port: options.redirectPort });
    try {
      const pending = new MemoryPendingStore<PendingAuthorization>();
      const started = await startAuthorization({
        as,
        client,
        redirectUri: listener.redirectUri,
        scope,
        resource,
        extraParams: provider?.authorizationParams
          ? { ...provider.authorizationParams }
          : undefined,
        scopeFormat: provider?.scopeFormat,
        pending,
      });
      // Wait before opening: a fast browser (or an auto-approving server) can redirect back immediately.
      const callback = listener.waitForCallback(started.state, {
        signal: options.signal,
        timeoutMs: options.timeoutMs,
        issuer: as.issuer,
        issRequired: as.authorization_response_iss_parameter_supported === true,
      });
      callback.catch(() => {});
      await options.openUrl?.(started.url);
      tokens = await completeAuthorization({
        as,
        client,
        callback: await callback,
        pending,
        dpop,
      });
    } finally {
      await listener.close();
    }
  }
  const record = await storeSignIn({
    tokens,
    as,
    client,
    provider,
    subject: options.subject,
    resource: options.resource,
    store: options.store,
    log,
    dpopKey,
  });
  log.info("oauth.login", {
    issuer: record.issuer,
    provider: provider?.name,
    resource: record.resource,
    subject: record.subject,
    flow: options.flow,
  });
  return record;
}

/**
 * Files a completed sign-in in the vault: the account from the provider's account API (when a preset has one), the
 * subject (given, else the account's, else the ID token's), the provider reference for later refresh and revoke.
 * Shared by every place that completes a sign-in (the CLI's login, the console's Connect).
 */
export async function storeSignIn(options: {
  tokens: TokenSet;
  as: AuthorizationServer;
  client: OAuthClient;
  provider?: Provider;
  subject?: string;
  resource?: string;
  store: CredentialStore;
  log: Logger;
  /** The DPoP key the tokens were asked for with (kept only when the server bound them, RFC 9449 §5). */
  dpopKey?: Secret;
}): Promise<CredentialRecord> {
  const { tokens, as, client, provider, log } = options;
  assertUsableSubject(options.subject);
  let account = provider ? await readAccount(provider, tokens, log) : undefined;
  // Without an ID token the account API is the only source of a stable subject: one retry (a rate limit or a
  // blip), then refuse rather than file the credential under "default", where another account's login would
  // overwrite it and this account's next login would land beside it.
  if (provider && !options.subject && !account?.subject && !tokens.subject) {
    account = await readAccount(provider, tokens, log);
    if (provider.account && !account?.subject) {
      throw new AgentAuthError(
        "account_unreadable",
        `Signed in to ${provider.displayName}, but its account API did not say which account this is, so nothing ` +
          "was stored. Try again in a minute (the API may be rate limiting), or name the account with --subject.",
      );
    }
  }
  const subject = options.subject ?? account?.subject ?? tokens.subject ?? "default";
  // Checked where it is final: without one asked for, the provider chose it.
  if (options.subject === undefined) {
    assertUsableProviderSubject(subject, provider?.displayName ?? "The authorization server");
  }
  const input = credentialFromTokens(
    tokens,
    {
      subject,
      issuer: provider?.issuer ?? as.issuer,
      resource: options.resource ?? "",
      clientId: client.clientId,
    },
    { provider: provider?.ref, clientSecret: client.clientSecret, dpopKey: options.dpopKey },
  );
  if (account) input.account = mergeAccount(input.account, account);
  return options.store.put(input);
}

/** The provider's account reader; a failure (rate limit, an API change) costs the display fields, not the login. */
export async function readAccount(
  provider: Provider,
  tokens: TokenSet,
  log: Logger,
  policy: RequestPolicy = {},
): Promise<ProviderAccount | undefined> {
  if (!provider.account) return undefined;
  try {
    return await provider.account({
      ...policy,
      accessToken: tokens.accessToken,
      response: tokens.extra,
      claims: tokens.claims,
    });
  } catch (error) {
    log.warn("oauth.account_unreadable", { provider: provider.name, error });
    return undefined;
  }
}

/** The provider's fields over the ID token's; `label` prefers a handle a person recognises. */
export function mergeAccount(base: AccountInfo, account: ProviderAccount): AccountInfo {
  const { subject: _subject, ...fields } = account;
  const merged: AccountInfo = { ...base };
  for (const [name, value] of Object.entries(fields)) {
    if (typeof value === "string" && value !== "") merged[name as keyof AccountInfo] = value;
  }
  merged.label = account.login ?? account.email ?? account.name ?? base.label;
  return merged;
}

export { type LogoutResult, logout } from "./logout.ts";
export { LoginRequiredError };
