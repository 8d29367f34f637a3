/** The short HTML pages a person sees at the tool's consent and OAuth redirect endpoints (pure; every dynamic part escaped). */

import { peerText } from "../../core/display.ts";

export interface Page {
  status: number;
  html: string;
}

export const PAGE_HEADERS = {
  "content-type": "text/html; charset=utf-8",
  "cache-control": "no-store",
  // The page's own URL holds the code and state: never send it on as a Referer, load nothing, never be framed.
  "referrer-policy": "no-referrer",
  "content-security-policy":
    "default-src 'none'; style-src 'unsafe-inline'; frame-ancestors 'none'",
  "x-content-type-options": "nosniff",
  "x-frame-options": "DENY",
} as const;

/** Who the person turned out to be at the provider, as far as the tool can read it. */
export interface SignedInAccount {
  subject?: string;
  /** The provider handle (GitHub login), shown first as "@login": what the person knows themselves by there. */
  login?: string;
  name?: string;
  email?: string;
}

export function signedInPage(
  provider: string,
  account: SignedInAccount = {},
  userId?: string,
): Page {
  const who = [account.name, account.email ? `<${account.email}>` : undefined]
    .filter(Boolean)
    .join(" ");
  const id = account.subject ? ` (account id ${account.subject})` : "";
  const handle = account.login ? peerText(account.login, { max: 100 }) : undefined;
  const details = [who, account.subject ? `account id ${account.subject}` : ""]
    .filter(Boolean)
    .join(", ");
  const as = handle
    ? ` as @${handle}${details ? ` (${details})` : ""}`
    : who || account.subject
      ? ` as ${who || account.subject}${who ? id : ""}`
      : "";
  const owner = userId
    ? ` This connection now belongs to the user "${peerText(userId, { max: 100 })}".`
    : "";
  return page(
    200,
    "Signed in",
    `You are signed in to ${provider}${as}.`,
    `${owner} If that is not the account you meant, tell the assistant so the connection can be removed. You can close this window and return to your conversation: the request will continue there.`.trim(),
  );
}

/** The page `auth_url` leads to: what is being connected, for whom, with Continue / Cancel (a POST). */
export function consentPage(view: {
  toolName: string;
  operation: string;
  providerName: string;
  providerHost: string;
  scopes: string[];
  userId: string;
  action: string;
  consent: string;
  csrf: string;
}): Page {
  const user = escapeHtml(peerText(view.userId, { max: 100 }));
  const scopes = view.scopes.length
    ? view.scopes.map((s) => escapeHtml(peerText(s, { max: 100 }))).join(", ")
    : "(none named)";
  const body = `<h1>Connect ${escapeHtml(view.providerName)} to ${escapeHtml(view.toolName)}?</h1>
<p>The tool <b>${escapeHtml(view.toolName)}</b> asks for access to <b>${escapeHtml(view.providerName)}</b> (sign-in at ${escapeHtml(view.providerHost)}) to run <b>${escapeHtml(view.operation)}</b>.</p>
<dl><dt>Permissions</dt><dd>${scopes}</dd><dt>The connection will belong to</dt><dd><b>${user}</b> (as the assistant's runtime named you)</dd></dl>
<p>Continue only if you are <b>${user}</b> and you asked for this. Whatever account you sign in with next will be used for ${user}'s requests.</p>
<form method="post" action="${escapeHtml(view.action)}">
<input type="hidden" name="consent" value="${escapeHtml(view.consent)}"><input type="hidden" name="csrf" value="${escapeHtml(view.csrf)}">
<button type="submit" name="action" value="continue">Continue to ${escapeHtml(view.providerName)}</button>
<button type="submit" name="action" value="cancel">Cancel</button>
</form>`;
  return { status: 200, html: shell(`Connect ${view.providerName}`, body) };
}

export function cancelledPage(provider: string): Page {
  return page(
    200,
    "Cancelled",
    `Nothing was connected to ${provider}.`,
    "The request was cancelled. Return to your conversation; ask again if you still need it.",
  );
}

export function forbiddenPage(): Page {
  return page(
    403,
    "Not allowed",
    "This form was not sent from the page this tool showed you.",
    "Open the sign-in link from your conversation again and use its buttons.",
  );
}

/** The provider sent error=access_denied: the person pressed Deny, so say so, and what to do next. */
export function deniedPage(provider: string): Page {
  return page(
    200,
    "Access denied",
    "You denied access",
    `Access to ${provider} was not granted, and the request that needed it has stopped. You can close this tab and return to your conversation; if you meant to allow it, try again from there and choose Allow.`,
  );
}

export function failedPage(provider: string): Page {
  return page(
    400,
    "Sign-in failed",
    `Signing in to ${provider} did not complete.`,
    "Return to your conversation and ask again to get a new sign-in link.",
  );
}

/**
 * The redirect came back in a browser that did not press Continue on the consent page (it lacks the binding cookie):
 * someone may have sent the person a provider link made for another user. Nothing was exchanged or stored.
 */
export function otherBrowserPage(provider: string): Page {
  return page(
    403,
    "Not connected",
    `Nothing was connected to ${provider}: this sign-in was started in another browser.`,
    "The sign-in link you followed was opened and confirmed in another browser than this one, so it was refused. If someone sent you this link, do not use it. To connect your own account, ask your assistant again, then open its new link and finish signing in in this same browser.",
  );
}

/** Unknown, reused, expired or cancelled `state`: nothing happened, and nothing will. */
export function invalidStatePage(): Page {
  return page(
    400,
    "Link not valid",
    "This sign-in link is not valid any more.",
    "It was already used, has expired, or the request was cancelled. Return to your conversation and ask again if you still need it.",
  );
}

/** The tool could not read its shared state (database down, a vault key missing): the person did nothing wrong. */
export function unavailablePage(): Page {
  return page(
    503,
    "Sign-in unavailable",
    "This tool could not finish the sign-in right now.",
    "Its storage did not answer. Return to your conversation and ask again in a few minutes; if it keeps happening, tell the tool's operator.",
  );
}

export function notFoundPage(): Page {
  return page(404, "Not found", "Nothing here.", "");
}

function page(status: number, title: string, heading: string, text: string): Page {
  return {
    status,
    html: shell(title, `<h1>${escapeHtml(heading)}</h1><p>${escapeHtml(text)}</p>`),
  };
}

function shell(title: string, body: string): string {
  return `<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><title>${escapeHtml(title)}</title>
<style>body{font-family:system-ui,sans-serif;max-width:32rem;margin:4rem auto;padding:0 1rem;line-height:1.5}dt{font-weight:600}button{margin-right:1rem;padding:.4rem 1rem}</style></head>
<body>${body}</body></html>`;
}

export function escapeHtml(text: string): string {
  return text.replace(
    /[&<>"']/g,
    (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[c] ?? c,
  );
}
