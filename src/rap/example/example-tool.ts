/**
 * The example RAP tool (`agentauth rap tool serve --example --issuer URL`): `echo` needs nothing; `whoami` needs the
 * `demo` provider and calls the protected API with the user's token. With no client id given it registers itself
 * at the authorization server (RFC 7591) as a native public client with a loopback redirect URI (RFC 8252 §7.3).
 */

import { createHmac } from "node:crypto";
import type { Logger } from "../../core/log.ts";
import { discoverAuthorizationServer, registerClient } from "../../oauth/index.ts";
import type { CredentialStore } from "../../vault/types.ts";
import type { InvocationAuth } from "../invocation-auth.ts";
import {
  createToolServer,
  OperationError,
  type ReplayLedger,
  type SharedSetting,
  TokenRejectedError,
  type ToolStateStore,
} from "../tool/index.ts";
import { type ProtectedApi, startProtectedApi } from "./protected-api.ts";

export interface ExampleToolOptions {
  issuer: string;
  store: CredentialStore;
  port?: number;
  /** The interface to listen on (default 127.0.0.1); another needs `publicBaseUrl`. */
  host?: string;
  /**
   * The URL the runtime and browsers reach the tool at, shared by every instance behind a load balancer: the toolset's
   * endpoint, the consent page and the OAuth redirect URI name it. Default: the listening address.
   */
  publicBaseUrl?: string;
  /** The protected API's port (0 or absent = a free one). */
  apiPort?: number;
  /**
   * The protected API's RFC 8707 resource identifier, which its tokens are issued for (default
   * EXAMPLE_API_RESOURCE). It does not depend on the port, so a restart or another instance keeps the users' tokens.
   */
  apiResource?: string;
  clientId?: string;
  authorizationTimeoutMs?: number;
  logger?: Logger;
  /** How the runtime must authenticate its requests; none when absent (the CLI defaults to HMAC). */
  invocationAuth?: InvocationAuth;
  /** Shared durable state (pending sign-ins, undelivered results) on PostgreSQL; memory when absent. */
  state?: ToolStateStore;
  /** Where accepted signed invocations are remembered (a SQLite file); the state's, else memory, when absent. */
  replay?: ReplayLedger;
}

export interface RunningExampleTool {
  /** The public base URL (or the listening address). */
  url: string;
  /** Where this instance listens (`http://host:port`), which a load balancer forwards to. */
  listen: string;
  api: ProtectedApi;
  clientId: string;
  close(): Promise<void>;
}

/**
 * The example API's resource identifier unless told otherwise: a name, not an address (each instance's API listens
 * on a port of its own), under `.invalid` so it can never be mistaken for a server to call.
 */
export const EXAMPLE_API_RESOURCE = "https://example-api.agentauth.invalid/";

export async function startExampleTool(options: ExampleToolOptions): Promise<RunningExampleTool> {
  const api = await startProtectedApi({
    issuer: options.issuer,
    port: options.apiPort,
    resource: options.apiResource ?? EXAMPLE_API_RESOURCE,
  });
  try {
    return await startOnApi(options, api);
  } catch (error) {
    // Nothing half-started outlives a failed start (issue 8 §4.3): the API's listener would keep the process alive.
    await api.close();
    throw error;
  }
}

async function startOnApi(
  options: ExampleToolOptions,
  api: ProtectedApi,
): Promise<RunningExampleTool> {
  const clientId = options.clientId ?? (await registerExampleClient(options.issuer));
  // Before listening: an instance that disagrees with the live ones must not take a single request (issue 22 §5).
  await options.state?.join?.(sharedSettings(options, clientId, api.resource));
  const server = createToolServer({
    invocationAuth: options.invocationAuth,
    publicBaseUrl: options.publicBaseUrl,
    toolset: {
      name: "agentauth-example",
      description: "Example RAP tool: echo, and whoami against a protected API",
    },
    store: options.store,
    state: options.state,
    replay: options.replay,
    authorizationTimeoutMs: options.authorizationTimeoutMs,
    logger: options.logger,
    providers: {
      demo: {
        issuer: options.issuer,
        client: { clientId },
        scope: "read",
        resource: api.resource,
        displayName: "the demo API",
        // No ID token (scope "read" only): who signed in is read from the API itself.
        account: async (accessToken) => {
          const response = await fetch(`${api.url}/api/me`, {
            headers: { authorization: `Bearer ${accessToken.reveal()}` },
          });
          if (!response.ok) {
            await response.arrayBuffer();
            return undefined;
          }
          const me = (await response.json()) as { subject?: unknown };
          return typeof me.subject === "string" ? { subject: me.subject } : undefined;
        },
      },
    },
    operations: [
      {
        name: "echo",
        description: "Repeats the text it is given.",
        inputSchema: {
          type: "object",
          properties: { text: { type: "string", maxLength: 10000 } },
          required: ["text"],
          additionalProperties: false,
        },
        annotations: { readOnly: true },
        handler: async ({ arguments: args }) => `echo: ${String(args.text)}`,
      },
      {
        name: "whoami",
        description: "Tells who the user is at the demo API (needs the user's authorization).",
        inputSchema: { type: "object", properties: {}, additionalProperties: false },
        annotations: { readOnly: true },
        requiresAuth: "demo",
        handler: async ({ accessToken, signal }) => {
          const response = await fetch(`${api.url}/api/me`, {
            headers: { authorization: `Bearer ${accessToken?.reveal() ?? ""}` },
            signal,
          });
          if (response.status === 401) throw new TokenRejectedError();
          if (!response.ok)
            throw new OperationError(
              `the demo API answered HTTP ${response.status}; try again later.`,
            );
          const me = (await response.json()) as { subject?: string; scopes?: string[] };
          return `You are ${me.subject} at the demo API (scopes: ${(me.scopes ?? []).join(" ") || "none"}).`;
        },
      },
    ],
  });
  const host = options.host ?? "127.0.0.1";
  const listening = await server.listen({ port: options.port ?? 0, host });
  return {
    url: listening.url,
    listen: `http://${host.includes(":") ? `[${host}]` : host}:${listening.port}`,
    api,
    clientId,
    close: async () => {
      await listening.close();
      await api.close();
    },
  };
}

/** What every instance on one database must share, as fingerprints, each with the flag that sets it. */
function sharedSettings(
  options: ExampleToolOptions,
  clientId: string,
  resource: string,
): SharedSetting[] {
  const auth = options.invocationAuth;
  return [
    {
      name: "client_id",
      label: "OAuth client id",
      values: [clientId],
      fix: `give every instance the same --client-id; without it each instance registers a client of its own, and a sign-in finished at another instance fails. agentauth idp serve pre-registers agentauth-example-tool`,
    },
    {
      name: "api_resource",
      label: "protected API's resource",
      values: [resource],
      fix: "give every instance the same --api-resource, or none",
    },
    {
      name: "invocation_auth",
      label: "invocation secret (fingerprint)",
      values: [
        auth
          ? `${auth.scheme}:${createHmac("sha256", auth.secret.reveal()).update("agentauth rap tool shared-config v1").digest("hex").slice(0, 16)}`
          : "none",
      ],
      fix: "give every instance the same --invocation-auth and the same --invocation-secret-file contents as the runtimes",
    },
  ];
}

async function registerExampleClient(issuer: string): Promise<string> {
  const as = await discoverAuthorizationServer(issuer);
  const registered = await registerClient({
    as,
    metadata: {
      client_name: "agentauth example RAP tool",
      application_type: "native",
      token_endpoint_auth_method: "none",
      grant_types: ["authorization_code", "refresh_token"],
      response_types: ["code"],
      redirect_uris: ["http://127.0.0.1/oauth/callback"],
    },
  });
  return registered.clientId;
}
