/**
 * `startMcpProxy(options)`: a local stdio MCP server that forwards everything to a remote MCP server and signs in
 * with agentauth (docs/mcp-proxy.md). The CLI's `agentauth mcp proxy` is this over the process's stdio, with
 * `startSignIn` spawning the background sign-in; a program can run it over any streams.
 *
 * @example
 * const proxy = await startMcpProxy({ serverUrl: "https://mcp.example.com/mcp", store: openVault() });
 * await proxy.closed; // the MCP client closed stdin
 */

import type { Readable, Writable } from "node:stream";
import type { Logger } from "../../core/log.ts";
import { silentLogger } from "../../core/log.ts";
import type { OAuthClient } from "../../oauth/index.ts";
import type { CredentialStore } from "../../vault/types.ts";
import type { McpDiscoveryOptions } from "../client/discovery.ts";
import type { DpopPolicy } from "../client/dpop-policy.ts";
import { type AgentAuthProvider, agentAuthProvider } from "../client/provider.ts";
import { canonicalMcpServerUrl } from "../client/server-url.ts";
import { loadMcpServerSdk } from "../sdk.ts";
import { startPump } from "./pump.ts";
import { connectRemote, type RemoteTransportMode } from "./remote.ts";
import { signInCoordinator } from "./sign-in.ts";

export { type BackgroundSignInOptions, runBackgroundSignIn } from "./background.ts";
export { parseHeaders } from "./headers.ts";
export { browserCommand, openBrowser } from "./open-browser.ts";
export { REMOTE_TRANSPORT_MODES, type RemoteTransportMode } from "./remote.ts";
export { shellWord, signInLeaseName } from "./sign-in.ts";

export interface McpProxyOptions {
  /** The remote MCP server's URL (https, or http on loopback). */
  serverUrl: string | URL;
  /** The vault the sign-in is kept in, shared with every other proxy, `agentauth mcp login` and programs. */
  store: CredentialStore;
  /** Whose sign-in it is. Default "default", as `agentauth mcp login` without --subject. */
  subject?: string;
  /** Extra headers for every request (parseHeaders); an `Authorization` one means no OAuth at all. */
  headers?: Record<string, string>;
  clientFor?: (issuer: string) => OAuthClient | undefined;
  dpop?: DpopPolicy;
  crossOriginEndpoints?: McpDiscoveryOptions["crossOriginEndpoints"];
  transport?: RemoteTransportMode;
  /** Starts the machine's background sign-in; without it, the client is told to run `agentauth mcp login`. */
  startSignIn?: () => void;
  /** What the person runs to sign in by hand, named in the client's answer (see CoordinatorOptions.loginCommand). */
  loginCommand?: string;
  /** How long a request that needs a sign-in waits for it before the client is told what to do. Default 15 s. */
  signInWaitMs?: number;
  /** The streams the MCP client speaks on. Default the process's stdin and stdout. */
  input?: Readable;
  output?: Writable;
  log?: Logger;
}

export interface McpProxy {
  /** The canonical URL of the server it forwards to. */
  readonly serverUrl: string;
  /** Resolves when the MCP client has gone (stdin ended) and the remote session was ended. */
  readonly closed: Promise<void>;
  close(): Promise<void>;
}

export async function startMcpProxy(options: McpProxyOptions): Promise<McpProxy> {
  const log = options.log ?? silentLogger;
  const canonical = canonicalMcpServerUrl(options.serverUrl, { query: "allow" });
  const headers = options.headers ?? {};
  const ownCredential = Object.keys(headers).some((name) => name.toLowerCase() === "authorization");
  const subject = options.subject ?? "default";
  const authProvider: AgentAuthProvider | undefined = ownCredential
    ? undefined
    : agentAuthProvider({
        serverUrl: canonical.href,
        store: options.store,
        subject,
        clientFor: options.clientFor,
        dpop: options.dpop,
        crossOriginEndpoints: options.crossOriginEndpoints,
      });
  const server = await loadMcpServerSdk(
    "agentauth mcp proxy",
    () => import("@modelcontextprotocol/server/stdio"),
  );
  const stdio = new (
    server as unknown as typeof import("@modelcontextprotocol/server/stdio")
  ).StdioServerTransport(options.input, options.output);
  let urlElicitation = false;
  const pump = await startPump({
    client: stdio,
    connectRemote: () =>
      connectRemote({
        serverUrl: canonical,
        mode: options.transport ?? "http-first",
        authProvider,
        headers,
      }),
    signIn: signInCoordinator({
      store: options.store,
      canonicalUri: canonical.href,
      subject,
      startSignIn: options.startSignIn,
      loginCommand: options.loginCommand,
      ready: async () =>
        authProvider ? Boolean(await authProvider.token().catch(() => undefined)) : true,
      waitMs: options.signInWaitMs,
      urlElicitation: () => urlElicitation,
      log,
    }),
    onInitialize: (params) => {
      const elicitation = (
        params as { capabilities?: { elicitation?: { url?: unknown } } } | undefined
      )?.capabilities?.elicitation;
      urlElicitation = elicitation?.url !== undefined;
    },
    log,
  });
  log.info("mcp.proxy.ready", { server: canonical.origin, oauth: !ownCredential });
  return { serverUrl: canonical.href, closed: pump.closed, close: () => pump.close() };
}
