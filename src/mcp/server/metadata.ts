/** RFC 9728 protected-resource metadata for an MCP server: its canonical URI checked, its path-aware well-known URL, its document (pure). */

import { AgentAuthError } from "../../core/errors.ts";
import { isLoopback } from "../../oauth/http.ts";

/** The protection's options cannot describe a valid protected resource; fix the server's configuration. */
export class McpServerConfigError extends AgentAuthError {
  constructor(option: string, reason: string) {
    super("mcp_server_config_invalid", `Cannot protect the MCP server: ${option} ${reason}.`);
  }
}

const WELL_KNOWN = "/.well-known/oauth-protected-resource";

/**
 * The MCP spec's canonical server URI (RFC 8707 §2): absolute, no fragment, HTTPS unless loopback. It is the
 * audience tokens must carry, so a mistake here would make every token either useless or too widely accepted.
 */
export function canonicalServerUri(value: string, option = "canonicalUri"): URL {
  const url = URL.parse(value);
  if (!url) throw new McpServerConfigError(option, "is not an absolute URL");
  if (url.hash !== "" || value.includes("#"))
    throw new McpServerConfigError(option, "must not have a fragment");
  if (url.username !== "" || url.password !== "")
    throw new McpServerConfigError(option, "must not carry credentials");
  if (url.protocol !== "https:" && !(url.protocol === "http:" && isLoopback(url))) {
    throw new McpServerConfigError(option, "must use https (plain http only on loopback)");
  }
  return url;
}

/**
 * RFC 9728 §3.1: the well-known segment goes between the host and the resource's path, so two MCP servers on one
 * origin (`/a/mcp`, `/b/mcp`) publish separate documents. A trailing slash on the path is not part of the insert.
 */
export function protectedResourceMetadataUrl(canonicalUri: URL): URL {
  const path = canonicalUri.pathname === "/" ? "" : canonicalUri.pathname.replace(/\/$/, "");
  return new URL(`${WELL_KNOWN}${path}${canonicalUri.search}`, canonicalUri.origin);
}

export interface ProtectedResourceMetadata {
  resource: string;
  authorization_servers: string[];
  scopes_supported?: string[];
  bearer_methods_supported: string[];
  resource_name?: string;
}

/** The document itself (RFC 9728 §2): the resource is the canonical URI exactly, so clients can check it (§3.3). */
export function buildProtectedResourceMetadata(options: {
  canonicalUri: URL;
  issuer: string;
  scopesSupported?: readonly string[];
  resourceName?: string;
}): ProtectedResourceMetadata {
  return {
    resource: options.canonicalUri.href,
    authorization_servers: [options.issuer],
    ...(options.scopesSupported && options.scopesSupported.length > 0
      ? { scopes_supported: [...options.scopesSupported] }
      : {}),
    // RFC 6750 §2.1 only: query and form-body tokens leak into logs and are not allowed by the MCP spec.
    bearer_methods_supported: ["header"],
    ...(options.resourceName ? { resource_name: options.resourceName } : {}),
  };
}
