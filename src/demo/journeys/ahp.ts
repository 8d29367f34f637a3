/**
 * The AHP journey of the demo, shared by the AHP panel and `agentauth demo --script`: the demo's own AHP client
 * (src/ahp/client) connects to the example host, authenticates its resources (https://alpha.example.test/, …)
 * with tokens from the demo IdP kept in the demo vault (one device sign-in per authorization server), and keeps
 * them fresh: `renewBeforeExpiry` renews shortly before each token expires, and the host's expiry notices are
 * answered too. The demo gives the resources short tokens so the renewals show.
 */

import {
  type AhpClient,
  type AuthenticationOutcome,
  connectAhpHost,
  type RenewalEvent,
} from "../../ahp/client/index.ts";
import type { AhpResourceView, DevicePromptView } from "../../console/wire.ts";
import { peerText, peerUrl } from "../../core/display.ts";
import type { Logger } from "../../core/log.ts";
import { CLI_CLIENT_ID } from "../../idp/index.ts";
import type { DevicePrompt } from "../../oauth/index.ts";
import type { CredentialStore } from "../../vault/index.ts";

export interface AhpJourneyContext {
  /** The example host's WebSocket URL (ws://127.0.0.1:PORT). */
  ahpUrl: string;
  /** The demo vault. */
  store: CredentialStore;
  /** Pin the vault subject (default: the most recent credential for each resource). */
  subject?: string;
  logger?: Logger;
}

export interface AhpJourneyOptions {
  /** Script mode: the demo IdP signs in by itself; the journey opens the device link as a browser would. */
  autoApprove?: boolean;
  onPrompt?: (prompt: DevicePromptView) => void;
  onRenewal?: (event: RenewalEvent) => void;
  onRenewalError?: (error: Error, resource: string) => void;
  onDisconnect?: (error: Error) => void;
  signal?: AbortSignal;
}

export type { AhpResourceView };

/** A live connection to the host with the demo's bookkeeping around it. */
export interface AhpJourney {
  readonly client: AhpClient;
  /** Authenticates every advertised resource (a device sign-in when the vault has nothing usable). */
  authenticate(): Promise<AuthenticationOutcome[]>;
  resources(): Promise<AhpResourceView[]>;
  renewals(): readonly (RenewalEvent & { at: number })[];
  /** Resolves with the next renewal (of `resource`, when given) seen after the call. */
  nextRenewal(options?: { resource?: string; signal?: AbortSignal }): Promise<RenewalEvent>;
  close(): Promise<void>;
}

/** Connects the demo's AHP client to the host (tokens renewed before expiry). */
export async function connectAhpJourney(
  ctx: AhpJourneyContext,
  options: AhpJourneyOptions = {},
): Promise<AhpJourney> {
  const seen: (RenewalEvent & { at: number })[] = [];
  const waiters = new Set<{ resource?: string; resolve: (event: RenewalEvent) => void }>();
  const approvals: Promise<void>[] = [];
  const client = await connectAhpHost(ctx.ahpUrl, {
    store: ctx.store,
    ...(ctx.subject ? { subject: ctx.subject } : {}),
    renewBeforeExpiry: true,
    // The demo IdP's tokens are short on purpose: renew a little ahead (TokenRefresher's skew).
    refreshSkewMs: 1_000,
    login: {
      client: { clientId: CLI_CLIENT_ID },
      ...(options.signal ? { signal: options.signal } : {}),
      onDevicePrompt: (prompt) => {
        options.onPrompt?.(devicePromptFrom(prompt));
        if (options.autoApprove) approvals.push(approve(prompt, ctx.logger));
      },
    },
    onRenewal: (event) => {
      seen.push({ ...event, at: Date.now() });
      if (seen.length > 100) seen.shift();
      ctx.logger?.info("demo.ahp.renewed", { resource: event.resource, trigger: event.trigger });
      options.onRenewal?.(event);
      for (const waiter of [...waiters]) {
        if (waiter.resource && waiter.resource !== event.resource) continue;
        waiters.delete(waiter);
        waiter.resolve(event);
      }
    },
    onRenewalError: (error, resource) => {
      ctx.logger?.warn("demo.ahp.renewal_failed", { resource, reason: peerText(error.message) });
      options.onRenewalError?.(error, resource);
    },
    onDisconnect: (error) => options.onDisconnect?.(error),
  });
  return {
    client,
    async authenticate() {
      try {
        return await client.authenticate();
      } finally {
        await Promise.all(approvals.splice(0));
      }
    },
    async resources() {
      const statuses = await client.status();
      const scopesById = new Map<string, string[]>();
      for (const summary of await ctx.store.list()) scopesById.set(summary.id, summary.scopes);
      return statuses.map((s) => {
        const mine = seen.filter((e) => e.resource === s.id);
        const c = s.credential;
        return {
          resource: peerText(s.resource, { max: 300 }),
          name: peerText(s.label, { max: 120 }),
          authenticated: s.authenticated,
          subject: c.present ? peerText(c.account ?? c.subject, { max: 120 }) : null,
          scopes: (c.vaultId ? (scopesById.get(c.vaultId) ?? []) : []).map((x) =>
            peerText(x, { max: 60 }),
          ),
          expiresAt: c.expiresAt ?? null,
          renewals: mine.length,
          lastRenewalAt: mine.at(-1)?.at ?? null,
        };
      });
    },
    renewals: () => seen,
    nextRenewal({ resource, signal } = {}) {
      return new Promise<RenewalEvent>((resolve, reject) => {
        const waiter = { ...(resource ? { resource } : {}), resolve };
        waiters.add(waiter);
        signal?.addEventListener(
          "abort",
          () => {
            waiters.delete(waiter);
            reject(signal.reason ?? new Error("aborted"));
          },
          { once: true },
        );
      });
    },
    close: () => client.close(),
  };
}

export function devicePromptFrom(prompt: DevicePrompt): DevicePromptView {
  return {
    verificationUri: peerUrl(prompt.verificationUri) ?? "",
    verificationUriComplete: peerUrl(prompt.verificationUriComplete) ?? null,
    userCode: peerText(prompt.userCode, { max: 64 }),
  };
}

/** Script mode: the demo IdP completes a pre-filled device page by itself (autoApproveAs). */
async function approve(prompt: DevicePrompt, logger?: Logger): Promise<void> {
  const url = prompt.verificationUriComplete;
  if (!url) {
    logger?.warn("demo.ahp.approve_failed", { reason: "no verification_uri_complete" });
    return;
  }
  try {
    const response = await fetch(url, { signal: AbortSignal.timeout(30_000) });
    await response.arrayBuffer();
    if (!response.ok) logger?.warn("demo.ahp.approve_failed", { status: response.status });
  } catch (error) {
    logger?.warn("demo.ahp.approve_failed", { reason: (error as Error).name });
  }
}
