/**
 * oauth4webapi's `customFetch` extension point, used the way its docs intend: the request goes out as the
 * provider wants it (`Accept: application/json`, a JSON body), and the answer comes back in the RFC 6749 shape
 * (`normalise.ts`), so oauth4webapi still does every check itself. Rate limits and HTML error pages become typed
 * errors here, because after normalising they would look like a malformed token response.
 */

import { readCappedText } from "../body.ts";
import { RateLimitedError, TokenEndpointError } from "../errors.ts";
import { normaliseTokenAnswer } from "./normalise.ts";
import { rateLimitOf } from "./rate-limit.ts";
import type { HttpQuirks } from "./types.ts";

/** The shape oauth4webapi calls `[customFetch]` with. */
export type CustomFetch = (
  url: string,
  init: {
    body?: unknown;
    headers: Record<string, string>;
    method: string;
    redirect: "manual";
    signal?: AbortSignal;
  },
) => Promise<Response>;

/** Token answers are small; a provider (or a proxy) sending megabytes is refused before parsing. */
const MAX_BODY_BYTES = 1024 * 1024;

export function quirksFetch(quirks: HttpQuirks, provider: string): CustomFetch {
  return async (url, init) => {
    const headers = { ...init.headers };
    if (quirks.acceptJson) headers.accept = "application/json";
    let body = init.body;
    if (quirks.jsonRequestBody && body instanceof URLSearchParams) {
      body = JSON.stringify(Object.fromEntries(body));
      headers["content-type"] = "application/json";
    }
    const response = await fetch(url, { ...init, headers, body: body as BodyInit | undefined });
    const limited = rateLimitOf(response);
    if (limited) {
      await response.body?.cancel();
      throw new RateLimitedError(provider, limited);
    }
    const text = await readCapped(response, provider);
    const parsed = parseBody(text, response.headers.get("content-type") ?? "");
    if (!parsed) {
      if (response.status === 204 || text.trim() === "")
        return rebuild(response, response.status, text);
      // A 5xx page means the service is down (retry later); anything else means we reached the wrong thing.
      throw new TokenEndpointError(
        response.status >= 500 ? "server_error" : "invalid_response",
        `${provider} answered with ${looksHtml(text) ? "an HTML page" : "something that is not JSON"} (HTTP ` +
          `${response.status}) instead of an OAuth response. The service may be down or the endpoint URL wrong; ` +
          "try again later, and check the provider configuration if it persists.",
        { status: response.status },
      );
    }
    const { status, body: normalised } = normaliseTokenAnswer(
      { status: response.status, body: parsed },
      quirks,
    );
    return rebuild(response, status, JSON.stringify(normalised), "application/json");
  };
}

async function readCapped(response: Response, provider: string): Promise<string> {
  const text = await readCappedText(response, MAX_BODY_BYTES);
  if (text === undefined) throw oversized(provider);
  return text;
}

function oversized(provider: string): TokenEndpointError {
  return new TokenEndpointError(
    "invalid_response",
    `${provider} sent an answer larger than ${MAX_BODY_BYTES} bytes; refusing to read it.`,
  );
}

/** JSON whatever the content type says (providers mislabel it), else a form body (GitHub without Accept). */
function parseBody(text: string, contentType: string): Record<string, unknown> | undefined {
  const trimmed = text.trim();
  if (trimmed.startsWith("{")) {
    try {
      const value = JSON.parse(trimmed);
      return typeof value === "object" && value !== null && !Array.isArray(value)
        ? value
        : undefined;
    } catch {
      return undefined;
    }
  }
  if (contentType.includes("application/x-www-form-urlencoded") && trimmed !== "") {
    const form = Object.fromEntries(new URLSearchParams(trimmed));
    // Form values are strings; RFC 6749 §5.1 `expires_in` is a number.
    for (const field of ["expires_in", "refresh_token_expires_in", "interval"]) {
      if (typeof form[field] === "string" && /^\d+$/.test(form[field])) {
        (form as Record<string, unknown>)[field] = Number(form[field]);
      }
    }
    return form;
  }
  return undefined;
}

function looksHtml(text: string): boolean {
  return /^\s*<(!doctype|html|head|body)/i.test(text);
}

function rebuild(original: Response, status: number, body: string, type?: string): Response {
  const headers = new Headers(original.headers);
  headers.delete("content-length");
  headers.delete("content-encoding");
  if (type) headers.set("content-type", type);
  const rebuilt = new Response(status === 204 || status === 304 ? null : body, {
    status,
    statusText: original.statusText,
    headers,
  });
  // oauth4webapi checks that the response came from the endpoint it asked (`response.url`).
  Object.defineProperty(rebuilt, "url", { value: original.url });
  return rebuilt;
}
