/// <reference lib="dom" />
/**
 * The console page's browser code. Served as `(${consoleScript.toString()})()`, so it must not use anything outside
 * the function (type imports are erased). It renders `ConsoleState` with textContent only (never innerHTML with
 * data), follows `/api/events` (falling back to polling `/api/state`), and posts JSON with the x-csrf-token header.
 */

import type {
  AcpPanelState,
  AhpPanelState,
  ConsoleState,
  DevicePromptView,
  PanelView,
  RapPanelState,
} from "../wire.ts";

export function consoleScript(): void {
  const csrf = document.querySelector('meta[name="csrf-token"]')?.getAttribute("content") ?? "";
  const byId = (id: string): HTMLElement | null => document.getElementById(id);
  const statusLine = byId("status");

  function say(text: string): void {
    if (statusLine) statusLine.textContent = text;
  }

  function el<K extends keyof HTMLElementTagNameMap>(
    tag: K,
    text?: string,
    attrs: Record<string, string> = {},
  ): HTMLElementTagNameMap[K] {
    const node = document.createElement(tag);
    if (text !== undefined) node.textContent = text;
    for (const [name, value] of Object.entries(attrs)) node.setAttribute(name, value);
    return node;
  }

  /** Only http(s) links become hrefs (the server filters too). */
  function safeHref(url: string | null): string | null {
    if (!url) return null;
    try {
      const parsed = new URL(url);
      return parsed.protocol === "https:" || parsed.protocol === "http:" ? parsed.href : null;
    } catch {
      return null;
    }
  }

  function inWords(ms: number): string {
    const s = Math.round(Math.abs(ms) / 1000);
    if (s < 120) return `${s} s`;
    const m = Math.round(s / 60);
    if (m < 120) return `${m} min`;
    const h = Math.round(m / 60);
    return h < 48 ? `${h} h` : `${Math.round(h / 24)} days`;
  }

  function expiresText(expiresAt: number | null, now: number): string {
    if (expiresAt === null) return "not said";
    return expiresAt > now ? `in ${inWords(expiresAt - now)}` : `${inWords(now - expiresAt)} ago`;
  }

  function clock(at: number): string {
    return new Date(at).toLocaleTimeString();
  }

  async function post(
    path: string,
    body: Record<string, unknown>,
  ): Promise<Record<string, unknown>> {
    const response = await fetch(path, {
      method: "POST",
      headers: { "content-type": "application/json", "x-csrf-token": csrf },
      body: JSON.stringify(body),
      credentials: "same-origin",
    });
    const answer = (await response.json().catch(() => ({}))) as Record<string, unknown>;
    if (!response.ok) {
      const error = answer.error as { message?: string } | undefined;
      throw new Error(error?.message ?? `The console answered HTTP ${response.status}.`);
    }
    return answer;
  }

  /** Keeps keyboard focus on "the same" control when a list is rebuilt. */
  function keepFocus(container: HTMLElement, rebuild: () => void): void {
    const active = document.activeElement;
    let key: string | null = null;
    if (active instanceof HTMLElement && container.contains(active)) {
      key = active.getAttribute("data-focus-key");
    }
    rebuild();
    if (key) {
      for (const candidate of Array.from(
        container.querySelectorAll<HTMLElement>("[data-focus-key]"),
      )) {
        if (candidate.getAttribute("data-focus-key") === key) {
          candidate.focus();
          break;
        }
      }
    }
  }

  function renderAccounts(state: ConsoleState): void {
    const body = byId("accounts-body");
    const empty = byId("accounts-empty");
    const table = byId("accounts-table");
    if (!body) return;
    keepFocus(body, () => {
      body.replaceChildren();
      for (const account of state.accounts) {
        const row = el("tr", undefined, { "data-account-id": account.id });
        const status =
          account.status === "active"
            ? "Active"
            : account.status === "expired"
              ? account.canRefresh
                ? "Expired (refreshes on next use)"
                : "Expired"
              : "Sign in again";
        const cells: [string, string][] = [
          ["Subject", account.subject],
          ["Provider", account.provider],
          ["Resource", account.resource || "(none)"],
          ["Account", account.account || "(unknown)"],
          ["Scopes", account.scopes.join(" ") || "(none)"],
          ["Expires", expiresText(account.expiresAt, state.now)],
          ["Status", status],
          ["Last refresh", clock(account.updatedAt)],
        ];
        for (const [label, text] of cells) {
          const cell = el("td", text, { "data-label": label });
          if (label === "Status") cell.className = `status-${account.status}`;
          if (label === "Expires" && account.expiresAt !== null) {
            cell.setAttribute("data-expires-at", String(account.expiresAt));
          }
          row.append(cell);
        }
        const who = account.account || account.subject;
        const button = el("button", "Disconnect", {
          type: "button",
          "aria-label": `Disconnect ${who} at ${account.provider}`,
          "data-focus-key": `disconnect:${account.id}`,
        });
        button.addEventListener(
          "click",
          () => void disconnect(account.id, who, account.provider, button),
        );
        const actions = el("td", undefined, { "data-label": "Actions" });
        actions.append(button);
        row.append(actions);
        body.append(row);
      }
    });
    if (empty) empty.hidden = state.accounts.length > 0;
    if (table) table.hidden = state.accounts.length === 0;
    const unreadable = byId("accounts-unreadable");
    if (unreadable) {
      unreadable.replaceChildren(
        ...state.unreadable.map((row) =>
          el(
            "li",
            `Unreadable credential ${row.id}${row.subject ? ` (${row.subject})` : ""}: ${row.message}`,
          ),
        ),
      );
    }
  }

  async function disconnect(id: string, who: string, provider: string, button: HTMLButtonElement) {
    button.disabled = true;
    say(`Disconnecting ${who} at ${provider}…`);
    try {
      const answer = await post("/api/accounts/disconnect", { id });
      say(
        typeof answer.message === "string" ? answer.message : `Disconnected ${who} at ${provider}`,
      );
      await refresh();
    } catch (error) {
      say(`Could not disconnect ${who}: ${(error as Error).message}`);
      button.disabled = false;
    }
  }

  function authorizeLink(url: string | null, label: string): HTMLAnchorElement | null {
    const href = safeHref(url);
    if (!href) return null;
    return el("a", "Authorize", {
      class: "authorize",
      href,
      target: "_blank",
      rel: "noopener noreferrer",
      "aria-label": label,
    });
  }

  function renderPending(state: ConsoleState): void {
    const list = byId("pending-list");
    const empty = byId("pending-empty");
    if (!list) return;
    const waiting = state.pending.filter((call) => call.status === "authorizing");
    keepFocus(list, () => {
      list.replaceChildren();
      for (const call of state.pending) {
        const item = el("li", undefined, { "data-call-id": call.id });
        const words =
          call.status === "authorizing"
            ? "waiting for authorization"
            : call.status === "completed"
              ? "completed"
              : "failed";
        item.append(
          el(
            "span",
            `${call.toolset}.${call.operation}${call.provider ? ` (${call.provider})` : ""}${call.userId ? ` for ${call.userId}` : ""}: `,
          ),
          el("strong", words, { class: `status-${call.status}` }),
        );
        const link = authorizeLink(
          call.authUrl,
          `Authorize ${call.operation}${call.userId ? ` for ${call.userId}` : ""}`,
        );
        if (link) {
          link.setAttribute("data-focus-key", `authorize:${call.id}`);
          item.append(" ", link);
        }
        list.append(item);
      }
    });
    if (empty) {
      empty.hidden = waiting.length > 0;
      empty.textContent =
        state.pending.length > 0
          ? "Nothing waits for you. Recently finished:"
          : "Nothing waits for you.";
    }
  }

  function renderActivity(state: ConsoleState): void {
    const list = byId("activity-list");
    if (!list) return;
    const items = [...state.activity].reverse().map((event) => {
      const item = el("li", undefined, { "data-seq": String(event.seq) });
      item.append(el("time", clock(event.at), { datetime: new Date(event.at).toISOString() }));
      item.append(` ${event.component}: ${event.summary}`);
      return item;
    });
    list.replaceChildren(...items);
  }

  function promptNode(prompt: DevicePromptView | null): HTMLElement[] {
    if (!prompt) return [];
    const href = safeHref(prompt.verificationUriComplete ?? prompt.verificationUri);
    const p = el("p", "To sign in, open ");
    if (href) {
      p.append(
        el("a", prompt.verificationUri, { href, target: "_blank", rel: "noopener noreferrer" }),
      );
    } else {
      p.append(prompt.verificationUri);
    }
    p.append(" and enter the code ", el("strong", prompt.userCode), ".");
    return [p];
  }

  const rapWords: Record<string, string> = {
    authorizing: "waiting for authorization",
    pending: "running",
    completed: "completed",
    failed: "failed",
    timed_out: "failed (timed out)",
    cancelled: "failed (cancelled)",
  };

  function fillSelect(select: HTMLSelectElement | null, values: string[]): void {
    if (!select) return;
    const current = Array.from(select.options)
      .map((option) => option.value)
      .join("\n");
    if (current === values.join("\n")) return;
    const chosen = select.value;
    select.replaceChildren(...values.map((value) => el("option", value, { value })));
    if (values.includes(chosen)) select.value = chosen;
  }

  function renderRap(state: RapPanelState): void {
    fillSelect(document.querySelector<HTMLSelectElement>('select[name="demo-user"]'), state.users);
    fillSelect(
      document.querySelector<HTMLSelectElement>('select[name="demo-operation"]'),
      state.operations,
    );
    const list = byId("rap-calls");
    if (!list) return;
    keepFocus(list, () => {
      list.replaceChildren();
      for (const call of [...state.calls].reverse()) {
        const item = el("li", undefined, { "data-call-id": call.id });
        const words = rapWords[call.status] ?? call.status;
        item.append(
          el("span", `${call.userId}: ${call.operation} — `),
          el("strong", words, {
            class: `status-${call.status === "authorizing" ? "authorizing" : call.status === "completed" ? "completed" : call.status === "pending" ? "waiting" : "failed"}`,
          }),
        );
        if (call.status === "authorizing") {
          const link = authorizeLink(
            call.authUrl,
            `Authorize ${call.operation} for ${call.userId}`,
          );
          if (link) {
            link.setAttribute("data-focus-key", `rap-authorize:${call.id}`);
            item.append(" ", link);
          }
        }
        if (call.result !== null) {
          // role none: an <output> is a status region by default, and the page keeps exactly one (the status line).
          const output = el("output", call.result, { role: "none" });
          if (call.isError) output.className = "status-failed";
          item.append(output);
        }
        list.append(item);
      }
    });
  }

  function renderAcp(state: AcpPanelState): void {
    const signedIn = byId("acp-signed-in");
    if (signedIn) {
      signedIn.textContent =
        state.signedIn === null
          ? "Not checked yet."
          : state.signedIn
            ? "Signed in."
            : "Not signed in.";
    }
    const accounts = byId("acp-accounts");
    accounts?.replaceChildren(
      ...state.accounts.map((account) =>
        el(
          "li",
          `${account.label}${account.expiresAt !== null ? ` (expires ${expiresText(account.expiresAt, Date.now())})` : ""}`,
        ),
      ),
    );
    byId("acp-prompt")?.replaceChildren(...promptNode(state.prompt));
    const busy = byId("acp-busy");
    if (busy) busy.textContent = state.busy ? `Working: ${state.busy}…` : "";
    setPanelButtons("acp", state.busy !== null);
    const error = byId("acp-error");
    if (error) error.textContent = state.lastError ? `Error: ${state.lastError}` : "";
    const command = byId("acp-command");
    if (command) command.textContent = state.agentCommand;
  }

  function renderAhp(state: AhpPanelState, now: number): void {
    const connection = byId("ahp-connection");
    if (connection)
      connection.textContent = `${state.connected ? "Connected to" : "Not connected to"} ${state.url}`;
    byId("ahp-resources")?.replaceChildren(
      ...state.resources.map((resource) => {
        const signed = resource.authenticated ? "signed in" : "not signed in";
        const item = el("li", `${resource.name} (${resource.resource}): ${signed}`, {
          "data-resource": resource.resource,
        });
        if (resource.subject) item.append(`, as ${resource.subject}`);
        if (resource.expiresAt !== null) {
          item.append(", ");
          item.append(
            el("span", `expires ${expiresText(resource.expiresAt, now)}`, {
              "data-expires-at": String(resource.expiresAt),
              "data-expires-prefix": "expires ",
            }),
          );
        }
        item.append(`, ${resource.renewals} renewal${resource.renewals === 1 ? "" : "s"}`);
        return item;
      }),
    );
    byId("ahp-prompt")?.replaceChildren(...promptNode(state.prompt));
    const busy = byId("ahp-busy");
    if (busy) busy.textContent = state.busy ? `Working: ${state.busy}…` : "";
    setPanelButtons("ahp", state.busy !== null);
    const error = byId("ahp-error");
    if (error) error.textContent = state.lastError ? `Error: ${state.lastError}` : "";
  }

  /** A panel runs one action at a time: its buttons are disabled (and say so to assistive tech) while it works. */
  function setPanelButtons(panel: string, busy: boolean): void {
    for (const button of Array.from(
      document.querySelectorAll<HTMLButtonElement>(`button[data-panel="${panel}"][data-action]`),
    )) {
      button.disabled = busy;
    }
  }

  function renderPanels(panels: PanelView[], now: number): void {
    for (const panel of panels) {
      if (panel.id === "rap") renderRap(panel.state as RapPanelState);
      else if (panel.id === "acp") renderAcp(panel.state as AcpPanelState);
      else if (panel.id === "ahp") renderAhp(panel.state as AhpPanelState, now);
    }
  }

  let lastState: ConsoleState | null = null;
  /** The server's clock minus ours, so relative times agree with the server's. */
  let skew = 0;
  function render(state: ConsoleState): void {
    lastState = state;
    skew = state.now - Date.now();
    renderAccounts(state);
    renderPending(state);
    renderPanels(state.panels, state.now);
    renderActivity(state);
  }

  async function refresh(): Promise<void> {
    const response = await fetch("/api/state", { credentials: "same-origin" });
    if (response.status === 401) {
      say("This console session ended; start the console again and open the new link.");
      return;
    }
    if (response.ok) render((await response.json()) as ConsoleState);
  }

  let polling: number | undefined;
  function startPolling(): void {
    if (polling !== undefined) return;
    polling = window.setInterval(() => void refresh().catch(() => {}), 2000);
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
    say("Opening the sign-in page…");
    post("/api/connect", { target: select.value })
      .then((answer) => {
        const url = safeHref(
          typeof answer.authorizationUrl === "string" ? answer.authorizationUrl : null,
        );
        if (url) window.location.assign(url);
        else say("The console could not start the sign-in.");
      })
      .catch((error: Error) => say(`Could not connect: ${error.message}`));
  });

  document.getElementById("rap-form")?.addEventListener("submit", (event) => {
    event.preventDefault();
    const user = document.querySelector<HTMLSelectElement>('select[name="demo-user"]')?.value ?? "";
    const operation =
      document.querySelector<HTMLSelectElement>('select[name="demo-operation"]')?.value ?? "";
    say(`Invoking ${operation} as ${user}…`);
    post("/api/panels/rap/invoke", { user, operation })
      .then(() => say(`Invoked ${operation} as ${user}.`))
      .catch((error: Error) => say(`Could not invoke ${operation}: ${error.message}`));
  });

  const panelButtons = document.querySelectorAll<HTMLButtonElement>(
    "button[data-panel][data-action]",
  );
  for (const button of Array.from(panelButtons)) {
    button.addEventListener("click", () => {
      const panel = button.getAttribute("data-panel") ?? "";
      const action = button.getAttribute("data-action") ?? "";
      const label = button.textContent ?? action;
      say(`${label}…`);
      post(`/api/panels/${encodeURIComponent(panel)}/${encodeURIComponent(action)}`, {})
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
      const prefix = node.getAttribute("data-expires-prefix") ?? "";
      if (Number.isFinite(at)) node.textContent = `${prefix}${expiresText(at, now)}`;
    }
  }, 1000);

  void refresh().catch(() => {});
  follow();
}
