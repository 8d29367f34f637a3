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
  rap: `<section id="panel-rap" class="card" aria-labelledby="panel-rap-title">
<h2 id="panel-rap-title">Demo thread (RAP)</h2>
<p class="muted">Invoke an operation of the example RAP tool as a demo user. The first call of an operation that needs
an account asks that user to authorize, in a new tab.</p>
<form id="rap-form" class="row">
<label>User <select name="demo-user"></select></label>
<label>Operation <select name="demo-operation"></select></label>
<button type="submit" class="button primary">Invoke</button>
</form>
<ul id="rap-calls" class="items" aria-label="Demo thread calls"></ul>
</section>`,
  acp: `<section id="panel-acp" class="card" aria-labelledby="panel-acp-title">
<h2 id="panel-acp-title">ACP</h2>
<p class="muted">The example ACP agent, as the demo's own ACP client (an editor) sees it.</p>
<p id="acp-signed-in"><span class="badge badge-neutral"><span class="dot" aria-hidden="true"></span>Loading…</span></p>
<ul id="acp-accounts" aria-label="ACP accounts"></ul>
<div id="acp-prompt"></div>
<p id="acp-busy" class="muted"></p>
<p id="acp-error" class="error"></p>
<p class="row">
<button type="button" class="button primary" data-panel="acp" data-action="login">Sign in (ACP)</button>
<button type="button" class="button" data-panel="acp" data-action="logout">Sign out (ACP)</button>
<button type="button" class="button" data-panel="acp" data-action="refresh">Check status (ACP)</button>
</p>
<p class="muted small">Try it in a terminal: <code id="acp-command"></code></p>
</section>`,
  ahp: `<section id="panel-ahp" class="card" aria-labelledby="panel-ahp-title">
<h2 id="panel-ahp-title">AHP</h2>
<p class="muted">The demo's own AHP client, connected to the example AHP host: its short-lived tokens are renewed
before they expire.</p>
<p id="ahp-connection">Loading…</p>
<ul id="ahp-resources" class="items" aria-label="AHP resources"></ul>
<div id="ahp-prompt"></div>
<p id="ahp-busy" class="muted"></p>
<p id="ahp-error" class="error"></p>
<p class="row">
<button type="button" class="button primary" data-panel="ahp" data-action="authenticate">Authenticate (AHP)</button>
<button type="button" class="button" data-panel="ahp" data-action="refresh">Refresh (AHP)</button>
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
      ? `<form id="connect-form" class="row connect">
<label>Connect an account at <select name="connect-target">${targets}</select></label>
<button type="submit" class="button primary">Connect</button>
</form>`
      : `<p class="muted small">To offer Connect here, start the console with <code>--connect-issuer URL --connect-client-id ID</code>.</p>`;
  const panels = options.panels.map((panel) => PANEL_SECTIONS[panel.id] ?? "").join("\n");
  const body = `<header class="top">
<div class="wrap">
<h1><span class="logo" aria-hidden="true"></span>agentauth console</h1>
<p class="intro">The accounts your agents sign in with, kept encrypted in the vault on this machine, and what needs
you now. Tokens never appear on this page. <a href="/help">How the console works</a></p>
<p role="status" aria-live="polite" id="status" class="status-line"></p>
</div>
</header>
<main class="wrap">
<section id="accounts" class="card" aria-labelledby="accounts-title">
<div class="card-head">
<h2 id="accounts-title">Connected accounts</h2>
${connect}
</div>
<p id="accounts-loading" class="loading">Loading…</p>
<div class="table-wrap">
<table id="accounts-table" hidden>
<caption class="visually-hidden">Connected accounts: who, where, the token's lifetime and status (tokens are never shown)</caption>
<thead><tr><th scope="col">Account</th><th scope="col">Provider</th><th scope="col">Resource and scopes</th><th scope="col">Token</th><th scope="col">Status</th><th scope="col"><span class="visually-hidden">Actions</span></th></tr></thead>
<tbody id="accounts-body"></tbody>
</table>
</div>
<p id="accounts-empty" class="empty" hidden>No connected accounts yet. Connect one above, or sign in from an agent.</p>
<ul id="accounts-unreadable" class="error" aria-label="Unreadable credentials"></ul>
</section>
<section id="pending" class="card" aria-labelledby="pending-title">
<h2 id="pending-title">Pending authorizations</h2>
<p id="pending-empty" class="muted">Nothing waits for you.</p>
<ul id="pending-list" class="items"></ul>
</section>
${panels}
<section id="activity" class="card" aria-labelledby="activity-title">
<div class="card-head">
<h2 id="activity-title">Activity</h2>
<label class="filter">Show <select name="activity-filter"></select></label>
</div>
<p id="activity-empty" class="muted" hidden></p>
<ol id="activity-list" class="activity"></ol>
</section>
</main>
<dialog id="confirm-disconnect" aria-labelledby="confirm-title" aria-describedby="confirm-text">
<form method="dialog">
<h2 id="confirm-title">Disconnect?</h2>
<p id="confirm-text"></p>
<p class="row end">
<button type="submit" value="cancel" class="button">Cancel</button>
<button type="submit" value="confirm" class="button danger">Disconnect and revoke</button>
</p>
</form>
</dialog>
<script src="/assets/console.js" defer></script>`;
  return document(
    "agentauth console",
    body,
    `<meta name="csrf-token" content="${escapeHtml(options.csrf)}">\n`,
  );
}

/** `/help`: what the console shows and does, in a page of its own (the intro's link). */
export function helpPage(linkCommand?: string): string {
  return document(
    "How the agentauth console works",
    `<main class="wrap narrow doc"><p><a href="/">← Back to the console</a></p>
<h1>How the agentauth console works</h1>
<p>The console is a page on this machine only (127.0.0.1) over agentauth's credential vault: the accounts your
agents and tools sign in with, encrypted with AES-256-GCM. It shows who is signed in where, never a token.</p>
<h2>Connected accounts</h2>
<p>One row per stored sign-in: the account, its provider and the resource the tokens are for, a timeline of the
current access token (from when it was issued to when it expires, with a dot for each refresh the console saw),
and its status. <strong>Disconnect</strong> asks first, then revokes the tokens at the provider (RFC 7009 or the
provider's own call) and deletes them here. <strong>Connect</strong> opens the provider's sign-in in a new tab; the
account appears here when you are done.</p>
<h2>Pending authorizations</h2>
<p>Calls of RAP tools waiting for you to authorize an account. <strong>Authorize</strong> opens the tool's consent
page in a new tab.</p>
<h2>Activity</h2>
<p>Sign-ins, refreshes, renewals, revocations and results, newest first. The same event repeated (a renewal every
few minutes) is one line with ×N; <strong>Show</strong> narrows the list to one kind.</p>
<h2>Getting in</h2>
<p>The link the console prints works once. If something else opened it first (a link preview, a screenshot tool,
another browser), or you lost the tab, run ${linkCommand ? `<code>${escapeHtml(linkCommand)}</code>` : "<code>agentauth console --link</code>"} for
a fresh one. Every change needs this browser's session and its CSRF token; other sites cannot act here.</p>
<p>More: <code>docs/console.md</code> in the agentauth package.</p></main>`,
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
    `<main class="wrap narrow doc"><h1><span class="logo" aria-hidden="true"></span>agentauth console</h1>
<p>This browser has no console session. The link the console printed works once, so a browser that opens it
after another one (a link preview, a screenshot tool, a second browser) is not let in.</p>
${fresh}</main>`,
  );
}

/** What `/connect/callback` shows: the outcome in words and the way back. */
export function callbackPage(title: string, message: string, ok: boolean): string {
  return document(
    `agentauth console: ${title}`,
    `<main class="wrap narrow doc"><h1><span class="logo" aria-hidden="true"></span>${escapeHtml(title)}</h1>
<p role="${ok ? "status" : "alert"}">${escapeHtml(message)}</p>
<p><a href="/">Back to the console</a></p></main>`,
  );
}
