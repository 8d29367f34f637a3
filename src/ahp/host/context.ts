/** What every connection of one host shares: the registry, the verifier, the commands, limits and the clock. */

import { AgentAuthError } from "../../core/errors.ts";
import type { Logger } from "../../core/log.ts";
import type { ProtocolVersion } from "../version.ts";
import type { McpBridge } from "./mcp/index.ts";
import type { Dialect } from "./negotiate.ts";
import type { RateLimitOptions } from "./rate-limit.ts";
import type { ResourceRegistry } from "./resources.ts";
import type { SessionCatalog } from "./sessions.ts";
import type { ResourceVerifier } from "./verify.ts";

/** A resource this connection is authenticated for, as command handlers see it (no token). */
export interface AuthenticatedResource {
  resource: string;
  schemeId: string;
  subject?: string;
  scopes: string[];
  /** Epoch ms, when known. */
  expiresAt?: number;
}

export interface CommandContext {
  connectionId: string;
  dialect: Dialect;
  authenticated: AuthenticatedResource[];
  logger: Logger;
}

export type CommandHandler = (params: unknown, context: CommandContext) => unknown;

/** What a command needs: resources that must all be authenticated, or `"any"`: at least one advertised resource. */
export type Requirement = readonly string[] | "any";

export interface CommandOptions {
  /**
   * A fixed requirement, or one computed from the params (e.g. the resources of the agent `createSession` names).
   * A function returning resources no agent registered is a host bug (answered -32603). Return `[]` to let the
   * handler answer invalid params itself.
   */
  requires?: Requirement | ((params: unknown) => Requirement);
  /** Scopes the credential of every required resource must carry (`insufficient_scope` otherwise). */
  scopes?: readonly string[];
}

/**
 * Thrown by a command handler to answer with a JSON-RPC error (e.g. -32002 `ProviderNotFound`). The message goes
 * to the peer as is: it must not carry a secret or unsanitised peer text.
 */
export class AhpCommandError extends AgentAuthError {
  readonly rpcCode: number;
  readonly data: unknown;

  constructor(rpcCode: number, message: string, data?: unknown) {
    super("ahp_command_error", message);
    this.rpcCode = rpcCode;
    this.data = data;
  }
}

export interface CommandEntry {
  options: CommandOptions;
  handler: CommandHandler;
}

export interface HostContext {
  registry: ResourceRegistry;
  verify: ResourceVerifier;
  commands: ReadonlyMap<string, CommandEntry>;
  logger: Logger;
  rateLimit: RateLimitOptions;
  /** The official baselines this host accepts (caret ranges), as configured and parsed once. */
  protocolVersions: { text: readonly string[]; parsed: readonly ProtocolVersion[] };
  maxMessageBytes: number;
  serverInfo: { name: string; version?: string };
  /** The seed's `resourceMetadata.resource`: this host's identifier. */
  hostResource: () => string;
  /** The official session catalogue, when the host serves the session commands (`AhpHost.sessions()`). */
  sessions?: SessionCatalog;
  /** The MCP servers the host uses for sessions, their auth state, and clients' tokens for them (`mcp/`). */
  mcp?: McpBridge;
  /** Re-verify a stored token before each gated command (notices revocation; costs one verification). */
  reverifyOnUse: boolean;
  now: () => number;
}
