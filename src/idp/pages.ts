/** The embedded server's HTML: plain, self-contained pages (no external fonts or scripts) for people and tests. */

export function escapeHtml(value: string): string {
  return value
    .replaceAll("&", "&amp;")
    .replaceAll("<", "&lt;")
    .replaceAll(">", "&gt;")
    .replaceAll('"', "&quot;")
    .replaceAll("'", "&#39;");
}

export function page(title: string, body: string): string {
  return `<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>${escapeHtml(title)}</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
<style>body{font-family:system-ui,sans-serif;max-width:28rem;margin:3rem auto;padding:0 1rem;line-height:1.5}
label{display:block;margin-top:.6rem;font-weight:600}input,button{font-size:1rem;padding:.4rem;margin:.2rem 0;width:100%;box-sizing:border-box}
button{cursor:pointer}:focus-visible{outline:3px solid #1a5fb4;outline-offset:2px}code{font-size:1.4rem}
li code,p code{font-size:1rem}.actions form{margin:.4rem 0}.primary{background:#1a5fb4;color:#fff;border:1px solid #1a5fb4}[role=alert]{color:#a51d2d;font-weight:600}</style>
</head><body><main><h1>${escapeHtml(title)}</h1>${body}</main></body></html>`;
}

export interface LoginPageView {
  uid: string;
  clientName: string;
  /** Shown above the form, announced to screen readers ("Unknown user or wrong password."). */
  error?: string;
  /** List the demo accounts and their passwords: demos only. */
  showDemoAccounts?: boolean;
}

/** The sign-in form. Field names `login` and `password` are what the interaction route reads. */
export function loginPage(view: LoginPageView): string {
  const describedBy = view.error ? ' aria-describedby="login-error"' : "";
  return page(
    "Sign in",
    `<p>Sign in to continue to <strong>${escapeHtml(view.clientName)}</strong>.</p>
${view.error ? `<p role="alert" id="login-error">${escapeHtml(view.error)}</p>` : ""}
<form method="post" action="/interaction/${escapeHtml(view.uid)}/login" autocomplete="off">
<label for="login">Username</label>
<input id="login" name="login" autocomplete="username" autocapitalize="none" spellcheck="false" autofocus required${describedBy}>
<label for="password">Password</label>
<input id="password" name="password" type="password" autocomplete="current-password" required${describedBy}>
<button type="submit">Sign in</button></form>
${view.showDemoAccounts ? "<p><small>Demo accounts: alice/alice, bob/bob, carol/carol.</small></p>" : ""}`,
  );
}

/** What each OIDC scope lets the application do, in a person's words; other scopes are shown as they are. */
export const SCOPE_WORDS: Readonly<Record<string, string>> = {
  openid: "confirm who you are",
  profile: "your name",
  email: "your email address",
  offline_access: "stay signed in (refresh tokens)",
};

export interface ConsentPageView {
  uid: string;
  clientName: string;
  /** The signed-in person, as they know themselves ("Alice Liddell (alice)"); omitted when unknown. */
  user?: string;
  scopes: string[];
  /** RFC 8707 resource indicators the tokens will be for. */
  resources: string[];
}

export function consentPage(view: ConsentPageView): string {
  const client = `<strong>${escapeHtml(view.clientName)}</strong>`;
  const scopes = view.scopes.map((scope) =>
    SCOPE_WORDS[scope] ? escapeHtml(SCOPE_WORDS[scope]) : `<code>${escapeHtml(scope)}</code>`,
  );
  const resources = view.resources.map((r) => `<code>${escapeHtml(r)}</code>`);
  const list = (items: string[]) => `<ul>${items.map((i) => `<li>${i}</li>`).join("")}</ul>`;
  return page(
    "Allow access?",
    `${view.user ? `<p>You are signed in as <strong>${escapeHtml(view.user)}</strong>.</p>\n` : ""}<p>${client} asks for access to your account.</p>
<h2>What it asks for</h2>
${scopes.length ? list(scopes) : "<p>Nothing beyond signing you in.</p>"}
${resources.length ? `<h2>For use at</h2>\n${list(resources)}` : ""}
<p>Allow only if you started this from ${client}.</p>
<div class="actions">
<form method="post" action="/interaction/${escapeHtml(view.uid)}/confirm"><button type="submit" class="primary">Allow</button></form>
<form method="post" action="/interaction/${escapeHtml(view.uid)}/abort"><button type="submit">Deny</button></form>
</div>`,
  );
}

export function deviceInputPage(form: string, message: string): string {
  return page(
    "Connect a device",
    `<p>${escapeHtml(message)}</p>${form}<button type="submit" form="op.deviceInputForm">Continue</button>`,
  );
}

/** What the device-code input page answers with, from oidc-provider's `userCodeInputSource(ctx, form, out, err)`. */
export function deviceInputResponse(
  form: string,
  out: { error?: unknown; error_description?: unknown } | undefined,
  err: (Error & { userCode?: unknown; cause?: unknown }) | undefined,
  clientName: string | undefined,
): string {
  if (!err) return deviceInputPage(form, "Enter the code shown on your device.");
  // oidc-provider turns the interaction's access_denied (Deny on the consent page) into an AbortedError whose
  // cause is AccessDenied, and records access_denied on the device code: the device's next poll is told.
  const cause = err.cause as { error?: unknown } | undefined;
  if (err.name === "AbortedError" && (cause?.error ?? "access_denied") === "access_denied") {
    return deniedPage(clientName ?? "the application");
  }
  if (err.userCode !== undefined || err.name === "NoCodeError")
    return deviceInputPage(form, "That code did not work. Check it and try again.");
  const what = typeof out?.error === "string" ? out.error : "error";
  const why = typeof out?.error_description === "string" ? `: ${out.error_description}` : "";
  return deviceInputPage(
    form,
    `The sign-in could not be completed (${what}${why}). Start again from your device, or enter a new code.`,
  );
}

/** After Deny: the person chose this, so no "failed" wording; they learn the application knows, and what next. */
export function deniedPage(clientName: string): string {
  return page(
    "Access denied",
    `<p>You denied access: <strong>${escapeHtml(clientName)}</strong> was told and will not be signed in.</p>
<p>You can close this tab. If you meant to allow it, start again from ${escapeHtml(clientName)}.</p>`,
  );
}

export function deviceConfirmPage(form: string, clientName: string, userCode: string): string {
  return page(
    "Confirm device",
    `<p><strong>${escapeHtml(clientName)}</strong> wants to sign in. Check that your device shows this code:</p>
<p><code>${escapeHtml(userCode)}</code></p>${form}
<button type="submit" form="op.deviceConfirmForm">Continue</button>`,
  );
}

export function deviceSuccessPage(clientName: string): string {
  return page(
    "Signed in",
    `<p>You are signed in to <strong>${escapeHtml(clientName)}</strong>. You can close this page and go back to where you started: it carries on by itself.</p>`,
  );
}

/** The page oidc-provider's errors end on (when the browser cannot be sent back to the application). */
export function errorPage(error: string, description?: string, clientName?: string): string {
  if (error === "access_denied") return deniedPage(clientName ?? "the application");
  return page(
    "Sign-in failed",
    `<p>${escapeHtml(error)}</p>${description ? `<p>${escapeHtml(description)}</p>` : ""}`,
  );
}

/**
 * The client as the person sees it. A client_id URL's document chose its own name, so anyone could publish
 * "agentauth CLI": the host that published it is shown beside the name (CIMD draft, security considerations).
 */
export function shownClientName(name: string | undefined, clientId: string): string {
  const url = /^https?:\/\//i.test(clientId) ? URL.parse(clientId) : null;
  if (!url) return name ?? clientId;
  return name ? `${name} (published by ${url.host})` : url.host;
}
