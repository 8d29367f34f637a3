/**
 * Reading an MCP server's 401 (MCP authorization 2026-07-28, "Protected Resource Metadata Discovery"): the Bearer
 * challenge's `resource_metadata` (RFC 9728 §5.1) and `scope` (RFC 6750 §3), or a DPoP challenge's (RFC 9449 §7.1:
 * a server that takes DPoP-bound tokens says so with that scheme, and its `algs` list). Pure: header in, hints out. A
 * header we cannot parse, or a metadata URL on another origin than the MCP server, is refused with a typed error
 * instead of being followed (a hostile server could otherwise point the client's discovery at any host).
 */

import {
  ChallengeParseError,
  challengeError,
  challengeResourceMetadata,
  challengeScope,
  DPOP_ALGORITHM,
  findBearerChallenge,
  parseWwwAuthenticate,
} from "../../oauth/index.ts";
import { McpAuthError } from "./errors.ts";

export interface UnauthorizedHints {
  /** RFC 9728 metadata URL from the challenge, same origin as the server; absent → well-known fallbacks. */
  resourceMetadataUrl?: URL;
  /** Scopes the server says the request needs. */
  scope?: string[];
  /** RFC 6750 error code, e.g. `invalid_token`. */
  error?: string;
  /** The server offered the DPoP scheme (RFC 9449 §7.1) with an algorithm agentauth signs with (ES256). */
  dpop?: boolean;
}

/** Reads the hints of a 401's `WWW-Authenticate` value (null when the header is missing: all fallbacks then). */
export function readUnauthorized(header: string | null, serverUrl: URL): UnauthorizedHints {
  if (header === null || header.trim() === "") return {};
  let challenges: ReturnType<typeof parseWwwAuthenticate>;
  try {
    challenges = parseWwwAuthenticate(header);
  } catch (error) {
    if (!(error instanceof ChallengeParseError)) throw error;
    throw new McpAuthError(
      "challenge_malformed",
      `The MCP server at ${serverUrl.origin} answered 401 with a WWW-Authenticate header agentauth cannot parse (${error.message}) Check the server's authorization setup.`,
      { cause: error },
    );
  }
  const bearer = findBearerChallenge(challenges);
  const dpop = challenges.find((c) => c.scheme === "dpop");
  // The Bearer challenge's parameters when there is one, else the DPoP challenge's.
  const chosen = bearer ?? dpop;
  if (!chosen) return {};
  const hints: UnauthorizedHints = { scope: challengeScope(chosen), error: challengeError(chosen) };
  const algs = dpop?.parameters.algs?.split(" ");
  if (dpop && (algs === undefined || algs.includes(DPOP_ALGORITHM))) hints.dpop = true;
  if (chosen.parameters.resource_metadata !== undefined) {
    const url = challengeResourceMetadata(chosen);
    if (!url) {
      throw new McpAuthError(
        "challenge_malformed",
        `The MCP server at ${serverUrl.origin} sent a resource_metadata value that is not an absolute http(s) URL; check the server's authorization setup.`,
      );
    }
    if (url.origin !== serverUrl.origin) {
      throw new McpAuthError(
        "resource_metadata_cross_origin",
        `The MCP server at ${serverUrl.origin} pointed its resource metadata at ${url.origin}, another origin; agentauth does not follow it. Check the server's authorization setup.`,
      );
    }
    hints.resourceMetadataUrl = url;
  }
  return hints;
}
