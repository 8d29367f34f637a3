/** One call from "not signed in" to "credential in the vault": discovery, a device or browser flow, storage. */

import { type Logger, silentLogger } from "../core/log.ts";
import type { CredentialKey, CredentialRecord, CredentialStore } from "../vault/types.ts";
import {
  completeAuthorization,
  type PendingAuthorization,
  startAuthorization,
} from "./authorization-code.ts";
import type { OAuthClient } from "./client.ts";
import { type DevicePrompt, deviceLogin } from "./device.ts";
import { type DiscoveryOptions, discoverAuthorizationServer } from "./discovery.ts";
import { LoginRequiredError } from "./errors.ts";
import { listenOnLoopback } from "./loopback.ts";
import { MemoryPendingStore } from "./pending.ts";
import { type RevocationOutcome, revokeTokens } from "./revoke.ts";
import { credentialFromTokens, type TokenSet } from "./tokens.ts";

export const DEFAULT_LOGIN_SCOPE = "openid profile email offline_access";

export interface LoginOptions {
  issuer: string;
  client: OAuthClient;
  flow: "device" | "browser";
  store: CredentialStore;
  scope?: string;
  resource?: string;
  /** Device flow: more resources the grant covers (RFC 8707 §2); the stored token is bound to `resource`. */
  alsoResources?: readonly string[];
  /** The vault subject; default the ID token's `sub`, else "default". */
  subject?: string;
  /** Device flow: show the person the URL and code. */
  onDevicePrompt?: (prompt: DevicePrompt) => void | Promise<void>;
  onPoll?: (event: { result: "pending" | "slow_down"; intervalSeconds: number }) => void;
  /** Browser flow: open (or print) the authorization URL. */
  openUrl?: (url: URL) => void | Promise<void>;
  signal?: AbortSignal;
  timeoutMs?: number;
  discovery?: DiscoveryOptions;
  logger?: Logger;
}

export async function login(options: LoginOptions): Promise<CredentialRecord> {
  const log = options.logger ?? silentLogger;
  const as = await discoverAuthorizationServer(options.issuer, options.discovery);
  const scope = options.scope ?? DEFAULT_LOGIN_SCOPE;
  let tokens: TokenSet;
  if (options.flow === "device") {
    tokens = await deviceLogin({
      as,
      client: options.client,
      scope,
      resource: options.resource,
      alsoResources: options.alsoResources,
      signal: options.signal,
      onPrompt: options.onDevicePrompt ?? (() => {}),
      onPoll: options.onPoll,
    });
  } else {
    const listener = await listenOnLoopback();
    try {
      const pending = new MemoryPendingStore<PendingAuthorization>();
      const started = await startAuthorization({
        as,
        client: options.client,
        redirectUri: listener.redirectUri,
        scope,
        resource: options.resource,
        pending,
      });
      // Wait before opening: a fast browser (or an auto-approving server) can redirect back immediately.
      const callback = listener.waitForCallback(started.state, {
        signal: options.signal,
        timeoutMs: options.timeoutMs,
      });
      callback.catch(() => {});
      await options.openUrl?.(started.url);
      tokens = await completeAuthorization({
        as,
        client: options.client,
        callback: await callback,
        pending,
      });
    } finally {
      await listener.close();
    }
  }
  const record = await options.store.put(
    credentialFromTokens(tokens, {
      subject: options.subject ?? tokens.subject ?? "default",
      issuer: as.issuer,
      resource: options.resource ?? "",
      clientId: options.client.clientId,
    }),
  );
  log.info("oauth.login", {
    issuer: as.issuer,
    resource: record.resource,
    subject: record.subject,
    flow: options.flow,
  });
  return record;
}

export interface LogoutResult {
  /** False when the credential was not found. */
  found: boolean;
  /** Whether the server confirmed revocation; false with `error` when it could not be reached or refused. */
  revoked: boolean;
  /** What happened to each token at the server, when revocation ran. */
  outcome?: { refreshToken: RevocationOutcome; accessToken: RevocationOutcome };
  error?: Error;
  deleted: boolean;
}

/**
 * Revokes at the authorization server (RFC 7009), then deletes locally. With `deleteOnRevokeFailure: false`
 * (default) a failed revocation keeps the record so the caller can retry; the error says how to force it.
 */
export async function logout(options: {
  store: CredentialStore;
  key: CredentialKey;
  client?: OAuthClient;
  deleteOnRevokeFailure?: boolean;
  discovery?: DiscoveryOptions;
}): Promise<LogoutResult> {
  const record = await options.store.get(options.key);
  if (!record) return { found: false, revoked: false, deleted: false };
  let outcome: LogoutResult["outcome"];
  try {
    const as = await discoverAuthorizationServer(record.issuer, options.discovery);
    outcome = await revokeTokens({
      as,
      client: options.client ?? { clientId: record.clientId },
      refreshToken: record.tokens.refreshToken,
      accessToken: record.tokens.accessToken,
    });
  } catch (error) {
    if (!options.deleteOnRevokeFailure) {
      return { found: true, revoked: false, error: error as Error, deleted: false };
    }
    const deleted = await options.store.delete(options.key);
    return { found: true, revoked: false, error: error as Error, deleted };
  }
  return { found: true, revoked: true, outcome, deleted: await options.store.delete(options.key) };
}

export { LoginRequiredError };
