/**
 * Tokens for a host's resources, from the OAuth engine and the vault: stored keyed (subject, issuer, resource),
 * refreshed single-flight by TokenRefresher, obtained by the device flow when allowed. It remembers every token a
 * host challenged (as a SHA-256 fingerprint, never the token) and refuses to hand one of them out again.
 *
 * One sign-in per authorization server: a device login names every resource of the host on that server
 * (RFC 8707 §2, `resource` repeated), its refresh token stays on one vault record, and each other resource gets an
 * audience-bound token minted from that grant (`TokenRefresher.mintForResource`), stored on its own record without
 * a refresh token. Only one record ever holds a grant's refresh token: the server rotates it and revokes the grant
 * when an old one is replayed, so two records holding copies would soon kill each other.
 *
 * A server a provider preset serves (GitHub, Microsoft, ...; `server-provider.ts`) gets a sign-in per resource
 * through the preset instead (`sign-in.ts`), stored under the preset's issuer, and refreshed through it.
 */

import { createHash } from "node:crypto";
import type { Secret } from "../../core/secret.ts";
import {
  type DevicePrompt,
  DiscoveryError,
  type DiscoveryOptions,
  LoginRequiredError,
  type OAuthClient,
  TokenEndpointError,
  TokenRefresher,
} from "../../oauth/index.ts";
import { resolveProvider } from "../../providers/index.ts";
import type {
  CredentialKey,
  CredentialRecord,
  CredentialStore,
  CredentialSummary,
} from "../../vault/index.ts";
import { AhpAuthRequiredError } from "./errors.ts";
import type { AhpResource } from "./resources.ts";
import {
  issuerForServer,
  providerForServer,
  type ServerProviderOptions,
  servedByPreset,
} from "./server-provider.ts";
import { signIn } from "./sign-in.ts";

export interface DeviceLoginPolicy {
  /** For discoverable servers. Default: the public client `agentauth-cli`. Presets take `providers` settings. */
  client?: OAuthClient;
  /**
   * Show the person the URL and code (stderr in the CLI). `covers` lists every resource the one sign-in is for
   * (the host's resources on that authorization server), `resource` first.
   */
  onDevicePrompt: (
    prompt: DevicePrompt,
    resource: AhpResource,
    covers: readonly AhpResource[],
  ) => void | Promise<void>;
  onPoll?: (event: { result: "pending" | "slow_down"; intervalSeconds: number }) => void;
  signal?: AbortSignal;
}

export interface ResourceCredentialsOptions extends ServerProviderOptions {
  store: CredentialStore;
  /** Pin the vault subject; default: whichever active credential for (issuer, resource) was used most recently. */
  subject?: string;
  /** Absent: never log in interactively; a missing or dead credential ends in `ahp_auth_required`. */
  login?: DeviceLoginPolicy;
  /** TokenRefresher's proactive-refresh skew. Default 30 s. */
  refreshSkewMs?: number;
  discovery?: DiscoveryOptions;
}

interface GroupLogin {
  /** The resources the grant covers. */
  covers: ReadonlySet<string>;
  /** The record holding the grant (bound to the resource that started the login). */
  done: Promise<CredentialRecord>;
}

export class ResourceCredentials {
  readonly #options: ResourceCredentialsOptions;
  readonly #refresher: TokenRefresher;
  readonly #challenged = new Set<string>();
  /** Device logins in flight, by authorization server. */
  readonly #logins = new Map<string, GroupLogin>();
  #siblings: () => readonly AhpResource[] = () => [];
  /** Grant holder (vault key) → the resources its grant is known to cover. */
  readonly #known = new Map<string, Set<string>>();

  constructor(options: ResourceCredentialsOptions) {
    this.#options = options;
    this.#refresher = new TokenRefresher({
      store: options.store,
      skewMs: options.refreshSkewMs ?? 30_000,
      discovery: options.discovery,
      // A preset's credential names its provider; the refresher rebuilds it (client and sealed secret stored).
      providers: resolveProvider,
    });
  }

  /** The stored credential for a resource, without touching the network (for status). */
  async find(resource: AhpResource): Promise<CredentialSummary | undefined> {
    const candidates: CredentialSummary[] = [];
    const first = resource.authorizationServers[0];
    const servers = first
      ? [...resource.authorizationServers, issuerForServer(first, this.#options)]
      : resource.authorizationServers;
    for (const issuer of issuerSpellings(servers)) {
      candidates.push(
        ...(await this.#options.store.list({
          issuer,
          resource: resource.resource,
          ...(this.#options.subject ? { subject: this.#options.subject } : {}),
        })),
      );
    }
    return candidates.sort((a, b) => rank(b) - rank(a) || b.updatedAt - a.updatedAt)[0];
  }

  /** The host's other resources, for one sign-in per authorization server (set by the client). */
  setSiblings(siblings: () => readonly AhpResource[]): void {
    this.#siblings = siblings;
  }

  /** A usable credential: stored and fresh, refreshed, minted from a sibling's grant, or a new device login. */
  async obtain(resource: AhpResource): Promise<CredentialRecord> {
    const found = await this.find(resource);
    // No refresh token of its own (minted from a sibling's grant) and due: mint again rather than give up.
    if (!found || (found.status === "active" && !found.has.refreshToken && !this.#fresh(found))) {
      const minted = await this.#mintFromSiblings(resource, found?.subject, found !== undefined);
      if (minted) return minted;
      if (!found) return this.#login(resource);
    }
    if (found.status === "active") {
      try {
        const record = await this.#refresher.getCredential(keyOf(found));
        if (!this.isChallenged(record.tokens.accessToken)) return record;
        return await this.renew(resource, record, true);
      } catch (error) {
        if (!(error instanceof LoginRequiredError)) throw error;
      }
    }
    return this.#login(resource);
  }

  /**
   * A credential whose access token differs from `stale` (which the host challenged or reported expired): a
   * forced refresh, then a new login if the refresh token is dead or the server handed back the same token.
   */
  async renew(
    resource: AhpResource,
    stale: CredentialRecord | undefined,
    challenged: boolean,
  ): Promise<CredentialRecord> {
    if (challenged && stale?.tokens.accessToken) this.markChallenged(stale.tokens.accessToken);
    const found = stale ?? (await this.find(resource));
    const ownRefresh =
      found && ("has" in found ? found.has.refreshToken : Boolean(found.tokens.refreshToken));
    if (found && found.status === "active" && !ownRefresh) {
      const minted = await this.#mintFromSiblings(resource, found.subject, true);
      if (minted) return minted;
    } else if (found && found.status === "active") {
      try {
        const record = await this.#refresher.forceRefresh(keyOf(found));
        if (!this.isChallenged(record.tokens.accessToken)) return record;
      } catch (error) {
        if (!(error instanceof LoginRequiredError)) throw error;
      }
    }
    return this.#login(resource);
  }

  /**
   * A new sign-in whatever is stored: step-up after an MCP server's `insufficientScope` (AHP
   * `McpServerAuthRequiredState`), where a refresh would only return a token with the same too-narrow scopes.
   */
  signInAgain(resource: AhpResource): Promise<CredentialRecord> {
    return this.#login(resource);
  }

  markChallenged(token: Secret): void {
    this.#challenged.add(fingerprint(token));
  }

  isChallenged(token: Secret | undefined): boolean {
    return token === undefined || this.#challenged.has(fingerprint(token));
  }

  /** Resources a holder's grant is known (in this process) to cover. */
  #remember(holder: CredentialKey, resources: Iterable<string>): void {
    const id = keyId(holder);
    const set = this.#known.get(id) ?? new Set<string>();
    for (const r of resources) set.add(r);
    this.#known.set(id, set);
  }

  #fresh(summary: CredentialSummary): boolean {
    if (!summary.has.accessToken) return false;
    if (summary.expiresAt === undefined) return true;
    return summary.expiresAt - (this.#options.refreshSkewMs ?? 30_000) > Date.now();
  }

  /** Same authorization server (issuer spellings differ by a trailing slash at most). */
  #sameServer(a: AhpResource, b: AhpResource): boolean {
    const first = a.authorizationServers[0];
    return (
      first !== undefined && issuerSpellings(b.authorizationServers.slice(0, 1)).includes(first)
    );
  }

  /**
   * A token for `resource` minted from the grant of another resource on the same server. The server consumes the
   * refresh token *before* it checks the resource (oidc-provider rotates first), so asking a grant that does not
   * cover `resource` would retire that grant's refresh token: only a grant known to cover it is asked. Known means
   * this process signed in for it (`#known`), or `resource` already holds a token minted from a sibling's grant
   * (`reminting`: its record has no refresh token of its own). The residual risk (the holder was replaced since by
   * a narrower sign-in made elsewhere) is documented in docs/ahp.md.
   */
  async #mintFromSiblings(
    resource: AhpResource,
    subject: string | undefined,
    reminting = false,
  ): Promise<CredentialRecord | undefined> {
    // A preset's tokens are not audience-bound: there is no grant to mint another resource's token from.
    if (servedByPreset(resource.authorizationServers[0], this.#options)) return undefined;
    const holders: CredentialSummary[] = [];
    for (const sibling of this.#siblings()) {
      if (sibling.resource === resource.resource || !this.#sameServer(resource, sibling)) continue;
      const holder = await this.find(sibling);
      if (holder?.status !== "active" || !holder.has.refreshToken) continue;
      if (subject !== undefined && holder.subject !== subject) continue;
      holders.push(holder);
    }
    const known = holders.filter((h) => this.#known.get(keyId(h))?.has(resource.resource));
    // Unknown coverage: ask one grant at most (a re-mint), never several.
    const ask = known.length > 0 ? known : reminting ? holders.slice(0, 1) : [];
    for (const holder of ask) {
      const minted = await this.#mintFrom(holder, resource);
      if (minted) return minted;
    }
    return undefined;
  }

  async #mintFrom(
    holder: CredentialKey,
    resource: AhpResource,
  ): Promise<CredentialRecord | undefined> {
    let token: Awaited<ReturnType<TokenRefresher["mintForResource"]>>;
    try {
      token = await this.#refresher.mintForResource(keyOf(holder), resource.resource);
      this.#remember(holder, [resource.resource]);
    } catch (error) {
      // The grant does not cover this resource (or is gone): a sign-in of its own will be asked for.
      if (grantRefused(error)) return undefined;
      // Anything else (the vault failing or closed under a renewal at shutdown, the network, a conflict) is no
      // reason to ask the person to sign in again: the renewal fails, and the next one tries again.
      throw error;
    }
    if (this.isChallenged(token.accessToken)) return undefined;
    const source = await this.#options.store.get(keyOf(holder));
    if (!source) return undefined;
    return this.#options.store.put({
      subject: source.subject,
      issuer: source.issuer,
      resource: resource.resource,
      clientId: source.clientId,
      tokens: { accessToken: token.accessToken, tokenType: token.tokenType },
      expiresAt: token.expiresAt,
      scopes: token.scopes,
      account: source.account,
      status: "active",
    });
  }

  async #login(resource: AhpResource): Promise<CredentialRecord> {
    const policy = this.#options.login;
    if (!policy) {
      throw new AhpAuthRequiredError(
        `No usable credential for ${resource.label} (${resource.resource}); run 'agentauth ahp login' to sign in.`,
        [resource.id],
      );
    }
    const server = resource.authorizationServers[0];
    if (!server) {
      throw new AhpAuthRequiredError(
        `${resource.label} names no authorization server; the client cannot obtain a token for it.`,
        [resource.id],
      );
    }
    const choice = providerForServer(server, resource.label, this.#options);
    // A preset's sign-in covers this resource alone: key the running login by resource too.
    const issuer = choice.kind === "provider" ? `${server} ${resource.resource}` : server;
    // Another resource's sign-in at the same server is under way and covers this one: wait for it, then mint.
    const running = this.#logins.get(issuer);
    if (running?.covers.has(resource.resource)) {
      const holder = await running.done.catch(() => undefined);
      if (holder?.resource === resource.resource) return holder;
      const minted = holder && (await this.#mintFrom(holder, resource));
      if (minted) return minted;
    }
    // A resource with its own pre-registered client signs in alone: that client is not the others' to use.
    const others =
      choice.kind === "provider" || resource.oauthClientId
        ? []
        : this.#siblings().filter(
            (r) =>
              r.resource !== resource.resource && !r.oauthClientId && this.#sameServer(resource, r),
          );
    const done = signIn({
      resource,
      others,
      choice,
      policy,
      store: this.#options.store,
      subject: this.#options.subject,
      discovery: this.#options.discovery,
    });
    const group: GroupLogin = {
      covers: new Set([resource.resource, ...others.map((r) => r.resource)]),
      done,
    };
    this.#logins.set(issuer, group);
    let record: CredentialRecord;
    try {
      record = await done;
    } finally {
      if (this.#logins.get(issuer) === group) this.#logins.delete(issuer);
    }
    this.#remember(record, group.covers);
    if (this.isChallenged(record.tokens.accessToken)) {
      throw new AhpAuthRequiredError(
        `The authorization server re-issued a token the host already refused for ${resource.label}.`,
        [resource.id],
      );
    }
    return record;
  }
}

/**
 * Whether a failed mint means this grant cannot give a token for the resource, so that only a sign-in helps: the
 * authorization server refused it with an OAuth error (`invalid_grant`, `invalid_target`, ...), no usable refresh
 * token is stored, or the server takes no resource indicators.
 */
function grantRefused(error: unknown): boolean {
  if (error instanceof LoginRequiredError) return true;
  if (error instanceof TokenEndpointError) {
    return (
      error.oauthError !== undefined &&
      error.oauthError !== "server_error" &&
      error.oauthError !== "temporarily_unavailable"
    );
  }
  return error instanceof DiscoveryError && error.code === "resource_indicators_unsupported";
}

function keyId(key: CredentialKey): string {
  return JSON.stringify([key.subject, key.issuer, key.resource]);
}

export function keyOf(record: CredentialKey): CredentialKey {
  return { subject: record.subject, issuer: record.issuer, resource: record.resource };
}

function fingerprint(token: Secret): string {
  return createHash("sha256").update(token.reveal()).digest("base64url");
}

function rank(summary: CredentialSummary): number {
  return summary.status === "active" && summary.has.accessToken ? 1 : 0;
}

/** Discovery canonicalises the issuer; the metadata may spell it with or without a trailing slash. */
function issuerSpellings(servers: string[]): string[] {
  const out = new Set<string>();
  for (const server of servers) {
    out.add(server);
    out.add(server.endsWith("/") ? server.slice(0, -1) : `${server}/`);
  }
  return [...out];
}
