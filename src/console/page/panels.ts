/// <reference lib="dom" />
/**
 * What waits for the person and the demo's panels: pending RAP authorizations, the demo thread (RAP), the ACP and
 * AHP panels. Every Authorize and sign-in link opens a new tab, as Connect does; statuses are badges in words.
 */

import type {
  AcpPanelState,
  AhpPanelState,
  ConsoleState,
  DevicePromptView,
  PanelView,
  RapPanelState,
} from "../wire.ts";
import type { Kit } from "./kit.ts";

export function panelsView(kit: Kit) {
  const { byId, el, safeHref } = kit;

  function authorizeLink(url: string | null, label: string, key: string): HTMLAnchorElement | null {
    const href = safeHref(url);
    if (!href) return null;
    return el("a", "Authorize", {
      class: "authorize button primary small",
      href,
      target: "_blank",
      rel: "noopener noreferrer",
      "aria-label": label,
      "data-focus-key": key,
    });
  }

  const callWords: Record<string, [string, "ok" | "warn" | "bad" | "neutral"]> = {
    authorizing: ["waiting for authorization", "warn"],
    pending: ["running", "neutral"],
    completed: ["completed", "ok"],
    failed: ["failed", "bad"],
    timed_out: ["failed (timed out)", "bad"],
    cancelled: ["failed (cancelled)", "bad"],
  };

  function renderPending(state: ConsoleState): void {
    const list = byId("pending-list");
    if (!list) return;
    kit.keepFocus(list, () => {
      list.replaceChildren(
        ...state.pending.map((call) => {
          const item = el("li", undefined, { "data-call-id": call.id, class: "item" });
          const [words, tone] = callWords[call.status] ?? [call.status, "neutral"];
          item.append(
            el(
              "span",
              `${call.toolset}.${call.operation}${call.provider ? ` (${call.provider})` : ""}${call.userId ? ` for ${call.userId}` : ""}`,
            ),
            kit.badge(words, tone),
          );
          const who = call.userId ? ` for ${call.userId}` : "";
          const link = authorizeLink(
            call.authUrl,
            `Authorize ${call.operation}${who}`,
            `authorize:${call.id}`,
          );
          if (link) item.append(link);
          return item;
        }),
      );
    });
    const waiting = state.pending.filter((call) => call.status === "authorizing").length;
    const empty = byId("pending-empty");
    if (empty) {
      empty.hidden = waiting > 0;
      empty.textContent =
        state.pending.length > 0
          ? "Nothing waits for you. Recently finished:"
          : "Nothing waits for you.";
    }
  }

  function promptNode(prompt: DevicePromptView | null): HTMLElement[] {
    if (!prompt) return [];
    const href = safeHref(prompt.verificationUriComplete ?? prompt.verificationUri);
    const p = el("p", "To sign in, open ", { class: "prompt" });
    p.append(
      href
        ? el("a", prompt.verificationUri, { href, target: "_blank", rel: "noopener noreferrer" })
        : prompt.verificationUri,
    );
    p.append(" and enter the code ", el("strong", prompt.userCode, { class: "code" }), ".");
    return [p];
  }

  function fillSelect(select: HTMLSelectElement | null, values: string[]): void {
    if (!select) return;
    if (
      Array.from(select.options)
        .map((o) => o.value)
        .join("\n") === values.join("\n")
    )
      return;
    const chosen = select.value;
    select.replaceChildren(...values.map((value) => el("option", value, { value })));
    if (values.includes(chosen)) select.value = chosen;
  }

  function renderRap(state: RapPanelState): void {
    fillSelect(document.querySelector('select[name="demo-user"]'), state.users);
    fillSelect(document.querySelector('select[name="demo-operation"]'), state.operations);
    const list = byId("rap-calls");
    if (!list) return;
    kit.keepFocus(list, () => {
      list.replaceChildren(
        ...[...state.calls].reverse().map((call) => {
          const item = el("li", undefined, { "data-call-id": call.id, class: "item" });
          const [words, tone] = callWords[call.status] ?? [call.status, "neutral"];
          item.append(el("span", `${call.userId}: ${call.operation}`), kit.badge(words, tone));
          if (call.status === "authorizing") {
            const link = authorizeLink(
              call.authUrl,
              `Authorize ${call.operation} for ${call.userId}`,
              `rap-authorize:${call.id}`,
            );
            if (link) item.append(link);
          }
          if (call.result !== null) {
            // role none: an <output> is a status region by default; the page keeps one (the status line).
            const output = el("output", call.result, { role: "none" });
            if (call.isError) output.className = "failed";
            item.append(output);
          }
          return item;
        }),
      );
    });
  }

  function busyAndError(panel: string, busy: string | null, lastError: string | null): void {
    const busyNode = byId(`${panel}-busy`);
    if (busyNode) busyNode.textContent = busy ? `Working: ${busy}…` : "";
    for (const button of Array.from(
      document.querySelectorAll<HTMLButtonElement>(`button[data-panel="${panel}"][data-action]`),
    )) {
      button.disabled = busy !== null;
    }
    const error = byId(`${panel}-error`);
    if (error) error.textContent = lastError ? `Error: ${lastError}` : "";
  }

  function renderAcp(state: AcpPanelState, now: number): void {
    const signedIn = byId("acp-signed-in");
    if (signedIn) {
      const [text, tone] =
        state.signedIn === null
          ? (["Checking…", "neutral"] as const)
          : state.signedIn
            ? (["Signed in.", "ok"] as const)
            : (["Not signed in.", "neutral"] as const);
      signedIn.replaceChildren(kit.badge(text, tone));
    }
    byId("acp-accounts")?.replaceChildren(
      ...state.accounts.map((a) =>
        el(
          "li",
          `${a.label}${a.expiresAt !== null ? ` (${kit.expiresText(a.expiresAt, now)})` : ""}`,
        ),
      ),
    );
    byId("acp-prompt")?.replaceChildren(...promptNode(state.prompt));
    busyAndError("acp", state.busy, state.lastError);
    const command = byId("acp-command");
    if (command) command.textContent = state.agentCommand;
  }

  function renderAhp(state: AhpPanelState, now: number): void {
    const connection = byId("ahp-connection");
    if (connection) {
      connection.replaceChildren(
        kit.badge(
          state.connected ? "Connected" : "Not connected",
          state.connected ? "ok" : "neutral",
        ),
        ` to ${state.url}`,
      );
    }
    byId("ahp-resources")?.replaceChildren(
      ...state.resources.map((r) => {
        const item = el(
          "li",
          `${r.name} (${r.resource}): ${r.authenticated ? "signed in" : "not signed in"}`,
          {
            "data-resource": r.resource,
            class: "line",
          },
        );
        if (r.subject) item.append(`, as ${r.subject}`);
        if (r.expiresAt !== null) {
          item.append(
            ", ",
            el("span", kit.expiresText(r.expiresAt, now), {
              "data-expires-at": String(r.expiresAt),
            }),
          );
        }
        item.append(`, ${r.renewals} renewal${r.renewals === 1 ? "" : "s"}`);
        return item;
      }),
    );
    byId("ahp-prompt")?.replaceChildren(...promptNode(state.prompt));
    busyAndError("ahp", state.busy, state.lastError);
  }

  function render(state: ConsoleState): void {
    renderPending(state);
    for (const panel of state.panels as PanelView[]) {
      if (panel.id === "rap") renderRap(panel.state as RapPanelState);
      else if (panel.id === "acp") renderAcp(panel.state as AcpPanelState, state.now);
      else if (panel.id === "ahp") renderAhp(panel.state as AhpPanelState, state.now);
    }
  }

  return { render };
}
