/** Where each method's credentials live (vault or environment), how they are stored, and how they are forgotten. */

import type { Logger } from "../../core/log.ts";
import { Secret } from "../../core/secret.ts";
import {
  type LogoutResult,
  type ProviderResolver,
  logout as revokeAndDelete,
} from "../../oauth/index.ts";
import type {
  AccountInfo,
  CredentialRecord,
  CredentialStore,
  CredentialSummary,
} from "../../vault/types.ts";
import {
  type ApiKeyMethod,
  type AuthMethodConfig,
  envCredential,
  type OAuthMethod,
} from "./config.ts";
import { oauthTarget } from "./oauth-method.ts";
import type { MethodState } from "./state.ts";

/** API keys live in the vault under a provider pseudo-issuer, one per method. */
export function apiKeyIssuer(method: ApiKeyMethod): string {
  return `apikey:${method.id}`;
}

/**
 * The vault subject of everything one agent stores: its own namespace, so the agent's logout can never reach a
 * credential another component stored for the same issuer (the user's `agentauth login` keys by the OIDC `sub`).
 */
export function agentSubject(agentName: string): string {
  return `acp-agent:${agentName}`;
}

export class MethodCredentials {
  readonly #store: CredentialStore;
  readonly #env: NodeJS.ProcessEnv;
  readonly #providers: ProviderResolver | undefined;
  /** Every record this agent writes, reads or deletes has this subject. */
  readonly subject: string;

  /** `providers` rebuilds the provider preset a stored credential names, for its revocation. */
  constructor(
    store: CredentialStore,
    env: NodeJS.ProcessEnv,
    subject: string,
    providers?: ProviderResolver,
  ) {
    this.#store = store;
    this.#env = env;
    this.subject = subject;
    this.#providers = providers;
  }

  get store(): CredentialStore {
    return this.#store;
  }

  async state(method: AuthMethodConfig): Promise<MethodState> {
    if (method.kind === "terminal") return { methodId: method.id, configured: false, accounts: [] };
    const records = await this.#records(method);
    if (records.length > 0) {
      return {
        methodId: method.id,
        configured: true,
        source: "vault",
        accounts: records.map((r) => ({
          ...r.account,
          updatedAt: r.updatedAt,
          ...(r.provider ? { provider: r.provider.name } : {}),
        })),
      };
    }
    const fromEnv = envCredential(method, this.#env);
    if (fromEnv) {
      return {
        methodId: method.id,
        configured: true,
        source: "env",
        accounts: [{ label: `$${fromEnv.name}` }],
      };
    }
    return { methodId: method.id, configured: false, accounts: [] };
  }

  /** The stored OAuth credential for the method, most recent first. */
  async oauthRecord(method: OAuthMethod): Promise<CredentialRecord | undefined> {
    const [newest] = await this.#records(method);
    return newest ? this.#store.get(newest) : undefined;
  }

  async storeApiKey(method: ApiKeyMethod, apiKey: string, account: AccountInfo): Promise<void> {
    await this.#store.put({
      subject: this.subject,
      issuer: apiKeyIssuer(method),
      resource: "",
      clientId: method.id,
      tokens: { accessToken: new Secret(apiKey) },
      scopes: [],
      account: { label: account.label ?? "API key", ...account },
      status: "active",
    });
  }

  async apiKey(method: ApiKeyMethod): Promise<Secret | undefined> {
    const record = await this.#store.get({
      subject: this.subject,
      issuer: apiKeyIssuer(method),
      resource: "",
    });
    if (record?.tokens.accessToken) return record.tokens.accessToken;
    const fromEnv = envCredential(method, this.#env);
    return fromEnv ? new Secret(fromEnv.value) : undefined;
  }

  /** The method's key from its environment variables, for `authenticate` without `_meta["api-key"]`. */
  envApiKey(method: ApiKeyMethod): { name: string; value: Secret } | undefined {
    const fromEnv = envCredential(method, this.#env);
    return fromEnv ? { name: fromEnv.name, value: new Secret(fromEnv.value) } : undefined;
  }

  /**
   * Revokes (RFC 7009, or the provider's own call: GitHub's `DELETE /applications/{client_id}/token`) and
   * deletes every vault credential of the method. A revocation the server refuses or
   * cannot receive still deletes locally: the user asked to be logged out here. Environment credentials are
   * outside our reach and survive; the next status says so.
   */
  async forget(method: AuthMethodConfig): Promise<LogoutResult[]> {
    if (method.kind === "terminal") return [];
    const results: LogoutResult[] = [];
    for (const summary of await this.#records(method)) {
      const key = { subject: summary.subject, issuer: summary.issuer, resource: summary.resource };
      if (method.kind === "api-key") {
        results.push({ found: true, revoked: false, deleted: await this.#store.delete(key) });
      } else {
        results.push(
          await revokeAndDelete({
            store: this.#store,
            key,
            providers: this.#providers,
            deleteOnRevokeFailure: true,
          }),
        );
      }
    }
    return results;
  }

  async #records(method: OAuthMethod | ApiKeyMethod): Promise<CredentialSummary[]> {
    const target = method.kind === "oauth" ? oauthTarget(method) : undefined;
    // An OAuth method's issuer is matched as a URL, not as text: the engine stores the one the metadata names.
    const filter =
      method.kind === "oauth"
        ? { subject: this.subject, resource: method.resource ?? "" }
        : { subject: this.subject, issuer: apiKeyIssuer(method), resource: "" };
    const rows = await this.#store.list(filter);
    return rows
      .filter(
        (r) =>
          r.status === "active" &&
          (!target || (r.clientId === target.clientId && sameIssuer(r.issuer, target.issuer))),
      )
      .sort((a, b) => b.updatedAt - a.updatedAt);
  }
}

/**
 * Whether a stored issuer is the configured one. A login stores the issuer the server's metadata names, which RFC
 * 8414 §3.3 (as oauth4webapi checks it: equal as URLs) lets differ in form from the configured one: a trailing "/"
 * on a bare origin, the host's case, a default port. Compared as text, the method's own credential was not found:
 * the agent stayed unauthenticated after a successful login, and its logout left the credential in the vault.
 */
export function sameIssuer(stored: string, configured: string): boolean {
  if (stored === configured) return true;
  const a = URL.parse(stored);
  const b = URL.parse(configured);
  return a !== null && b !== null && a.href === b.href;
}

/**
 * What a logout leaves to say: a revocation that failed (logged, the credential is deleted anyway) and, for
 * providers without a revocation API (Notion, Atlassian, ...), where the person removes the app: ACP's logout
 * answer has no place for it, the agent's stderr does (clients show the links an agent prints there).
 */
export function reportForgotten(
  method: AuthMethodConfig,
  results: readonly LogoutResult[],
  log: Logger,
  stderr: (text: string) => void,
): void {
  for (const result of results) {
    if (result.error)
      log.warn("acp.logout_revoke_failed", { method: method.id, error: result.error });
    if (result.manageUrl) {
      const provider =
        method.kind === "oauth" && method.provider ? method.provider.displayName : "The provider";
      stderr(
        `Signed out here. ${provider} offers no way to revoke the app's access from here: ` +
          `remove it at ${result.manageUrl}\n`,
      );
    }
  }
}
