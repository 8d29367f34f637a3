/** HTTP policy for the runtime's outgoing requests: which URLs are acceptable, how paths join, bounded bodies. */

// Loopback (the OAuth engine's rule) is the only place plain HTTP is acceptable unless the network is trusted.
import { isLoopback } from "../../oauth/index.ts";

/**
 * Invocations carry the call's callback capability, so they must not cross a network in clear: https, or http on
 * loopback, or http anywhere when the runtime was told the network is trusted (RAP §Security: "HTTPS in production").
 * Returns a reason when the URL is not acceptable.
 */
export function urlProblem(raw: string, allowInsecureHttp: boolean): string | undefined {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return "is not a URL";
  }
  if (url.username || url.password) return "must not carry credentials";
  if (url.protocol === "https:") return undefined;
  if (url.protocol === "http:" && (allowInsecureHttp || isLoopback(url))) return undefined;
  return url.protocol === "http:"
    ? "must use https:// (plain http is allowed on loopback, or with allowInsecureHttp)"
    : "must be an http(s) URL";
}

/** `{base}{path}` the way RAP means it: relative to the base URL's path, whether or not it ends with a slash. */
export function joinBase(base: string, path: string): string {
  const url = new URL(base);
  url.pathname = `${url.pathname.replace(/\/+$/, "")}${path}`;
  url.search = "";
  url.hash = "";
  return url.toString();
}

/** Origin and path only: what an error text or a log line may show of an endpoint (no query, no credentials). */
export function describeEndpoint(raw: string): string {
  try {
    const url = new URL(raw);
    return `${url.origin}${url.pathname}`;
  } catch {
    return "(invalid URL)";
  }
}

/** Reads a response body up to `max` bytes; more than that is an error (a toolset is small, a hostile one is not). */
export async function readLimitedText(response: Response, max: number): Promise<string> {
  const declared = Number(response.headers.get("content-length") ?? Number.NaN);
  if (declared > max) {
    await response.body?.cancel();
    throw new Error(`the body is ${declared} bytes, more than the ${max} allowed`);
  }
  if (!response.body) return "";
  const reader = response.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > max) {
      await reader.cancel().catch(() => {});
      throw new Error(`the body is more than the ${max} bytes allowed`);
    }
    chunks.push(value);
  }
  return Buffer.concat(chunks).toString("utf8");
}

/** A short reason for a failed fetch, without the URL (which may be a capability). */
export function networkReason(error: unknown): string {
  const err = error as {
    name?: string;
    message?: string;
    cause?: { code?: string; message?: string };
  };
  if (err?.name === "TimeoutError") return "timed out";
  if (err?.name === "AbortError") return "aborted";
  const reason = err?.cause?.code ?? err?.cause?.message ?? err?.message ?? "network error";
  // fetch (WHATWG "bad port" list: 1, 9, 22, 25, 6000, …) refuses some ports outright; say so in words.
  if (reason === "bad port")
    return "fetch refuses to connect to that port (a blocked port); use another port";
  return reason;
}
