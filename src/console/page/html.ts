/**
 * The console's documents, built on the server: the page shell (landmarks the script fills in and the browser test
 * finds), the 401 page, and the pages `/connect/callback` answers. Every piece of data is HTML-escaped.
 */

import type { ConnectTargetView, PanelView } from "../wire.ts";

export function escapeHtml(text: string): string {
  return text
    .replaceAll("&", "&amp;")
    .replaceAll("<", "&lt;")
    .replaceAll(">", "&gt;")
    .replaceAll('"', "&quot;")
    .replaceAll("'", "&#39;");
}

function document(title: string, body: string, head = ""): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(title)}</title>
<link rel="icon" href="data:,">
<link rel="stylesheet" href="/assets/console.css">
${head}</head>
<body>
${body}
</body>
</html>
`;
}

const PANEL_SECTIONS: Record<PanelView["id"], string> = {
  rap: `<section id="panel-rap" aria-labelledby="panel-rap-title">
<h2 id="panel-rap-title">Demo thread (RAP)</h2>
<p class="muted">Invoke an operation of the example RAP tool as a demo user. The first call asks that user to authorize.</p>
<form id="rap-form">
<label>User <select name="demo-user"></select></label>
<label>Operation <select name="demo-operation"></select></label>
<button type="submit">Invoke</button>
</form>
<ul id="rap-calls" aria-label="Demo thread calls"></ul>
</section>`,
  acp: `<section id="panel-acp" aria-labelledby="panel-acp-title">
<h2 id="panel-acp-title">ACP</h2>
<p id="acp-signed-in">Not checked yet.</p>
<ul id="acp-accounts" aria-label="ACP accounts"></ul>
<div id="acp-prompt"></div>
<p id="acp-busy" class="muted"></p>
<p id="acp-error"></p>
<p>
<button type="button" data-panel="acp" data-action="login">Sign in (ACP)</button>
<button type="button" data-panel="acp" data-action="logout">Sign out (ACP)</button>
<button type="button" data-panel="acp" data-action="refresh">Check status (ACP)</button>
</p>
<p class="muted">Try it in a terminal: <code id="acp-command"></code></p>
</section>`,
  ahp: `<section id="panel-ahp" aria-labelledby="panel-ahp-title">
<h2 id="panel-ahp-title">AHP</h2>
<p id="ahp-connection"></p>
<ul id="ahp-resources" aria-label="AHP resources"></ul>
<div id="ahp-prompt"></div>
<p id="ahp-busy" class="muted"></p>
<p id="ahp-error"></p>
<p>
<button type="button" data-panel="ahp" data-action="authenticate">Authenticate (AHP)</button>
<button type="button" data-panel="ahp" data-action="refresh">Refresh (AHP)</button>
</p>
</section>`,
};

/** The console page; `csrf` is the session's CSRF token (the script sends it back in `x-csrf-token`). */
export function consolePage(options: {
  csrf: string;
  connectTargets: readonly ConnectTargetView[];
  panels: readonly Pick<PanelView, "id" | "title">[];
}): string {
  const targets = options.connectTargets
    .map((t) => `<option value="${escapeHtml(t.id)}">${escapeHtml(t.label)}</option>`)
    .join("");
  const connect =
    options.connectTargets.length > 0
      ? `<form id="connect-form">
<label>Connect <select name="connect-target">${targets}</select></label>
<button type="submit">Connect</button>
</form>`
      : `<p class="muted">No connect targets are configured (agentauth console --connect-issuer URL --connect-client-id ID).</p>`;
  const panels = options.panels.map((panel) => PANEL_SECTIONS[panel.id] ?? "").join("\n");
  const body = `<header><h1>agentauth console</h1>
<p role="status" aria-live="polite" id="status" class="status-line"></p>
</header>
<main>
<section id="accounts" aria-labelledby="accounts-title">
<h2 id="accounts-title">Connected accounts</h2>
<div class="table-wrap">
<table id="accounts-table">
<caption>Credentials in the vault (tokens are never shown)</caption>
<thead><tr><th scope="col">Subject</th><th scope="col">Provider</th><th scope="col">Resource</th><th scope="col">Account</th><th scope="col">Scopes</th><th scope="col">Expires</th><th scope="col">Status</th><th scope="col">Last refresh</th><th scope="col"><span class="muted">Actions</span></th></tr></thead>
<tbody id="accounts-body"></tbody>
</table>
</div>
<p id="accounts-empty">No connected accounts yet.</p>
<ul id="accounts-unreadable" aria-label="Unreadable credentials"></ul>
${connect}
</section>
<section id="pending" aria-labelledby="pending-title">
<h2 id="pending-title">Pending authorizations</h2>
<p id="pending-empty" class="muted">Nothing waits for you.</p>
<ul id="pending-list"></ul>
</section>
${panels}
<section id="activity" aria-labelledby="activity-title">
<h2 id="activity-title">Activity</h2>
<ol id="activity-list" reversed></ol>
</section>
</main>
<script src="/assets/console.js" defer></script>`;
  return document(
    "agentauth console",
    body,
    `<meta name="csrf-token" content="${escapeHtml(options.csrf)}">\n`,
  );
}

/** Without a session: how to get back in (the printed link works once) without stopping anything. */
export function signedOutPage(linkCommand?: string): string {
  const fresh = linkCommand
    ? `<p>To get a fresh link without restarting anything, run this in a terminal and open the link it prints:</p>
<pre><code>${escapeHtml(linkCommand)}</code></pre>`
    : `<p>To get a fresh link, stop the console (Ctrl-C) and start it again, then open the link it prints.</p>`;
  return document(
    "agentauth console: sign-in needed",
    `<main class="narrow"><h1>agentauth console</h1>
<p>This browser has no console session. The link the console printed works once, so a browser that opens it
after another one (a link preview, a screenshot tool, a second browser) is not let in.</p>
${fresh}</main>`,
  );
}

/** What `/connect/callback` shows: the outcome in words and the way back. */
export function callbackPage(title: string, message: string, ok: boolean): string {
  return document(
    `agentauth console: ${title}`,
    `<main><h1>${escapeHtml(title)}</h1>
<p role="${ok ? "status" : "alert"}">${escapeHtml(message)}</p>
<p><a href="/">Back to the console</a></p></main>`,
  );
}
