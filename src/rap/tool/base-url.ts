/** The tool's base URL (origin + path prefix) and the URL checks made at startup. */

import { assertSecureUrl } from "../../oauth/index.ts";
import { ToolConfigError } from "./errors.ts";

export function isLoopbackHost(host: string): boolean {
  return host === "localhost" || host === "::1" || host.startsWith("127.");
}

export interface Base {
  /** Without a trailing slash, so `${href}/invoke` is well formed. */
  href: string;
  /** The path prefix routes live under ("" at the root). */
  path: string;
}

export function baseUrl(value: string): Base {
  const url = URL.parse(value);
  if (!url || (url.protocol !== "https:" && url.protocol !== "http:") || url.search || url.hash) {
    throw new ToolConfigError(
      "base_url_invalid",
      "publicBaseUrl must be an http(s) URL without query or fragment.",
    );
  }
  const path = url.pathname.replace(/\/+$/, "");
  return { href: `${url.origin}${path}`, path };
}

export function secure(url: URL, what: string): void {
  try {
    assertSecureUrl(url, what);
  } catch (error) {
    throw new ToolConfigError("insecure_url", (error as Error).message, { cause: error });
  }
}
