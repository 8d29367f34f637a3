/**
 * Connect and Disconnect from the page. Connect is the authorization code flow with PKCE through the OAuth engine,
 * redirecting to the console's own `/connect/callback`: the engine owns `state` (single use, constant-time), the
 * RFC 9207 `iss` check and the code exchange; the credential goes to the vault. Disconnect is the engine's `logout`
 * (revoke at the provider, then delete).
 */

import { type Logger, silentLogger } from "../core/log.ts";
import {
  type AuthorizationServer,
  assertUsableSubject,
  completeAuthorization,
  DEFAULT_LOGIN_SCOPE,
  discoverAuthorizationServer,
  logout,
  MemoryPendingStore,
  type OAuthClient,
  type PendingAuthorization,
  type PendingStore,
  type Provider,
  type ProviderRef,
  type ProviderResolver,
  startAuthorization,
  storeSignIn,
} from "../oauth/index.ts";
import type { CredentialRecord, CredentialStore } from "../vault/types.ts";
import { ConsoleError } from "./errors.ts";
import { type ConsoleNames, whereText } from "./names.ts";
import { sameSecret } from "./security.ts";

export interface ConnectTarget {
  /** "demo-idp" */
  id: string;
  /** "Demo authorization server (OpenID profile)" */
  label: string;
  issuer: string;
  /** A public client whose redirect URIs allow http://127.0.0.1/connect/callback (any port, RFC 8252 §7.3). */
  clientId: string;
  scope: string;
  resource?: string;
  provider?: ProviderRef;
}

interface Waiting extends PendingAuthorization {
  targetId: string;
  subject?: string;
  /** The Connect cookie of the browser that started it. */
  binding: string;
}

export class Connector {
  readonly #targets: ConnectTarget[];
  readonly #store: CredentialStore;
  readonly #providers: ProviderResolver | undefined;
  readonly #pending = new MemoryPendingStore<Waiting>({ maxEntries: 100 });
  readonly #logger: Logger | undefined;
  redirectUri = "";

  constructor(options: {
    targets: readonly ConnectTarget[];
    store: CredentialStore;
    providers?: ProviderResolver;
    logger?: Logger;
  }) {
    this.#targets = [...options.targets];
    this.#store = options.store;
    this.#providers = options.providers;
    this.#logger = options.logger;
  }

  get targets(): readonly ConnectTarget[] {
    return this.#targets;
  }

  /** The authorization URL for `targetId`; the page opens it. `binding`: the starting browser's Connect cookie. */
  async start(targetId: string, binding: string, subject?: string): Promise<URL> {
    // agentauth's own namespace, refused as `login` and the MCP client refuse it (a 400 invalid_subject).
    assertUsableSubject(subject);
    const target = this.#target(targetId);
    const { as, client, provider } = await this.#reach(target);
    const sends = provider?.resourceIndicators !== false;
    const tag = { targetId: target.id, binding, ...(subject ? { subject } : {}) };
    const pending: PendingStore<PendingAuthorization> = {
      create: (value, ttlMs) => this.#pending.create({ ...value, ...tag }, ttlMs),
      consume: (state) => this.#pending.consume(state),
      size: () => this.#pending.size(),
    };
    const started = await startAuthorization({
      as,
      client,
      redirectUri: this.redirectUri,
      scope: target.scope || (provider ? provider.defaultScope : DEFAULT_LOGIN_SCOPE),
      resource: sends ? target.resource : undefined,
      extraParams: provider?.authorizationParams ? { ...provider.authorizationParams } : undefined,
      scopeFormat: provider?.scopeFormat,
      pending,
    });
    return started.url;
  }

  /**
   * The browser came back: `state` first (unknown, replayed or expired → refused before anything else), then the
   * engine checks `iss` and any error, and exchanges the code. The credential is stored; the record is returned.
   */
  async complete(callback: URL, binding: string | undefined): Promise<CredentialRecord> {
    // Consumed once here, handed to the engine as a one-shot store: a second callback with the same state fails.
    const waiting = this.#pending.consume(callback.searchParams.get("state"));
    // Login CSRF: a state (and the attacker's code) carried to another browser is refused before any exchange.
    if (binding === undefined || binding.length > 256 || !sameSecret(binding, waiting.binding)) {
      throw new ConsoleError(
        403,
        "console_connect_not_yours",
        "This sign-in was not started from this browser's console; start it again from the console.",
      );
    }
    const target = this.#target(waiting.targetId);
    const { as, client, provider } = await this.#reach(target);
    const oneShot: PendingStore<PendingAuthorization> = {
      create: () => {
        throw new TypeError("not used");
      },
      consume: () => waiting,
      size: () => 0,
    };
    const tokens = await completeAuthorization({ as, client, callback, pending: oneShot });
    return storeSignIn({
      tokens,
      as,
      client,
      provider,
      subject: waiting.subject,
      resource: target.resource,
      store: this.#store,
      log: this.#logger ?? silentLogger,
    });
  }

  #target(id: string): ConnectTarget {
    const target = this.#targets.find((t) => t.id === id);
    if (!target) {
      throw new ConsoleError(404, "console_unknown_target", "There is no such connect target.");
    }
    return target;
  }

  async #reach(
    target: ConnectTarget,
  ): Promise<{ as: AuthorizationServer; client: OAuthClient; provider?: Provider }> {
    const client: OAuthClient = { clientId: target.clientId };
    if (target.provider) {
      if (!this.#providers) {
        throw new ConsoleError(
          500,
          "console_provider_resolver_missing",
          `The connect target ${target.id} names the ${target.provider.name} preset, but the console has no provider resolver.`,
        );
      }
      const provider = this.#providers(target.provider, client);
      return { as: await provider.server(), client: provider.client, provider };
    }
    return { as: await discoverAuthorizationServer(target.issuer), client };
  }
}

export interface DisconnectOutcome {
  /** What the status line says: "Disconnected alice at the demo API". */
  message: string;
  revoked: boolean;
  manageUrl?: string;
}

/** Revokes at the provider, then deletes; a failed revocation keeps the credential (typed 502, say what to do). */
export async function disconnect(
  store: CredentialStore,
  id: string,
  providers?: ProviderResolver,
  names: ConsoleNames = {},
): Promise<DisconnectOutcome> {
  const record = await store.getById(id);
  if (!record) {
    throw new ConsoleError(
      404,
      "console_account_unknown",
      "That account is not in the vault (any more).",
    );
  }
  const who = record.account.label ?? record.subject;
  const where = whereText(record, names);
  const result = await logout({
    store,
    key: { subject: record.subject, issuer: record.issuer, resource: record.resource },
    providers,
  });
  if (result.error || !result.deleted) {
    const code = (result.error as { code?: unknown } | undefined)?.code;
    throw new ConsoleError(
      502,
      typeof code === "string" ? code : "console_revoke_failed",
      `Could not revoke ${who} at ${where}; the credential is kept. ${result.error?.message ?? ""} ` +
        `To delete it locally anyway: agentauth vault delete ${record.id}`,
      { cause: result.error },
    );
  }
  const manage = result.manageUrl
    ? ` ${where} has no revocation API: remove the app at ${result.manageUrl}.`
    : "";
  return {
    message: `Disconnected ${who} at ${where}.${manage}`,
    revoked: result.revoked,
    ...(result.manageUrl ? { manageUrl: result.manageUrl } : {}),
  };
}
