/**
 * `mcpBridgeToolset(options)`: a RAP tool that fronts an OAuth-protected MCP server (issue 12 §3). Each MCP tool
 * becomes a RAP operation with `requiresAuth`; the provider behind it is discovered from the MCP server (RFC 9728 →
 * its authorization server) with `resource` = the server's canonical URI; the tool kit does the rest as for any
 * provider: the `oauth` message with the authorization URL (PKCE S256, a fresh `state`), the redirect at the tool's
 * own callback, tokens in the vault keyed {subject: user_id, issuer, resource}, refreshed single-flight per user by
 * the TokenRefresher. Each call opens an MCP session with the user's token through the official client SDK.
 *
 * The tool list is read once, at startup, because the RAP toolset document is served before any user has signed
 * in. `tools/list` on a protected server needs a token, and there is no user then, so the operator says how: the
 * `tools` option (the names, descriptions and input schemas, e.g. kept in the tool's configuration), or a
 * `listToolsToken` (e.g. an operator's own token from the vault), else an unauthenticated `tools/list` is tried and a
 * 401 is a typed `mcp_tools_need_authorization` that says so. Listing with "the first user's token" was rejected:
 * the toolset would then change under the runtime after startup, and one user's view of the tools would be
 * published to all.
 */

import type { Client } from "@modelcontextprotocol/client";
import type { Logger } from "../../core/log.ts";
import { silentLogger } from "../../core/log.ts";
import type { Secret } from "../../core/secret.ts";
import { canonicalMcpServerUrl, McpServerUrlError, scopeUnion } from "../../mcp/client/index.ts";
import { type DiscoveryOptions, isLoopback, type OAuthClient } from "../../oauth/index.ts";
import type { CredentialStore } from "../../vault/index.ts";
import { TokenRejectedError } from "../tool/errors.ts";
import type { OAuthProviderConfig, OperationDefinition } from "../tool/options.ts";
import { OAUTH_CALLBACK_PATH } from "../tool/server.ts";
import { discoverMcpServer, mcpProvider } from "./authorization.ts";
import {
  type BridgedTool,
  bridgedTools,
  type CatalogNote,
  type McpToolDescription,
} from "./catalog.ts";
import { McpBridgeError, McpCallError } from "./errors.ts";
import { DEFAULT_MAX_RESULT_CHARS, resultText } from "./result.ts";
import { loadMcpClientSdk } from "./sdk.ts";
import { ScopeRequired, withMcpSession } from "./session.ts";

export interface McpBridgeOptions {
  /** The MCP server's Streamable HTTP endpoint (https, or http on loopback); its canonical form is the `resource`. */
  serverUrl: string | URL;
  /** Where the runtime and browsers reach this RAP tool (the tool server's `publicBaseUrl`): the redirect URI is
   * `${publicBaseUrl}/oauth/callback`. */
  publicBaseUrl: string;
  /** The provider id the operations' `requiresAuth` names. Default "mcp". */
  provider?: string;
  /** Shown to the person in messages and on the consent page. Default "the MCP server at <host>". */
  displayName?: string;
  /** A client pre-registered at the MCP server's authorization server; without it the bridge registers one (RFC
   * 7591) at startup: give `store` to keep it in the vault and reuse it at the next start, or keep
   * `registeredClient` from the result and pass it here next time. */
  client?: OAuthClient;
  /** The tool's vault: the dynamic registration is kept there and found again at every start (one client). */
  store?: CredentialStore;
  /** The scopes to ask for. Default: the server's `scopes_supported`, plus `offline_access` when offered. */
  scope?: string;
  /** The MCP tools to offer, when `tools/list` needs a signed-in user (see the module comment). */
  tools?: McpToolDescription[];
  /** A token to list the tools with at startup (e.g. the operator's), instead of `tools`. */
  listToolsToken?: () => Promise<Secret | undefined>;
  /** Largest MCP response read (bytes, default 1 MiB); a larger one is a `mcp_result_too_large` error result. */
  maxResponseBytes?: number;
  /** Largest result text passed on (characters, default 200,000). */
  maxResultChars?: number;
  /** The name a dynamically registered client gets. Default "agentauth RAP MCP bridge". */
  clientName?: string;
  discovery?: DiscoveryOptions;
  logger?: Logger;
}

/** Spread into `createToolServer({ toolset, store, publicBaseUrl, ...bridge })` (`providers`, `operations`). */
export interface McpBridgeToolset {
  providers: Record<string, OAuthProviderConfig>;
  operations: OperationDefinition[];
  /** The MCP server's canonical URI: the `resource` of every token and of the vault keys. */
  canonicalUri: string;
  /** The client the bridge registered or found in `store` (absent when `client` was given). */
  registeredClient?: OAuthClient;
  /** True when `registeredClient` came from `store` rather than a registration at this start. */
  registrationReused?: boolean;
  /** Tools left out or changed (unusable names, replaced input schemas). */
  notes: CatalogNote[];
}

const MAX_LISTED_PAGES = 20;
// A server that keeps asking for more scopes is refused rather than obeyed without end.
const MAX_SCOPES = 64;

/**
 * @example
 * const publicBaseUrl = "https://tools.example.com/mcp-github";
 * // With `store`, the dynamic registration is kept in the vault: restarts and replicas reuse one client.
 * const bridge = await mcpBridgeToolset({ serverUrl: "https://mcp.example.com/mcp", publicBaseUrl, tools, store: vault });
 * const tool = createToolServer({
 *   toolset: { name: "example-mcp" },
 *   operations: bridge.operations,
 *   providers: bridge.providers,
 *   store: vault, // tokens keyed {subject: user_id, issuer, resource: bridge.canonicalUri}
 *   publicBaseUrl,
 * });
 * await tool.listen({ port: 8080 });
 */
export async function mcpBridgeToolset(options: McpBridgeOptions): Promise<McpBridgeToolset> {
  const logger = options.logger ?? silentLogger;
  const serverUrl = mcpServerUrl(options.serverUrl);
  // Loaded now, so a missing optional SDK is a startup error, not a failure of every call later.
  await loadMcpClientSdk();
  const canonicalUri = serverUrl.href;
  const providerId = options.provider ?? "mcp";
  const redirectUri = redirectUriOf(options.publicBaseUrl);
  if (options.tools !== undefined && !Array.isArray(options.tools)) {
    throw new McpBridgeError(
      "invalid_tools",
      "`tools` must be an array of MCP tool descriptions ({ name, description, inputSchema }).",
    );
  }
  for (const name of ["maxResponseBytes", "maxResultChars"] as const) {
    const value = options[name];
    // A NaN or negative bound would silently read (or pass on) any answer whole.
    if (value !== undefined && !(Number.isSafeInteger(value) && value > 0)) {
      throw new McpBridgeError(
        "invalid_limits",
        `\`${name}\` must be a positive whole number (or left out for the default).`,
      );
    }
  }
  const server = await discoverMcpServer(canonicalUri, options.discovery);
  const listed = options.tools ?? (await listTools(serverUrl, options));
  const { tools, notes } = bridgedTools(listed);
  for (const note of notes) logger.warn("rap.mcp_bridge.tool_note", { ...note });
  if (tools.length === 0) {
    throw new McpBridgeError(
      "mcp_no_tools",
      `The MCP server ${canonicalUri} offers no tool this bridge can carry (${listed.length} listed). Check the server, or the \`tools\` option.`,
    );
  }
  const authorization = await mcpProvider(server, {
    canonicalUri,
    redirectUri,
    client: options.client,
    scope: options.scope,
    clientName: options.clientName ?? "agentauth RAP MCP bridge",
    displayName: options.displayName ?? `the MCP server at ${serverUrl.host}`,
    discovery: options.discovery,
    store: options.store,
  });
  if (authorization.registered) {
    logger.info(
      authorization.reused ? "rap.mcp_bridge.registration_reused" : "rap.mcp_bridge.registered",
      {
        issuer: authorization.provider.issuer,
        client_id: authorization.registered.clientId,
      },
    );
  }
  const scopes = { base: authorization.provider.scope ?? "" };
  return {
    providers: { [providerId]: authorization.provider },
    operations: tools.map((tool) => operationFor(tool, providerId, serverUrl, scopes, options)),
    canonicalUri,
    registeredClient: authorization.registered,
    registrationReused: authorization.reused,
    notes,
  };
}

function operationFor(
  tool: BridgedTool,
  provider: string,
  serverUrl: URL,
  scopes: { base: string },
  options: McpBridgeOptions,
): OperationDefinition {
  const annotations = { ...tool.annotations, requiresAuth: provider };
  return {
    name: tool.name,
    description: tool.description,
    inputSchema: tool.inputSchema,
    annotations,
    requiresAuth: provider,
    handler: async (ctx) => {
      try {
        const result = await withMcpSession(
          {
            serverUrl,
            token: ctx.accessToken,
            signal: ctx.signal,
            maxResponseBytes: options.maxResponseBytes,
            label: tool.name,
          },
          (client: Client, signal) =>
            client.callTool({ name: tool.name, arguments: ctx.arguments }, { signal }),
        );
        return resultText(
          tool.name,
          result,
          options.maxResultChars ?? DEFAULT_MAX_RESULT_CHARS,
          ctx.accessToken,
        );
      } catch (error) {
        if (!(error instanceof ScopeRequired)) throw error;
        // Step-up: the configured scopes and what the server now requires; the tool kit adds this user's granted
        // scopes from the vault (MCP authorization, "Scope Challenge Handling": the union with what was granted).
        // Nothing is kept across calls here: one user's step-up must not widen what another user is asked for.
        const union = scopeUnion(scopes.base, error.required);
        if (union.length > MAX_SCOPES) {
          throw new McpCallError(
            "mcp_refused",
            `The MCP server asks for more access than this tool requests (over ${MAX_SCOPES} scopes) for ${tool.name}. Tell the tool's operator.`,
          );
        }
        ctx.logger.info("rap.mcp_bridge.step_up", { operation: tool.name, scope: union.join(" ") });
        throw new TokenRejectedError(`The MCP server needs more access for ${tool.name}.`, {
          scope: union.join(" "),
          required: error.required.join(" "),
        });
      }
    },
  };
}

async function listTools(serverUrl: URL, options: McpBridgeOptions): Promise<unknown[]> {
  const token = await options.listToolsToken?.();
  try {
    return await withMcpSession(
      {
        serverUrl,
        token,
        maxResponseBytes: options.maxResponseBytes,
        label: "the tool list",
      },
      async (client: Client, signal) => {
        const tools: unknown[] = [];
        let cursor: string | undefined;
        for (let page = 0; page < MAX_LISTED_PAGES; page++) {
          const listed = await client.listTools(cursor ? { cursor } : undefined, { signal });
          tools.push(...(Array.isArray(listed.tools) ? listed.tools : []));
          cursor = typeof listed.nextCursor === "string" ? listed.nextCursor : undefined;
          if (!cursor) break;
        }
        return tools;
      },
    );
  } catch (error) {
    if (error instanceof TokenRejectedError || error instanceof ScopeRequired) {
      throw new McpBridgeError(
        "mcp_tools_need_authorization",
        token
          ? `The MCP server ${serverUrl.href} refused the token listToolsToken gave (expired, revoked or lacking scope) for its tool list. Give a fresh token with the needed scopes, or pass \`tools\` (each tool's name, description and inputSchema) to mcpBridgeToolset.`
          : `The MCP server ${serverUrl.href} lists its tools only to a signed-in user. Pass \`tools\` (each tool's name, description and inputSchema) or \`listToolsToken\` to mcpBridgeToolset.`,
        { cause: error },
      );
    }
    if (error instanceof McpBridgeError) throw error;
    throw new McpBridgeError(
      "mcp_tools_unavailable",
      `The tool list of the MCP server ${serverUrl.href} could not be read${error instanceof McpCallError ? ` (${error.message})` : ""}. Check that the server is running, then start the tool again.`,
      { cause: error },
    );
  }
}

/** The tool's OAuth redirect URI, `${publicBaseUrl}/oauth/callback`: https, or http on loopback. */
function redirectUriOf(publicBaseUrl: unknown): string {
  const base = typeof publicBaseUrl === "string" ? URL.parse(publicBaseUrl) : null;
  if (
    !base ||
    !(base.protocol === "https:" || (base.protocol === "http:" && isLoopback(base))) ||
    base.username ||
    base.password ||
    base.search ||
    base.hash
  ) {
    throw new McpBridgeError(
      "invalid_public_base_url",
      "publicBaseUrl must be the absolute https URL this RAP tool is reached at (plain http only on loopback), without credentials, query or fragment.",
    );
  }
  // As the tool kit builds it (base-url.ts): origin, path prefix without trailing slash, then the callback path.
  return `${base.origin}${base.pathname.replace(/\/+$/, "")}${OAUTH_CALLBACK_PATH}`;
}

/**
 * The canonical URI (RFC 8707) through the one MCP server URL check: absolute, https or loopback http, no fragment,
 * no credentials, no query (it would end up in the vault's keys and in every authorization URL as `resource`; on
 * an MCP URL it is usually a key). Never echoed. The bridge's codes: `server_url_query`, else `invalid_server_url`.
 */
function mcpServerUrl(value: string | URL): URL {
  try {
    return canonicalMcpServerUrl(value);
  } catch (error) {
    if (!(error instanceof McpServerUrlError)) throw error;
    throw new McpBridgeError(
      error.code === "server_url_query" ? "server_url_query" : "invalid_server_url",
      error.message,
    );
  }
}
