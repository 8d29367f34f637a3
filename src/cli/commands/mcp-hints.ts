/**
 * What to do next, for the `mcp login` failures a newcomer meets first: a URL the server does not call itself (a
 * path other than its endpoint, `localhost` for a server that names `127.0.0.1`), and an MCP server that answers
 * while its authorization server does not. The engine's errors say what was refused; these say which command to
 * run instead. The code stays the engine's, so scripts matching on it are unaffected.
 */

import { peerText } from "../../core/display.ts";
import { AgentAuthError } from "../../core/errors.ts";
import { canonicalMcpServerUrl } from "../../mcp/client/index.ts";
import { findBearerChallenge, parseWwwAuthenticate } from "../../oauth/index.ts";

const WELL_KNOWN = "/.well-known/oauth-protected-resource";

/**
 * The resource the server's 401 names, from its `resource_metadata` (RFC 9728 §3.1: the well-known URL is the
 * resource's origin, then the well-known segment, then the resource's path). Only a URL that passes the CLI's own
 * check is suggested, and only when it differs from the one given: it is a hint to show, never followed.
 */
export function resourceNamedByChallenge(header: string | null, given: string): string | undefined {
  if (!header) return undefined;
  let metadata: URL | null;
  try {
    const value = findBearerChallenge(parseWwwAuthenticate(header))?.parameters.resource_metadata;
    metadata = value ? URL.parse(value) : null;
  } catch {
    return undefined;
  }
  if (!metadata?.pathname.startsWith(WELL_KNOWN) || metadata.search !== "") return undefined;
  const path = metadata.pathname.slice(WELL_KNOWN.length);
  if (path !== "" && !path.startsWith("/")) return undefined;
  try {
    const named = canonicalMcpServerUrl(`${metadata.origin}${path || "/"}`).href;
    return named === given ? undefined : named;
  } catch {
    return undefined;
  }
}

/** The engine's error with one more sentence; code and cause kept. */
export function withHint(error: unknown, challenge: string | null, given: string): unknown {
  if (!(error instanceof AgentAuthError)) return error;
  let hint: string | undefined;
  if (error.code === "resource_mismatch" || error.code === "resource_metadata_cross_origin") {
    const named = resourceNamedByChallenge(challenge, given);
    if (named) {
      const url = peerText(named, { max: 300 });
      hint = `The server's challenge names ${url} as its URL: if that is the server you mean, run 'agentauth mcp login ${url}'.`;
    }
  } else if (error.code === "network_error") {
    hint =
      `The MCP server at ${peerText(given, { max: 300 })} answered; it is its authorization server that could not be reached: check ` +
      "that it is running (the MCP server's operator names it).";
  }
  if (!hint) return error;
  return new AgentAuthError(error.code, `${error.message} ${hint}`, { cause: error });
}
