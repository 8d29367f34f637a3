/**
 * Vault changes as activity: a pure diff of two `store.list()` listings (summaries, never tokens) and a poller that
 * records what changed, so sign-ins, refreshes and sign-outs by other processes (the CLI, a RAP tool, an ACP agent)
 * show in the console too.
 */

import type { Logger } from "../core/log.ts";
import type { CredentialStore, CredentialSummary, UnreadableCredential } from "../vault/types.ts";
import type { ActivityLog } from "./activity.ts";
import { type ConsoleNames, whereText as where } from "./names.ts";
import type { ActivityKind } from "./wire.ts";

export interface VaultChange {
  kind: Extract<
    ActivityKind,
    "sign_in" | "refresh" | "refresh_refused" | "logout" | "expiry_notice"
  >;
  id: string;
  subject: string;
  summary: string;
}

function who(summary: CredentialSummary): string {
  const label = summary.account?.label;
  return label && label !== summary.subject ? `${summary.subject} (${label})` : summary.subject;
}

/**
 * What happened between two listings. `window` (the two listing times) adds an `expiry_notice` for an access token
 * whose expiry fell between them without a write (nobody refreshed it).
 */
export function diffCredentials(
  before: readonly CredentialSummary[],
  after: readonly CredentialSummary[],
  window?: { from: number; to: number },
  names: ConsoleNames = {},
): VaultChange[] {
  const whereText = (summary: CredentialSummary) => where(summary, names);
  const changes: VaultChange[] = [];
  const old = new Map(before.map((summary) => [summary.id, summary]));
  const seen = new Set<string>();
  for (const now of after) {
    seen.add(now.id);
    const was = old.get(now.id);
    const base = { id: now.id, subject: now.subject };
    if (!was) {
      changes.push({
        ...base,
        kind: "sign_in",
        summary: `${who(now)} signed in at ${whereText(now)}`,
      });
      continue;
    }
    if (was.version !== now.version || was.updatedAt !== now.updatedAt) {
      if (now.status === "login_required" && was.status !== "login_required") {
        changes.push({
          ...base,
          kind: "refresh_refused",
          summary: `${who(now)} at ${whereText(now)}: the refresh token was refused; sign in again`,
        });
      } else if (
        now.createdAt !== was.createdAt ||
        (was.status === "login_required" && now.status === "active")
      ) {
        changes.push({
          ...base,
          kind: "sign_in",
          summary: `${who(now)} signed in again at ${whereText(now)}`,
        });
      } else if (now.expiresAt !== was.expiresAt) {
        changes.push({
          ...base,
          kind: "refresh",
          summary: `${who(now)} at ${whereText(now)}: tokens refreshed`,
        });
      }
      continue;
    }
    if (
      window &&
      now.status === "active" &&
      typeof now.expiresAt === "number" &&
      now.expiresAt > window.from &&
      now.expiresAt <= window.to
    ) {
      changes.push({
        ...base,
        kind: "expiry_notice",
        summary: `${who(now)} at ${whereText(now)}: the access token expired${now.has.refreshToken ? " (a refresh renews it)" : ""}`,
      });
    }
  }
  for (const was of before) {
    if (seen.has(was.id)) continue;
    changes.push({
      id: was.id,
      subject: was.subject,
      kind: "logout",
      summary: `${who(was)} at ${whereText(was)} was removed from the vault`,
    });
  }
  return changes;
}

export interface VaultWatch {
  /** The latest listing (what the page's accounts table shows). */
  current(): CredentialSummary[];
  /** The rows of the latest listing that could not be read. */
  unreadable(): UnreadableCredential[];
  /** Lists now and records the changes (the poller calls this; tests may too). Resolves when done. */
  poll(): Promise<void>;
  /** Called after every listing that changed anything. */
  onChange(listener: () => void): () => void;
  stop(): void;
}

/** Lists the vault every `intervalMs` and records each change in `activity` (component "vault"). */
export async function watchVault(options: {
  store: CredentialStore;
  activity: ActivityLog;
  intervalMs?: number;
  /** How providers and resources are named in the activity (names.ts). */
  names?: ConsoleNames;
  logger?: Logger;
  now?: () => number;
}): Promise<VaultWatch> {
  const now = options.now ?? Date.now;
  const listeners = new Set<() => void>();
  const first = await options.store.listReport();
  let listing = first.credentials;
  let unreadable = first.unreadable;
  let listedAt = now();
  let running: Promise<void> | undefined;
  let stopped = false;
  const poll = async (): Promise<void> => {
    if (stopped) return;
    if (running) return running;
    running = (async () => {
      try {
        const report = await options.store.listReport();
        const next = report.credentials;
        const at = now();
        const changes = diffCredentials(listing, next, { from: listedAt, to: at }, options.names);
        const changed =
          changes.length > 0 ||
          JSON.stringify(next) !== JSON.stringify(listing) ||
          JSON.stringify(report.unreadable) !== JSON.stringify(unreadable);
        listing = next;
        unreadable = report.unreadable;
        listedAt = at;
        for (const change of changes) {
          options.activity.record({
            component: "vault",
            kind: change.kind,
            subject: change.subject,
            credentialId: change.id,
            summary: change.summary,
          });
        }
        if (changed) for (const listener of [...listeners]) listener();
      } catch (error) {
        options.logger?.warn("console.vault_poll_failed", { error });
      } finally {
        running = undefined;
      }
    })();
    return running;
  };
  const timer = setInterval(() => void poll(), Math.max(50, options.intervalMs ?? 1000));
  timer.unref();
  return {
    current: () => listing,
    unreadable: () => unreadable,
    poll,
    onChange(listener) {
      listeners.add(listener);
      return () => {
        listeners.delete(listener);
      };
    },
    stop() {
      stopped = true;
      clearInterval(timer);
    },
  };
}
