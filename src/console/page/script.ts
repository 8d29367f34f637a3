/// <reference lib="dom" />
/**
 * The page script's entry: builds the parts (bundle.ts serves them as one script), follows `/api/events` (falling
 * back to polling `/api/state`), and wires the forms. Connect opens the sign-in in a new tab, as every Authorize
 * link does, so the console tab stays where it is and shows the account when the sign-in is done.
 */

import type { ConsoleState } from "../wire.ts";
import type { accountsView } from "./accounts.ts";
import type { ACTIVITY_FILTERS, activityView, groupActivity } from "./activity.ts";
import type { consoleKit } from "./kit.ts";
import type { panelsView } from "./panels.ts";
import type { tokenTimeline } from "./timeline.ts";

export interface PageParts {
  kit: typeof consoleKit;
  timeline: typeof tokenTimeline;
  accounts: typeof accountsView;
  group: typeof groupActivity;
  filters: typeof ACTIVITY_FILTERS;
  activity: typeof activityView;
  panels: typeof panelsView;
}

export function consoleMain(parts: PageParts): void {
  const kit = parts.kit();
  const { say, safeHref } = kit;
  const accounts = parts.accounts(kit, parts.timeline, () => refresh());
  const activity = parts.activity(kit, parts.group, parts.filters);
  const panels = parts.panels(kit);

  let lastState: ConsoleState | null = null;
  /** The server's clock minus ours, so relative times agree with the server's. */
  let skew = 0;
  function render(state: ConsoleState): void {
    lastState = state;
    skew = state.now - Date.now();
    accounts.render(state);
    panels.render(state);
    activity.render(state);
    document.body.setAttribute("data-state", "ready");
  }

  async function refresh(): Promise<void> {
    const response = await fetch("/api/state", { credentials: "same-origin" });
    if (response.status === 401) {
      say("This console session ended: run `agentauth console --link` for a fresh link.");
      return;
    }
    if (response.ok) render((await response.json()) as ConsoleState);
  }

  let polling = false;
  function startPolling(): void {
    if (polling) return;
    polling = true;
    window.setInterval(() => void refresh().catch(() => {}), 2000);
  }

  function follow(): void {
    if (typeof EventSource === "undefined") {
      startPolling();
      return;
    }
    const events = new EventSource("/api/events");
    events.addEventListener("state", (event) => {
      render(JSON.parse((event as MessageEvent<string>).data) as ConsoleState);
    });
    events.addEventListener("error", () => {
      // A closed stream (server gone, session refused) is not retried by the browser: poll instead.
      if (events.readyState === EventSource.CLOSED) startPolling();
    });
  }

  document.getElementById("connect-form")?.addEventListener("submit", (event) => {
    event.preventDefault();
    const select = document.querySelector<HTMLSelectElement>('select[name="connect-target"]');
    if (!select) return;
    // Opened now, within the click (a tab opened after the request would be a blocked pop-up), and cut off from
    // this page before the authorization server is loaded in it.
    const tab = window.open("about:blank", "_blank");
    if (tab) tab.opener = null;
    say("Opening the sign-in in a new tab…");
    kit
      .post("/api/connect", { target: select.value })
      .then((answer) => {
        const url = safeHref(
          typeof answer.authorizationUrl === "string" ? answer.authorizationUrl : null,
        );
        if (!url) throw new Error("the console could not start the sign-in");
        if (tab) {
          tab.location.href = url;
          say("Sign in in the new tab; the account appears here when you are done.");
        } else {
          window.location.assign(url);
        }
      })
      .catch((error: Error) => {
        tab?.close();
        say(`Could not connect: ${error.message}`);
      });
  });

  document.getElementById("rap-form")?.addEventListener("submit", (event) => {
    event.preventDefault();
    const user = document.querySelector<HTMLSelectElement>('select[name="demo-user"]')?.value ?? "";
    const operation =
      document.querySelector<HTMLSelectElement>('select[name="demo-operation"]')?.value ?? "";
    say(`Invoking ${operation} as ${user}…`);
    kit
      .post("/api/panels/rap/invoke", { user, operation })
      .then(() => say(`Invoked ${operation} as ${user}.`))
      .catch((error: Error) => say(`Could not invoke ${operation}: ${error.message}`));
  });

  for (const button of Array.from(
    document.querySelectorAll<HTMLButtonElement>("button[data-panel][data-action]"),
  )) {
    button.addEventListener("click", () => {
      const panel = button.getAttribute("data-panel") ?? "";
      const action = button.getAttribute("data-action") ?? "";
      const label = button.textContent ?? action;
      say(`${label}…`);
      kit
        .post(`/api/panels/${encodeURIComponent(panel)}/${encodeURIComponent(action)}`, {})
        .then((answer) =>
          say(typeof answer.message === "string" ? answer.message : `${label}: done.`),
        )
        .catch((error: Error) => say(`${label} failed: ${error.message}`));
    });
  }

  // Relative times ("expires in 40 s") move on without a new state: only those texts change.
  window.setInterval(() => {
    if (!lastState) return;
    const now = Date.now() + skew;
    for (const node of Array.from(document.querySelectorAll<HTMLElement>("[data-expires-at]"))) {
      const at = Number(node.getAttribute("data-expires-at"));
      if (Number.isFinite(at)) node.textContent = kit.expiresText(at, now);
    }
  }, 1000);

  void refresh().catch(() => {});
  follow();
}
