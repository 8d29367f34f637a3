/// <reference lib="dom" />
/**
 * The connected accounts: "Loading…" until the first state (never "No connected accounts yet." over a vault that
 * holds some), one row per credential (who, provider and resource by name, the token's timeline, status as a
 * badge in words), and Disconnect behind a confirmation that says what it revokes and where.
 */

import type { AccountView, ConsoleState } from "../wire.ts";
import type { Kit } from "./kit.ts";
import type { tokenTimeline } from "./timeline.ts";

export function accountsView(
  kit: Kit,
  timeline: typeof tokenTimeline,
  refresh: () => Promise<void>,
) {
  const { byId, el, say } = kit;
  const dialog = byId("confirm-disconnect") as HTMLDialogElement | null;
  let pending: { account: AccountView; button: HTMLButtonElement } | undefined;

  function statusBadge(account: AccountView): HTMLElement {
    if (account.status === "active") return kit.badge("Active", "ok");
    if (account.status === "expired") {
      return account.canRefresh
        ? kit.badge("Expired, refreshes on next use", "warn")
        : kit.badge("Expired", "bad");
    }
    return kit.badge("Sign in again", "bad");
  }

  function row(account: AccountView, state: ConsoleState): HTMLTableRowElement {
    const tr = el("tr", undefined, { "data-account-id": account.id });
    const who = account.account || account.subject;
    const whoCell = el("td", undefined, { "data-label": "Account" });
    whoCell.append(el("strong", who));
    if (account.account && account.account !== account.subject) {
      whoCell.append(el("span", `subject ${account.subject}`, { class: "sub" }));
    }
    const provider = el("td", undefined, { "data-label": "Provider" });
    provider.append(el("span", account.provider, { title: account.issuer }));
    const resource = el("td", undefined, { "data-label": "Resource" });
    resource.append(
      account.resource
        ? el("span", account.resourceName, { title: account.resource })
        : el("span", "—", { class: "muted", "aria-label": "none" }),
    );
    if (account.scopes.length > 0) {
      resource.append(el("span", account.scopes.join(" "), { class: "sub scopes" }));
    }
    const token = el("td", undefined, { "data-label": "Token", class: "token" });
    token.append(timeline(account, state.activity, state.now, kit));
    const expires = el("span", kit.expiresText(account.expiresAt, state.now), { class: "sub" });
    if (account.expiresAt !== null)
      expires.setAttribute("data-expires-at", String(account.expiresAt));
    token.append(expires);
    const status = el("td", undefined, { "data-label": "Status" });
    status.append(statusBadge(account));
    const button = el("button", "Disconnect", {
      type: "button",
      class: "button danger small",
      "aria-label": `Disconnect ${who} at ${account.provider}`,
      "data-focus-key": `disconnect:${account.id}`,
    });
    button.addEventListener("click", () => ask(account, button));
    const actions = el("td", undefined, { "data-label": "Actions", class: "actions" });
    actions.append(button);
    tr.append(whoCell, provider, resource, token, status, actions);
    return tr;
  }

  function ask(account: AccountView, button: HTMLButtonElement): void {
    if (!dialog) return void disconnect(account, button);
    pending = { account, button };
    const who = account.account || account.subject;
    const title = byId("confirm-title");
    const text = byId("confirm-text");
    if (title) title.textContent = `Disconnect ${who}?`;
    if (text) {
      text.textContent =
        `agentauth revokes this account's tokens at ${account.provider}` +
        `${account.resource ? ` (for ${account.resourceName})` : ""}, then deletes them from the vault. ` +
        "Agents using it will ask you to sign in again.";
    }
    dialog.returnValue = "";
    dialog.showModal();
    dialog.querySelector<HTMLButtonElement>('button[value="cancel"]')?.focus();
  }

  dialog?.addEventListener("close", () => {
    const chosen = pending;
    pending = undefined;
    if (!chosen) return;
    if (dialog.returnValue === "confirm") void disconnect(chosen.account, chosen.button);
    else chosen.button.focus();
  });

  async function disconnect(account: AccountView, button: HTMLButtonElement): Promise<void> {
    const who = account.account || account.subject;
    button.disabled = true;
    say(`Disconnecting ${who} at ${account.provider}…`);
    try {
      const answer = await kit.post("/api/accounts/disconnect", { id: account.id });
      say(typeof answer.message === "string" ? answer.message : `Disconnected ${who}.`);
      await refresh();
    } catch (error) {
      say(`Could not disconnect ${who}: ${(error as Error).message}`);
      button.disabled = false;
    }
  }

  function render(state: ConsoleState): void {
    const body = byId("accounts-body");
    if (!body) return;
    kit.keepFocus(body, () => body.replaceChildren(...state.accounts.map((a) => row(a, state))));
    const loading = byId("accounts-loading");
    if (loading) loading.hidden = true;
    const empty = byId("accounts-empty");
    if (empty) empty.hidden = state.accounts.length > 0;
    const table = byId("accounts-table");
    if (table) table.hidden = state.accounts.length === 0;
    byId("accounts-unreadable")?.replaceChildren(
      ...state.unreadable.map((r) =>
        el(
          "li",
          `Unreadable credential ${r.id}${r.subject ? ` (${r.subject})` : ""}: ${r.message}`,
        ),
      ),
    );
  }

  return { render };
}
