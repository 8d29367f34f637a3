/**
 * The tool's OAuth providers seen through one shape. `providers` accepts two kinds of entry: a preset from
 * `agentauth/providers` (`github({ clientId, clientSecret })`, `slack(...)`: static endpoints, wire quirks, account
 * reader, revocation, all from the provider's documentation) or a discoverable authorization server with a client
 * (`OAuthProviderConfig`, RFC 8414 / OIDC discovery). Everything else in the tool asks this file, not the entry.
 */

import type { Logger } from "../../core/log.ts";
import {
  type AuthorizationServer,
  assertUsableSubject,
  credentialFromTokens,
  type DiscoveryOptions,
  discoverAuthorizationServer,
  mergeAccount,
  type OAuthClient,
  type Provider,
  type ProviderAccount,
  readAccount,
  type ScopeFormat,
  type TokenSet,
} from "../../oauth/index.ts";
import type { CredentialInput, CredentialKey } from "../../vault/index.ts";
import { secure } from "./base-url.ts";
import { ToolConfigError } from "./errors.ts";
import type { OAuthProviderConfig, ToolProviderEntry } from "./options.ts";

/**
 * Who signed in, as far as the tool can read it (ID token claims, the preset's account reader, a hook): `subject`
 * (the provider's id), `login` (a handle, shown as "@login"), `name`, `email`, and what a preset adds
 * (`organization`: Slack's workspace; `avatarUrl`).
 */
export type ConnectedAccount = ProviderAccount;

export interface ToolProvider {
  /** The key in `providers`, which `requiresAuth` names. */
  id: string;
  displayName: string;
  /** The configured issuer identifier (a preset's `issuer`, or the discovery issuer URL). */
  issuer: string;
  client: OAuthClient;
  scope?: string;
  /** The vault key's resource ("" when none). */
  resource: string;
  extraParams?: Record<string, string>;
  /** Where the scopes go on the authorization request (Slack: `user_scope`, comma-separated). */
  scopeFormat?: ScopeFormat;
  /** Set for a preset: what refresh and revocation rebuild from the stored `ProviderRef`. */
  preset?: Provider;
  /** Set for a discovered server: its `account` hook. */
  config?: OAuthProviderConfig;
  server(): Promise<AuthorizationServer>;
}

/** A preset is recognised by its shape (a `ref` to store and a `server()` to call), not by its class. */
export function isPreset(entry: ToolProviderEntry): entry is Provider {
  const candidate = entry as Partial<Provider>;
  return (
    typeof candidate.server === "function" &&
    typeof candidate.ref === "object" &&
    candidate.ref !== null &&
    typeof candidate.ref.name === "string"
  );
}

/** Checks and normalises every configured provider; a problem is a startup error naming the provider. */
export function toolProviders(
  providers: Record<string, ToolProviderEntry>,
  discovery?: DiscoveryOptions,
): Map<string, ToolProvider> {
  const table = new Map<string, ToolProvider>();
  for (const [id, entry] of Object.entries(providers)) {
    if (isPreset(entry)) {
      table.set(id, fromPreset(id, entry, discovery));
      continue;
    }
    const issuer = typeof entry?.issuer === "string" ? URL.parse(entry.issuer) : null;
    if (!issuer || typeof entry.client?.clientId !== "string") {
      throw new ToolConfigError(
        "provider_invalid",
        `Provider "${id}": give a preset (e.g. github({ clientId })) or { issuer, client } with an issuer URL.`,
      );
    }
    secure(issuer, `provider "${id}" issuer`);
    table.set(id, fromConfig(id, entry, discovery));
  }
  return table;
}

function fromPreset(id: string, preset: Provider, discovery?: DiscoveryOptions): ToolProvider {
  if (!preset.flows.includes("authorization_code")) {
    throw new ToolConfigError(
      "provider_flow_unsupported",
      `Provider "${id}" (${preset.displayName}) has no browser sign-in (authorization code flow), which a RAP tool needs.`,
    );
  }
  return {
    id,
    displayName: preset.displayName,
    issuer: preset.issuer,
    client: preset.client,
    scope: preset.defaultScope,
    resource: "",
    extraParams: preset.authorizationParams ? { ...preset.authorizationParams } : undefined,
    scopeFormat: preset.scopeFormat,
    preset,
    server: () => preset.server(discovery),
  };
}

function fromConfig(
  id: string,
  config: OAuthProviderConfig,
  discovery?: DiscoveryOptions,
): ToolProvider {
  return {
    id,
    displayName: config.displayName ?? id,
    issuer: config.issuer,
    client: config.client,
    scope: config.scope,
    resource: config.resource ?? "",
    extraParams: config.extraParams,
    config,
    server: () => discoverAuthorizationServer(config.issuer, discovery),
  };
}

/**
 * The vault key of a user's credential at a provider: a preset's own issuer, else the discovered one. A `userId` in
 * agentauth's namespace is refused (`invalid_subject`): invocations carrying one are refused at intake
 * (invocation.ts), and this keeps `disconnect` and every other lookup from reaching agentauth's own records.
 */
export async function credentialKey(
  provider: ToolProvider,
  userId: string,
): Promise<CredentialKey> {
  assertUsableSubject(userId);
  const issuer = provider.preset?.issuer ?? (await provider.server()).issuer;
  return { subject: userId, issuer, resource: provider.resource };
}

/**
 * Who signed in: a preset's account reader (GitHub `GET /user`, Slack `users.identity`, ...) over the ID token's
 * claims, or the configured `account` hook. A failure costs the display fields, never the sign-in.
 */
export async function connectedAccount(
  provider: ToolProvider,
  tokens: TokenSet,
  logger: Logger,
): Promise<ConnectedAccount> {
  const fromToken: ConnectedAccount = {
    subject: tokens.subject,
    name: tokens.account.name,
    email: tokens.account.email,
  };
  if (provider.preset) {
    const read = await readAccount(provider.preset, tokens, logger);
    const defined = Object.entries(read ?? {}).filter(([, value]) => value !== undefined);
    return { ...fromToken, ...Object.fromEntries(defined) };
  }
  const hook = provider.config?.account;
  if (!hook) return fromToken;
  try {
    const read = await hook(tokens.accessToken);
    return {
      subject: read?.subject ?? fromToken.subject,
      name: read?.name ?? fromToken.name,
      email: read?.email ?? fromToken.email,
    };
  } catch (error) {
    logger.warn("rap.oauth.account_unreadable", { provider: provider.id, error });
    return fromToken;
  }
}

/**
 * The vault record for a user's new tokens. A preset's record names the preset (`ProviderRef`, no secrets) and
 * seals the tool's client secret with the tokens, as `agentauth login` does (issue 9 §1): `agentauth vault revoke`
 * and `agentauth token` then work on it without flags. The tool itself always uses its configured client (see
 * ProviderAuth's `clientFor`), so a rotated secret in the tool's configuration wins over the stored copy.
 */
export function credentialFor(
  provider: ToolProvider,
  tokens: TokenSet,
  key: CredentialKey,
  account: ConnectedAccount,
): CredentialInput {
  const { preset } = provider;
  const record = credentialFromTokens(
    tokens,
    { ...key, clientId: provider.client.clientId },
    preset ? { provider: preset.ref, clientSecret: provider.client.clientSecret } : {},
  );
  // The vault's display fields say which provider account this user_id is now bound to (issue 8 §1.2).
  if (preset) {
    record.account = mergeAccount(record.account, { ...account });
    return record;
  }
  record.account = {
    ...record.account,
    ...(account.name ? { name: account.name } : {}),
    ...(account.email ? { email: account.email } : {}),
    label: account.email ?? account.name ?? account.subject ?? record.account.label,
  };
  return record;
}
