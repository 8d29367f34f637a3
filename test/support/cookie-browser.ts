/**
 * Test support: a person's browser reduced to what the sign-in pages rely on, `fetch` with a cookie jar. Cookies
 * are scoped as browsers scope them: by host name (not port, RFC 6265 §8.5) and path prefix; `Max-Age=0` or an
 * empty value deletes one. Two instances are two browsers (two people): what one was given, the other never sends.
 */

interface Cookie {
  value: string;
  path: string;
}

export class CookieBrowser {
  /** host → "name\npath" → cookie */
  readonly #jar = new Map<string, Map<string, Cookie>>();

  /** `fetch` that sends this browser's cookies for the URL and keeps the ones the answer sets. */
  async fetch(input: string | URL, init: RequestInit = {}): Promise<Response> {
    const url = new URL(input);
    const headers = new Headers(init.headers);
    const cookie = this.cookieHeader(url);
    if (cookie && !headers.has("cookie")) headers.set("cookie", cookie);
    const response = await fetch(url, { ...init, headers });
    this.store(url, response.headers.getSetCookie());
    return response;
  }

  /** The Cookie header this browser sends to `url` ("" when none). */
  cookieHeader(url: URL): string {
    const jar = this.#jar.get(url.hostname);
    if (!jar) return "";
    return [...jar]
      .filter(([, c]) => pathMatches(url.pathname, c.path))
      .map(([key, c]) => `${key.split("\n")[0]}=${c.value}`)
      .join("; ");
  }

  /** How many cookies this browser holds for `url`'s host (any path). */
  count(url: URL): number {
    return this.#jar.get(url.hostname)?.size ?? 0;
  }

  store(url: URL, setCookies: string[]): void {
    for (const line of setCookies) {
      const [pair = "", ...attributes] = line.split(";").map((part) => part.trim());
      const eq = pair.indexOf("=");
      if (eq <= 0) continue;
      const name = pair.slice(0, eq);
      const value = pair.slice(eq + 1);
      const path = attribute(attributes, "path") ?? defaultPath(url.pathname);
      const jar = this.#jar.get(url.hostname) ?? new Map<string, Cookie>();
      this.#jar.set(url.hostname, jar);
      const key = `${name}\n${path}`;
      if (value === "" || attribute(attributes, "max-age") === "0") jar.delete(key);
      else jar.set(key, { value, path });
    }
  }
}

function attribute(attributes: string[], name: string): string | undefined {
  for (const a of attributes) {
    const eq = a.indexOf("=");
    if (eq > 0 && a.slice(0, eq).trim().toLowerCase() === name) return a.slice(eq + 1).trim();
  }
  return undefined;
}

/** RFC 6265 §5.1.4. */
function pathMatches(requestPath: string, cookiePath: string): boolean {
  if (requestPath === cookiePath) return true;
  if (!requestPath.startsWith(cookiePath)) return false;
  return cookiePath.endsWith("/") || requestPath[cookiePath.length] === "/";
}

function defaultPath(path: string): string {
  const slash = path.lastIndexOf("/");
  return slash <= 0 ? "/" : path.slice(0, slash);
}
