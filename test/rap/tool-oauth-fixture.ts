/** Shared setup for the RAP tool OAuth tests: the embedded authorization server, a client for the tool, operations. */

import { createLogger, type Secret } from "../../src/core/index.ts";
import type { RunningIdp } from "../../src/idp/index.ts";
import {
  type OperationDefinition,
  TokenRejectedError,
  type ToolServerOptions,
} from "../../src/rap/tool/index.ts";

/** The tool's OAuth client: public, PKCE, native so any loopback port matches (RFC 8252 §7.3). */
export const RAP_TOOL_CLIENT = {
  client_id: "rap-tool",
  application_type: "native",
  token_endpoint_auth_method: "none",
  redirect_uris: ["http://127.0.0.1/oauth/callback"],
  grant_types: ["authorization_code", "refresh_token"],
  response_types: ["code"],
} as const;

export const SCOPE = "openid profile offline_access";

/** A real API call with the token: the authorization server's userinfo endpoint. */
export async function whoami(idp: RunningIdp, token: Secret | undefined): Promise<string> {
  const response = await fetch(`${idp.issuer}/me`, {
    headers: { authorization: `Bearer ${token?.reveal()}` },
  });
  if (response.status === 401) {
    await response.arrayBuffer();
    throw new TokenRejectedError();
  }
  const claims = (await response.json()) as { sub: string; name?: string };
  return `signed in as ${claims.sub} (${claims.name})`;
}

export function oauthOperations(idp: RunningIdp): OperationDefinition[] {
  return [
    {
      name: "whoami",
      description: "Says who the user is at the provider.",
      inputSchema: { type: "object" },
      requiresAuth: "demo",
      handler: async ({ accessToken }) => whoami(idp, accessToken),
    },
    {
      name: "always_rejected",
      description: "An API that refuses every token.",
      inputSchema: { type: "object" },
      requiresAuth: "demo",
      handler: async () => {
        throw new TokenRejectedError();
      },
    },
    {
      name: "leaky",
      description: "A buggy handler that returns its token.",
      inputSchema: { type: "object" },
      requiresAuth: "demo",
      handler: async ({ accessToken }) => `token is ${accessToken?.reveal()}`,
    },
    {
      name: "public_echo",
      description: "Needs no authorization.",
      inputSchema: { type: "object" },
      handler: async () => "public",
    },
  ];
}

export function providers(idp: RunningIdp): ToolServerOptions["providers"] {
  return {
    demo: {
      issuer: idp.issuer,
      client: { clientId: RAP_TOOL_CLIENT.client_id },
      scope: SCOPE,
      displayName: "Demo ID",
    },
  };
}

/** Follows an auth_url as the person's browser would: the auto-approving server redirects to the tool. */
export async function authorize(authUrl: string): Promise<{
  redirect: URL;
  status: number;
  page: string;
}> {
  const first = await fetch(authUrl, { redirect: "manual" });
  await first.arrayBuffer();
  const location = first.headers.get("location");
  if (!location)
    throw new Error(`the authorization server did not redirect (HTTP ${first.status})`);
  const redirect = new URL(location, authUrl);
  const landed = await fetch(redirect);
  return { redirect, status: landed.status, page: await landed.text() };
}

export function captureLogs(): { logs: string[]; logger: ReturnType<typeof createLogger> } {
  const logs: string[] = [];
  return { logs, logger: createLogger({ write: (line) => logs.push(line), level: "debug" }) };
}
