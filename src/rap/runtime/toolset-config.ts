/**
 * Which tool servers a runtime talks to and how it proves itself to each. RAP leaves invocation authentication to
 * the implementation (spec/basic/transport: "bearer tokens, request signatures, mTLS"); agentauth's tools accept a
 * shared bearer secret or an HMAC-SHA256 request signature (src/rap/invocation-auth.ts), and the runtime sends
 * whichever the toolset's configuration names on every request to that tool server.
 */

import { type InvocationAuth, invocationAuthHeaders } from "../invocation-auth.ts";
import { describeEndpoint } from "./http.ts";

export interface ToolsetConfig {
  /** The tool server's base URL; it serves `{url}/.well-known/rap-toolset`. */
  url: string;
  /**
   * Sent on the toolset GET, `POST {endpoint}` and `/close_thread`, `/cancel_tool_call`. Also to the toolset's
   * declared `endpoint` when it is on another origin: the tool server named it. Never to a `user_choice`
   * `response_url` (a URL taken from a callback message).
   */
  auth?: InvocationAuth;
}

/**
 * Pure: one entry per base URL (plain `toolsetUrls` have no auth). A URL that does not parse, or one configured
 * twice with different authentication, is a configuration mistake: RangeError at creation.
 */
export function toolsetConfigs(
  urls: readonly string[],
  toolsets: readonly ToolsetConfig[] = [],
): Map<string, InvocationAuth | undefined> {
  const out = new Map<string, InvocationAuth | undefined>();
  for (const entry of [...urls.map((url) => ({ url }) as ToolsetConfig), ...toolsets]) {
    if (!URL.canParse(entry.url)) throw new RangeError(`not a URL: ${describeEndpoint(entry.url)}`);
    if (out.has(entry.url) && !sameAuth(out.get(entry.url), entry.auth)) {
      throw new RangeError(
        `the toolset ${describeEndpoint(entry.url)} is configured twice with different authentication; keep one entry`,
      );
    }
    out.set(entry.url, entry.auth ?? out.get(entry.url));
  }
  return out;
}

function sameAuth(a: InvocationAuth | undefined, b: InvocationAuth | undefined): boolean {
  if (!a || !b) return a === b;
  return a.scheme === b.scheme && a.secret.reveal() === b.secret.reveal();
}

/**
 * The authentication headers for one request, or none. The signed path is the request target as sent (pathname and
 * query). `notBeforeMs` lets a retry sign with a later second than the attempt before it: the tool remembers
 * accepted signatures for its replay window, and a retry inside the same second would otherwise repeat one.
 */
export function authHeaders(
  auth: InvocationAuth | undefined,
  request: { method: string; url: string; body: string; notBeforeMs?: number },
): Record<string, string> {
  if (!auth) return {};
  const url = new URL(request.url);
  return invocationAuthHeaders(auth, {
    method: request.method,
    path: `${url.pathname}${url.search}`,
    body: request.body,
    now: Math.max(Date.now(), request.notBeforeMs ?? 0),
  });
}

/** Parses the scheme out of a tool's `WWW-Authenticate` challenge: one token, so nothing else of it is repeated. */
export function challengedScheme(header: string | null): string | undefined {
  return /^\s*([A-Za-z0-9][A-Za-z0-9._-]{0,40})(?:\s|$)/.exec(header ?? "")?.[1];
}

/** What the model and the person read when a tool refuses the runtime's credentials (HTTP 401). */
export function unauthorizedText(
  what: string,
  url: string,
  auth: InvocationAuth | undefined,
  challenge: string | undefined,
): string {
  const sent = auth ? `the ${auth.scheme} scheme` : "no credentials";
  const asked = challenge ? ` (it asks for ${challenge})` : "";
  return (
    `${what} refused the runtime's credentials (HTTP 401) at ${describeEndpoint(url)}: the runtime sent ` +
    `${sent}${asked}. Check that the runtime and the tool use the same invocation scheme and the same secret ` +
    "file (rap-invocation.secret under AGENTAUTH_HOME by default), and that both clocks are right."
  );
}
