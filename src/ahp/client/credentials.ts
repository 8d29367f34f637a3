/**
 * Tokens for a host's resources, from the OAuth engine and the vault: stored keyed (subject, issuer, resource),
 * refreshed single-flight by TokenRefresher, obtained by the device flow when allowed. It remembers every token a
 * host challenged (as a SHA-256 fingerprint, never the token) and refuses to hand one of them out again.
 */

import { createHash } from "node:crypto";
import type { Secret } from "../../core/secret.ts";
import {
  type DevicePrompt,
  type DiscoveryOptions,
  LoginRequiredError,
  login,
  type OAuthClient,
  TokenRefresher,
} from "../../oauth/index.ts";
import type {
  CredentialKey,
  CredentialRecord,
  CredentialStore,
  CredentialSummary,
} from "../../vault/index.ts";
import { AhpAuthRequiredError } from "./errors.ts";
import type { AhpResource } from "./resources.ts";

/** OIDC scopes for the account and a refresh token, plus whatever the resource advertises. */
const BASE_SCOPES = ["openid", "profile", "email", "offline_access"];

export interface DeviceLoginPolicy {
  /** Default: the public client `agentauth-cli`. */
  client?: OAuthClient;
  /** Show the person the URL and code (stderr in the CLI). */
  onDevicePrompt: (prompt: DevicePrompt, resource: AhpResource) => void | Promise<void>;
  onPoll?: (event: { result: "pending" | "slow_down"; intervalSeconds: number }) => void;
  signal?: AbortSignal;
}

export interface ResourceCredentialsOptions {
  store: CredentialStore;
  /** Pin the vault subject; default: whichever active credential for (issuer, resource) was used most recently. */
  subject?: string;
  /** Absent: never log in interactively; a missing or dead credential ends in `ahp_auth_required`. */
  login?: DeviceLoginPolicy;
  /** TokenRefresher's proactive-refresh skew. Default 30 s. */
  refreshSkewMs?: number;
  discovery?: DiscoveryOptions;
}

export class ResourceCredentials {
  readonly #options: ResourceCredentialsOptions;
  readonly #refresher: TokenRefresher;
  readonly #challenged = new Set<string>();

  constructor(options: ResourceCredentialsOptions) {
    this.#options = options;
    this.#refresher = new TokenRefresher({
      store: options.store,
      skewMs: options.refreshSkewMs ?? 30_000,
      discovery: options.discovery,
    });
  }

  /** The stored credential for a resource, without touching the network (for status). */
  async find(resource: AhpResource): Promise<CredentialSummary | undefined> {
    const candidates: CredentialSummary[] = [];
    for (const issuer of issuerSpellings(resource.authorizationServers)) {
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

  /** A usable credential: stored and fresh, refreshed, or (when allowed) a new device login. */
  async obtain(resource: AhpResource): Promise<CredentialRecord> {
    const found = await this.find(resource);
    if (found?.status === "active") {
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
    if (found && found.status === "active") {
      try {
        const record = await this.#refresher.forceRefresh(keyOf(found));
        if (!this.isChallenged(record.tokens.accessToken)) return record;
      } catch (error) {
        if (!(error instanceof LoginRequiredError)) throw error;
      }
    }
    return this.#login(resource);
  }

  markChallenged(token: Secret): void {
    this.#challenged.add(fingerprint(token));
  }

  isChallenged(token: Secret | undefined): boolean {
    return token === undefined || this.#challenged.has(fingerprint(token));
  }

  async #login(resource: AhpResource): Promise<CredentialRecord> {
    const policy = this.#options.login;
    if (!policy) {
      throw new AhpAuthRequiredError(
        `No usable credential for ${resource.label} (${resource.resource}); run 'agentauth ahp login' to sign in.`,
        [resource.id],
      );
    }
    const issuer = resource.authorizationServers[0];
    if (!issuer) {
      throw new AhpAuthRequiredError(
        `${resource.label} names no authorization server; the client cannot obtain a token for it.`,
        [resource.id],
      );
    }
    const record = await login({
      issuer,
      client: policy.client ?? { clientId: "agentauth-cli" },
      flow: "device",
      store: this.#options.store,
      scope: [...BASE_SCOPES, ...resource.scopes].join(" "),
      resource: resource.resource,
      subject: this.#options.subject,
      onDevicePrompt: (prompt) => policy.onDevicePrompt(prompt, resource),
      onPoll: policy.onPoll,
      signal: policy.signal,
      discovery: this.#options.discovery,
    });
    if (this.isChallenged(record.tokens.accessToken)) {
      throw new AhpAuthRequiredError(
        `The authorization server re-issued a token the host already refused for ${resource.label}.`,
        [resource.id],
      );
    }
    return record;
  }
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
