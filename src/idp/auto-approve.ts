/**
 * Auto-approve for cookie-less clients: the server plays the person's browser against itself (a cookie jar,
 * redirects, and every form that needs no typing), so a plain `fetch` of an authorization or verification URL
 * completes the whole flow. Test and unattended-demo use only; off unless asked for.
 */

import type { IncomingMessage, ServerResponse } from "node:http";

const MAX_STEPS = 25;

export interface EmulatorOptions {
  /** The server's own origin: redirects elsewhere (the client's redirect_uri) end the emulation. */
  origin: string;
  /** Sent on every emulated request so the server knows not to emulate again. */
  markerHeader: string;
  marker: string;
}

/** Which incoming requests start an emulated browser: authorization requests and pre-filled device codes. */
export function shouldEmulate(
  req: IncomingMessage,
  url: URL,
  authorizationPath = "/auth",
): boolean {
  if (req.method !== "GET") return false;
  return (
    url.pathname === authorizationPath ||
    (url.pathname === "/device" && url.searchParams.has("user_code"))
  );
}

export async function emulateBrowser(
  options: EmulatorOptions,
  start: URL,
  res: ServerResponse,
): Promise<void> {
  const jar = new Map<string, string>();
  let url = start;
  let method = "GET";
  let body: URLSearchParams | undefined;
  for (let step = 0; step < MAX_STEPS; step++) {
    const response = await fetch(url, {
      method,
      body,
      redirect: "manual",
      headers: {
        [options.markerHeader]: options.marker,
        cookie: [...jar].map(([k, v]) => `${k}=${v}`).join("; "),
      },
    });
    for (const cookie of response.headers.getSetCookie()) {
      const [pair] = cookie.split(";");
      const eq = pair?.indexOf("=") ?? -1;
      if (pair && eq > 0) jar.set(pair.slice(0, eq).trim(), pair.slice(eq + 1).trim());
    }
    const location = response.headers.get("location");
    if (response.status >= 300 && response.status < 400 && location) {
      const next = new URL(location, url);
      if (next.origin !== options.origin) {
        res.writeHead(303, { location: next.href, "cache-control": "no-store" }).end();
        return;
      }
      url = next;
      method = "GET";
      body = undefined;
      continue;
    }
    const text = await response.text();
    const form = response.ok ? autoSubmittableForm(text) : undefined;
    if (form) {
      url = new URL(form.action, url);
      method = "POST";
      body = form.fields;
      continue;
    }
    res.writeHead(response.status, {
      "content-type": response.headers.get("content-type") ?? "text/html",
    });
    res.end(text);
    return;
  }
  res.writeHead(508, { "content-type": "text/plain" }).end("auto-approve: too many steps");
}

/** A POST form whose every input is hidden: a person would only press Continue. */
export function autoSubmittableForm(
  html: string,
): { action: string; fields: URLSearchParams } | undefined {
  const form = /<form\b([^>]*)>([\s\S]*?)<\/form>/i.exec(html);
  if (!form) return undefined;
  const attrs = form[1] ?? "";
  if (attribute(attrs, "method")?.toLowerCase() !== "post") return undefined;
  const action = attribute(attrs, "action");
  if (!action) return undefined;
  const fields = new URLSearchParams();
  for (const input of (form[2] ?? "").matchAll(/<input\b([^>]*)>/gi)) {
    const a = input[1] ?? "";
    if (attribute(a, "type")?.toLowerCase() !== "hidden") return undefined;
    const name = attribute(a, "name");
    const value = attribute(a, "value") ?? "";
    if (name) fields.set(decodeEntities(name), decodeEntities(value));
  }
  return { action: decodeEntities(action), fields };
}

/** A double-quoted attribute by its whole name, so `data-type="hidden"` is not taken for `type="hidden"`. */
function attribute(attrs: string, name: string): string | undefined {
  return new RegExp(`(?:^|\\s)${name}="([^"]*)"`, "i").exec(attrs)?.[1];
}

function decodeEntities(value: string): string {
  return value
    .replaceAll("&quot;", '"')
    .replaceAll("&#39;", "'")
    .replaceAll("&#x27;", "'")
    .replaceAll("&lt;", "<")
    .replaceAll("&gt;", ">")
    .replaceAll("&amp;", "&");
}
