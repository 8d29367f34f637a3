/** The page's view of the vault: summaries (never tokens) flattened for display, and the whole `ConsoleState`. */

import { peerText } from "../core/display.ts";
import type { CredentialSummary, UnreadableCredential } from "../vault/types.ts";
import { type ConsoleNames, providerName, resourceName } from "./names.ts";
import type { AccountView, ConsoleState, UnreadableView } from "./wire.ts";

export function accountView(
  summary: CredentialSummary,
  now = Date.now(),
  names: ConsoleNames = {},
): AccountView {
  const account = summary.account ?? {};
  const status: AccountView["status"] =
    summary.status === "login_required"
      ? "login_required"
      : typeof summary.expiresAt === "number" && summary.expiresAt <= now
        ? "expired"
        : "active";
  return {
    id: summary.id,
    subject: peerText(summary.subject),
    provider: peerText(providerName(summary, names), { max: 120 }),
    issuer: peerText(summary.issuer, { max: 500 }),
    resource: peerText(summary.resource, { max: 500 }),
    resourceName: peerText(resourceName(summary.resource, names), { max: 500 }),
    account: peerText(account.label ?? account.login ?? account.email ?? account.name ?? ""),
    scopes: summary.scopes.map((scope) => peerText(scope, { max: 100 })),
    expiresAt: typeof summary.expiresAt === "number" ? summary.expiresAt : null,
    status,
    updatedAt: summary.updatedAt,
    createdAt: summary.createdAt,
    canRefresh: summary.has.refreshToken && summary.status !== "login_required",
  };
}

export function unreadableView(row: UnreadableCredential): UnreadableView {
  return {
    id: row.id,
    subject: row.subject === undefined ? null : peerText(row.subject),
    issuer: row.issuer === undefined ? null : peerText(row.issuer, { max: 500 }),
    message: peerText(row.message, { max: 500 }),
  };
}

/** The accounts in a stable order: subject, then provider. */
export function accountViews(
  summaries: readonly CredentialSummary[],
  now = Date.now(),
  names: ConsoleNames = {},
): AccountView[] {
  return summaries
    .map((summary) => accountView(summary, now, names))
    .sort(
      (a, b) =>
        a.subject.localeCompare(b.subject) ||
        a.provider.localeCompare(b.provider) ||
        a.id.localeCompare(b.id),
    );
}

export type { ConsoleState };
