/** The short HTML pages a person sees at the tool's OAuth redirect endpoint (pure; every dynamic part escaped). */

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

export function signedInPage(provider: string): Page {
  return page(
    200,
    "Signed in",
    `You are signed in to ${provider}.`,
    "You can close this window and return to your conversation: the request will continue there.",
  );
}

export function deniedPage(provider: string): Page {
  return page(
    200,
    "Access not granted",
    `Access to ${provider} was not granted.`,
    "Return to your conversation. To use this tool, ask again and approve the requested access.",
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

/** Unknown, reused, expired or cancelled `state`: nothing happened, and nothing will. */
export function invalidStatePage(): Page {
  return page(
    400,
    "Link not valid",
    "This sign-in link is not valid any more.",
    "It was already used, has expired, or the request was cancelled. Return to your conversation and ask again if you still need it.",
  );
}

export function notFoundPage(): Page {
  return page(404, "Not found", "Nothing here.", "");
}

function page(status: number, title: string, heading: string, text: string): Page {
  const html = `<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><title>${escapeHtml(title)}</title>
<style>body{font-family:system-ui,sans-serif;max-width:32rem;margin:4rem auto;padding:0 1rem;line-height:1.5}</style></head>
<body><h1>${escapeHtml(heading)}</h1><p>${escapeHtml(text)}</p></body></html>`;
  return { status, html };
}

function escapeHtml(text: string): string {
  return text.replace(
    /[&<>"']/g,
    (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[c] ?? c,
  );
}
