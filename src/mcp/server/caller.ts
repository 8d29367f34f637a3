/** The verified caller of an MCP request: what tool handlers see, from the SDK's `ctx.http.authInfo` or the current async context. */

import { AsyncLocalStorage } from "node:async_hooks";
import type { AuthInfo } from "@modelcontextprotocol/server";

/** Who is calling: the token's subject (the signed-in user), the client it was issued to, its scopes. No token. */
export interface McpCaller {
  subject?: string;
  clientId?: string;
  scopes: string[];
  /** Milliseconds since the epoch. */
  expiresAt?: number;
}

const storage = new AsyncLocalStorage<McpCaller>();

/** Runs `fn` with `caller` as the current caller (the protection does this around the MCP handler). */
export function runAsMcpCaller<T>(caller: McpCaller, fn: () => T): T {
  return storage.run(caller, fn);
}

/**
 * The caller of the request being handled, for code that cannot reach the SDK's context (helpers deep in a tool);
 * undefined outside a protected request.
 */
export function currentMcpCaller(): McpCaller | undefined {
  return storage.getStore();
}

const EXTRA_KEY = "agentauthCaller";

/** The SDK's `AuthInfo` for a verified caller. The token itself is left empty: handlers have no use for it. */
export function toAuthInfo(
  caller: McpCaller,
  resource: URL,
  resourceMetadataUrl: string,
): AuthInfo {
  return {
    token: "",
    clientId: caller.clientId ?? "",
    scopes: caller.scopes,
    ...(caller.expiresAt !== undefined ? { expiresAt: Math.floor(caller.expiresAt / 1000) } : {}),
    resource,
    resourceMetadataUrl,
    extra: { [EXTRA_KEY]: caller, subject: caller.subject },
  };
}

/**
 * The caller from a tool handler's context (`(args, ctx)` or `(ctx)` in `McpServer.registerTool`): reads
 * `ctx.http.authInfo`, which the protection fills; undefined when the request did not pass through it.
 */
export function mcpCaller(
  ctx: { http?: { authInfo?: AuthInfo } } | undefined,
): McpCaller | undefined {
  const extra = ctx?.http?.authInfo?.extra;
  const caller = extra?.[EXTRA_KEY];
  return caller && typeof caller === "object" ? (caller as McpCaller) : undefined;
}
