/**
 * A minimal programmatic browser for `agentauth demo --script`: follows a RAP auth link the way a person's browser
 * would, with fetch and a cookie jar (no Chromium). The tool's consent page (GET: a form with a per-link CSRF token
 * and a same-site cookie) is answered with Continue (POST, form-encoded, Origin = the tool's origin), the demo IdP
 * (auto-approving as the demo user) signs in and consents, and its redirect reaches the tool's callback, whose page
 * says how it went. Loopback only: the demo never sends this browser anywhere else.
 */

import { AgentAuthError } from "../core/errors.ts";

const MAX_STEPS = 30;
const MAX_PAGE_BYTES = 256 * 1024;

export interface FollowLinkOptions {
  /** Per request. Default 30 s. */
  timeoutMs?: number;
  signal?: AbortSignal;
  /** Which button of the consent form to press. Default "continue". */
  consent?: "continue" | "cancel";
}

export interface FollowedLink {
  /** HTTP status of the last page. */
  status: number;
  /** Where the browser ended: origin and path only (a query may hold a code or a state). */
  where: string;
  /** The last page's text, tags removed, whitespace collapsed. */
  text: string;
  /** How many consent forms were submitted (1 on the normal path). */
  consentsGiven: number;
}

export class FollowLinkError extends AgentAuthError {
  constructor(message: string) {
    super("demo_follow_link_failed", message);
  }
}

/** Follows `url` through redirects and the tool's consent form until a page that asks for nothing more. */
export async function followLink(
  url: string,
  options: FollowLinkOptions = {},
): Promise<FollowedLink> {
  const jar = new CookieJar();
  let target = checkedUrl(url);
  let method: "GET" | "POST" = "GET";
  let body: URLSearchParams | undefined;
  let origin: string | undefined;
  let consentsGiven = 0;
  for (let step = 0; step < MAX_STEPS; step++) {
    const headers: Record<string, string> = { accept: "text/html" };
    const cookie = jar.header(target);
    if (cookie) headers.cookie = cookie;
    if (body) headers["content-type"] = "application/x-www-form-urlencoded";
    if (origin) headers.origin = origin;
    const response = await fetch(target, {
      method,
      ...(body ? { body } : {}),
      headers,
      redirect: "manual",
      signal: signalFor(options),
    });
    jar.store(target, response.headers.getSetCookie());
    const location = response.headers.get("location");
    if (response.status >= 300 && response.status < 400 && location) {
      await response.arrayBuffer();
      target = checkedUrl(new URL(location, target).href);
      method = "GET";
      body = undefined;
      origin = undefined;
      continue;
    }
    const html = await readPage(response);
    const form = response.ok ? consentForm(html) : undefined;
    if (form && consentsGiven === 0) {
      consentsGiven++;
      const action = checkedUrl(new URL(form.action, target).href);
      body = new URLSearchParams(form.fields);
      body.set("action", options.consent ?? "continue");
      // A browser names the page's origin on a form POST; the tool refuses any other origin.
      origin = target.origin;
      method = "POST";
      target = action;
      continue;
    }
    return {
      status: response.status,
      where: `${target.origin}${target.pathname}`,
      text: pageText(html),
      consentsGiven,
    };
  }
  throw new FollowLinkError(`The link took more than ${MAX_STEPS} steps; stopped.`);
}

/** The tool's consent form: a POST form with hidden `consent` and `csrf` fields (src/rap/tool/pages.ts). */
export function consentForm(
  html: string,
): { action: string; fields: [string, string][] } | undefined {
  const form = /<form\b[^>]*\bmethod="post"[^>]*>([\s\S]*?)<\/form>/i.exec(html);
  if (!form?.[0] || form[1] === undefined) return undefined;
  const action = /\baction="([^"]*)"/i.exec(form[0])?.[1];
  if (action === undefined) return undefined;
  const fields: [string, string][] = [];
  for (const input of form[1].matchAll(/<input\b[^>]*>/gi)) {
    const tag = input[0];
    if (!/\btype="hidden"/i.test(tag)) continue;
    const name = /\bname="([^"]*)"/i.exec(tag)?.[1];
    const value = /\bvalue="([^"]*)"/i.exec(tag)?.[1] ?? "";
    if (name) fields.push([unescapeHtml(name), unescapeHtml(value)]);
  }
  const names = new Set(fields.map(([n]) => n));
  if (!names.has("consent") || !names.has("csrf")) return undefined;
  return { action: unescapeHtml(action), fields };
}

/** The words a person would read: scripts and styles dropped, tags removed, entities decoded, spaces collapsed. */
export function pageText(html: string): string {
  return unescapeHtml(
    html
      .replace(/<(script|style)\b[\s\S]*?<\/\1>/gi, " ")
      .replace(/<[^>]*>/g, " ")
      .replace(/\s+/g, " "),
  ).trim();
}

function unescapeHtml(text: string): string {
  return text
    .replace(/&lt;/g, "<")
    .replace(/&gt;/g, ">")
    .replace(/&quot;/g, '"')
    .replace(/&#39;|&#x27;/g, "'")
    .replace(/&amp;/g, "&");
}

/** Loopback http(s) only: the demo's parts all listen on 127.0.0.1. */
function checkedUrl(href: string): URL {
  const url = URL.parse(href);
  if (
    !url ||
    (url.protocol !== "http:" && url.protocol !== "https:") ||
    !["127.0.0.1", "localhost", "[::1]"].includes(url.hostname)
  ) {
    throw new FollowLinkError(
      `The link led off this machine (${url ? `${url.protocol}//${url.host}` : "not a URL"}); the demo browser only visits loopback pages.`,
    );
  }
  return url;
}

async function readPage(response: Response): Promise<string> {
  const bytes = new Uint8Array(await response.arrayBuffer());
  return new TextDecoder().decode(bytes.subarray(0, MAX_PAGE_BYTES));
}

function signalFor(options: FollowLinkOptions): AbortSignal {
  const timeout = AbortSignal.timeout(options.timeoutMs ?? 30_000);
  return options.signal ? AbortSignal.any([options.signal, timeout]) : timeout;
}

/** Cookies by origin (host and port): enough for the tool's per-link cookie and the IdP's session cookies. */
class CookieJar {
  readonly #byOrigin = new Map<string, Map<string, string>>();

  store(url: URL, setCookies: string[]): void {
    for (const line of setCookies) {
      const [pair = "", ...attributes] = line.split(";");
      const eq = pair.indexOf("=");
      if (eq <= 0) continue;
      const name = pair.slice(0, eq).trim();
      const value = pair.slice(eq + 1).trim();
      const jar = this.#byOrigin.get(url.origin) ?? new Map<string, string>();
      const expired = attributes.some((a) => /^\s*max-age\s*=\s*0\s*$/i.test(a));
      if (expired || value === "") jar.delete(name);
      else jar.set(name, value);
      this.#byOrigin.set(url.origin, jar);
    }
  }

  header(url: URL): string {
    const jar = this.#byOrigin.get(url.origin);
    return jar ? [...jar].map(([k, v]) => `${k}=${v}`).join("; ") : "";
  }
}
