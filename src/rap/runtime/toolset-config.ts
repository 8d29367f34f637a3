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
   * Sent on the toolset GET, `POST {endpoint}` and `/close_thread`, `/cancel_tool_call`. Never to a `user_choice`
   * `response_url` (a URL taken from a callback message), and never to an `endpoint` on another origin than `url`
   * unless `authOrigins` names that origin.
   */
  auth?: InvocationAuth;
  /**
   * Origins (`https://host[:port]`) other than `url`'s to which `auth` may go when the toolset's `endpoint` is
   * there. The toolset document names the endpoint; without this, a spoofed or compromised document could send
   * the runtime's credential to any server.
   */
  authOrigins?: readonly string[];
}

/** One configured toolset, checked: its auth and the origins that may receive it. */
export interface ResolvedToolset {
  auth: InvocationAuth | undefined;
  /** `url`'s own origin plus `authOrigins`. */
  authOrigins: ReadonlySet<string>;
}

/**
 * Pure: one entry per base URL (plain `toolsetUrls` have no auth). A URL that does not parse, one configured
 * twice with different authentication, or an `authOrigins` entry that is not a bare origin, is a configuration
 * mistake: RangeError at creation.
 */
export function toolsetConfigs(
  urls: readonly string[],
  toolsets: readonly ToolsetConfig[] = [],
): Map<string, ResolvedToolset> {
  const out = new Map<string, ResolvedToolset>();
  for (const entry of [...urls.map((url) => ({ url }) as ToolsetConfig), ...toolsets]) {
    const url = URL.parse(entry.url);
    if (!url) throw new RangeError(`not a URL: ${describeEndpoint(entry.url)}`);
    const known = out.get(entry.url);
    if (known && !sameAuth(known.auth, entry.auth)) {
      throw new RangeError(
        `the toolset ${describeEndpoint(entry.url)} is configured twice with different authentication; keep one entry`,
      );
    }
    const origins = new Set([...(known?.authOrigins ?? []), url.origin]);
    for (const origin of entry.authOrigins ?? []) origins.add(bareOrigin(origin, entry.url));
    out.set(entry.url, { auth: entry.auth ?? known?.auth, authOrigins: origins });
  }
  return out;
}

function bareOrigin(value: string, toolset: string): string {
  const url = URL.parse(value);
  if (
    !url ||
    (url.protocol !== "https:" && url.protocol !== "http:") ||
    url.href !== `${url.origin}/`
  ) {
    throw new RangeError(
      `authOrigins of the toolset ${describeEndpoint(toolset)}: ${describeEndpoint(value)} is not an origin; write it as https://host[:port], without a path`,
    );
  }
  return url.origin;
}

/**
 * The auth for `POST {endpoint}`: the toolset's, when the endpoint's origin may receive it; else none, and the
 * origin it was kept from (so a 401 can say why).
 */
export function endpointAuth(
  config: ResolvedToolset | undefined,
  endpoint: string,
): { auth: InvocationAuth | undefined; withheldFrom?: string } {
  if (!config?.auth) return { auth: undefined };
  const origin = URL.parse(endpoint)?.origin ?? "null";
  return config.authOrigins.has(origin)
    ? { auth: config.auth }
    : { auth: undefined, withheldFrom: origin };
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
    // URL.host: lower-cased, default port omitted, what fetch sends as Host.
    host: url.host,
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
  withheldFrom?: string,
): string {
  const asked = challenge ? ` (it asks for ${challenge})` : "";
  if (withheldFrom) {
    return (
      `${what} refused the runtime's credentials (HTTP 401) at ${describeEndpoint(url)}: the runtime sent ` +
      `none${asked}, because that endpoint is on another origin than its toolset and credentials go only to the ` +
      `toolset's own origin. If ${describeEndpoint(withheldFrom)} really is that tool's server, add it to the ` +
      "toolset's authOrigins; otherwise the toolset document points somewhere it should not."
    );
  }
  const sent = auth ? `the ${auth.scheme} scheme` : "no credentials";
  return (
    `${what} refused the runtime's credentials (HTTP 401) at ${describeEndpoint(url)}: the runtime sent ` +
    `${sent}${asked}. Check that the runtime and the tool use the same invocation scheme and the same secret ` +
    "file (rap-invocation.secret under AGENTAUTH_HOME by default), and that both clocks are right."
  );
}
