/**
 * Test support: a person's browser reduced to what the sign-in pages rely on, `fetch` with a cookie jar. Cookies
 * are kept as browsers keep them (RFC 6265bis): by host name (not port, §8.5), or by a parent domain with
 * `Domain=`; by path prefix; `Secure` ones only set from and sent to a secure origin (https, or loopback, which
 * browsers treat as trustworthy); the `__Secure-` and `__Host-` prefixes enforced (§4.1.3: `__Host-` needs Secure,
 * `Path=/` and no `Domain`); `Max-Age=0` or an empty value deletes one. Two instances are two browsers (two people):
 * what one was given, the other never sends.
 *
 * `origins` maps an origin as the browser sees it (`https://tools.example`) to where it really connects
 * (`http://127.0.0.1:PORT`), as a hosts file and a TLS-terminating proxy would: cookies follow the visible URL.
 */

interface Cookie {
  name: string;
  value: string;
  /** The host it was set by (host-only) or the `Domain=` it names. */
  domain: string;
  hostOnly: boolean;
  path: string;
  secure: boolean;
}

export class CookieBrowser {
  /** "name\ndomain\npath" → cookie */
  readonly #jar = new Map<string, Cookie>();
  readonly #origins: Map<string, string>;

  constructor(options: { origins?: Record<string, string> } = {}) {
    this.#origins = new Map(Object.entries(options.origins ?? {}));
  }

  /** `fetch` that sends this browser's cookies for the URL and keeps the ones the answer sets. */
  async fetch(input: string | URL, init: RequestInit = {}): Promise<Response> {
    const url = new URL(input);
    const headers = new Headers(init.headers);
    const cookie = this.cookieHeader(url);
    if (cookie && !headers.has("cookie")) headers.set("cookie", cookie);
    const response = await fetch(this.#connectTo(url), { ...init, headers });
    this.store(url, response.headers.getSetCookie());
    return response;
  }

  /** The Cookie header this browser sends to `url` ("" when none); longer paths first (RFC 6265bis §5.8.3). */
  cookieHeader(url: URL): string {
    const host = url.hostname.toLowerCase();
    const secure = secureOrigin(url);
    return [...this.#jar.values()]
      .filter(
        (c) =>
          (c.hostOnly ? host === c.domain : domainMatches(host, c.domain)) &&
          pathMatches(url.pathname, c.path) &&
          (!c.secure || secure),
      )
      .sort((a, b) => b.path.length - a.path.length)
      .map((c) => `${c.name}=${c.value}`)
      .join("; ");
  }

  /** How many cookies this browser would send to `url`'s host on some path. */
  count(url: URL): number {
    const host = url.hostname.toLowerCase();
    return [...this.#jar.values()].filter((c) =>
      c.hostOnly ? host === c.domain : domainMatches(host, c.domain),
    ).length;
  }

  /**
   * Keeps what `Set-Cookie` lines answered for `url` set, by the rules above; a line a browser would ignore is
   * ignored. Tests also call it to play a cookie someone else planted (a network attacker answering a plain-http
   * request, a sibling subdomain with `Domain=`).
   */
  store(url: URL, setCookies: string[]): void {
    const host = url.hostname.toLowerCase();
    const secure = secureOrigin(url);
    for (const line of setCookies) {
      const [pair = "", ...attributes] = line.split(";").map((part) => part.trim());
      const eq = pair.indexOf("=");
      if (eq <= 0) continue;
      const name = pair.slice(0, eq);
      const value = pair.slice(eq + 1);
      const flagged = attributes.some((a) => a.toLowerCase() === "secure");
      // §5.7: a Secure cookie only from a secure origin.
      if (flagged && !secure) continue;
      let domain = host;
      let hostOnly = true;
      const named = attribute(attributes, "domain")?.replace(/^\./, "").toLowerCase();
      if (named) {
        // A parent domain of the setting host only, never for an IP address.
        if (isIpAddress(host) || !domainMatches(host, named)) continue;
        domain = named;
        hostOnly = false;
      }
      const path = attribute(attributes, "path") ?? defaultPath(url.pathname);
      // §4.1.3, case-insensitively as browsers now check it.
      const lower = name.toLowerCase();
      if (lower.startsWith("__secure-") && !flagged) continue;
      if (lower.startsWith("__host-") && (!flagged || !hostOnly || path !== "/")) continue;
      // §5.7: an insecure origin may not overwrite (or shadow) a Secure cookie of that name.
      if (
        !secure &&
        [...this.#jar.values()].some(
          (c) =>
            c.secure &&
            c.name === name &&
            (domainMatches(domain, c.domain) || domainMatches(c.domain, domain)) &&
            pathMatches(path, c.path),
        )
      )
        continue;
      const key = `${name}\n${domain}\n${path}`;
      if (value === "" || attribute(attributes, "max-age") === "0") this.#jar.delete(key);
      else this.#jar.set(key, { name, value, domain, hostOnly, path, secure: flagged });
    }
  }

  #connectTo(url: URL): URL {
    const real = this.#origins.get(url.origin);
    return real ? new URL(`${url.pathname}${url.search}`, real) : url;
  }
}

function attribute(attributes: string[], name: string): string | undefined {
  for (const a of attributes) {
    const eq = a.indexOf("=");
    if (eq > 0 && a.slice(0, eq).trim().toLowerCase() === name) return a.slice(eq + 1).trim();
  }
  return undefined;
}

/** https, or a loopback host (browsers treat http://127.0.0.1 and http://localhost as trustworthy). */
function secureOrigin(url: URL): boolean {
  if (url.protocol === "https:") return true;
  const host = url.hostname;
  return host === "localhost" || host === "[::1]" || /^127\./.test(host);
}

function isIpAddress(host: string): boolean {
  return /^\d{1,3}(\.\d{1,3}){3}$/.test(host) || host.startsWith("[");
}

/** RFC 6265bis §5.1.3. */
function domainMatches(host: string, domain: string): boolean {
  return host === domain || (host.endsWith(`.${domain}`) && !isIpAddress(host));
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
