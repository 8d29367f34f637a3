/** What every connection of one host shares: the registry, the verifier, the commands, limits and the clock. */

import type { Logger } from "../../core/log.ts";
import type { ProtocolVersion } from "../version.ts";
import type { Dialect } from "./negotiate.ts";
import type { RateLimitOptions } from "./rate-limit.ts";
import type { ResourceRegistry } from "./resources.ts";
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

export interface CommandOptions {
  /** Resources that must all be authenticated, or `"any"`: at least one advertised resource. */
  requires?: readonly string[] | "any";
  /** Scopes the credential of every required resource must carry (`insufficient_scope` otherwise). */
  scopes?: readonly string[];
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
  /** Re-verify a stored token before each gated command (notices revocation; costs one verification). */
  reverifyOnUse: boolean;
  now: () => number;
}
