/**
 * Dialect negotiation, pure: what each dialect's `initialize` sends, how its answer reads, and which refusals mean
 * "try the next dialect". official offers SemVer strings (most preferred first); the seed sends one numeric version.
 */

import {
  AhpErrorCodes,
  InitializeResultOfficialSchema,
  InitializeResultSeedSchema,
  ROOT_CHANNEL,
  type Snapshot,
  UnsupportedProtocolVersionDataSchema,
} from "../wire.ts";
import { AhpProtocolError } from "./errors.ts";
import { type AhpResource, type Dialect, resourcesFromSeed } from "./resources.ts";
import type { RpcError } from "./rpc-socket.ts";

/**
 * Most preferred first (the official `PROTOCOL_VERSION`, then both `SUPPORTED_PROTOCOL_VERSIONS` baselines): a host
 * picks the highest it accepts, so a 0.9.x-only official host still negotiates. The auth shapes this client uses
 * (`authenticate`, `-32007 {resources}`, `auth/required`, root `protectedResources`) are the same in 0.9.0 and 1.x.
 */
export const CLIENT_PROTOCOL_VERSIONS = ["1.1.0", "1.0.0", "0.9.0"] as const;
export const SEED_PROTOCOL_VERSION = 1;
/** Default order: mainline first, the seed only when the host refuses or does not speak official. */
export const DEFAULT_DIALECTS: readonly Dialect[] = ["official", "seed"];

export function initializeParams(dialect: Dialect, clientId: string): Record<string, unknown> {
  if (dialect === "official") {
    return {
      protocolVersions: [...CLIENT_PROTOCOL_VERSIONS],
      clientId,
      clientInfo: { name: "agentauth" },
      initialSubscriptions: [ROOT_CHANNEL],
    };
  }
  return { protocolVersion: SEED_PROTOCOL_VERSION, clientId };
}

export interface Negotiated {
  dialect: Dialect;
  /** "1.1.0" or 1. */
  protocolVersion: string | number;
  /** seed: the schemes from `initialize`; official: empty until root state is read. */
  resources: AhpResource[];
  /** official: the root snapshot, when `initialSubscriptions` delivered it. */
  rootSnapshot?: Snapshot;
}

/**
 * Reads an `initialize` answer. A seed host that ignored `protocolVersions` and answered with a number is read as
 * the seed dialect (when the caller allows it) rather than refused: same connection, no second handshake.
 */
export function readInitializeResult(
  sent: Dialect,
  result: unknown,
  allowed: readonly Dialect[],
): Negotiated | undefined {
  const version = (result as { protocolVersion?: unknown } | null)?.protocolVersion;
  if (typeof version === "string") {
    if (sent !== "official") return undefined;
    const parsed = InitializeResultOfficialSchema.safeParse(result);
    if (!parsed.success)
      throw new AhpProtocolError("The host's initialize answer (official) is malformed.");
    if (!(CLIENT_PROTOCOL_VERSIONS as readonly string[]).includes(parsed.data.protocolVersion)) {
      return undefined;
    }
    return {
      dialect: "official",
      protocolVersion: parsed.data.protocolVersion,
      resources: [],
      rootSnapshot: parsed.data.snapshots.find((s) => s.resource === ROOT_CHANNEL),
    };
  }
  if (typeof version === "number") {
    if (!allowed.includes("seed") || version !== SEED_PROTOCOL_VERSION) return undefined;
    const parsed = InitializeResultSeedSchema.safeParse(result);
    if (!parsed.success)
      throw new AhpProtocolError("The host's initialize answer (seed) is malformed.");
    return {
      dialect: "seed",
      protocolVersion: version,
      resources: resourcesFromSeed(parsed.data.resourceMetadata),
    };
  }
  throw new AhpProtocolError("The host's initialize answer has no protocolVersion.");
}

/**
 * True when an `initialize` error means "not this dialect": -32005 (the host names what it supports), or the
 * host not understanding the params at all (-32602/-32600: a seed host missing `protocolVersion`).
 */
export function isDialectRefusal(error: RpcError): boolean {
  return (
    error.code === AhpErrorCodes.UnsupportedProtocolVersion ||
    error.code === AhpErrorCodes.InvalidParams ||
    error.code === AhpErrorCodes.InvalidRequest
  );
}

export function supportedVersionsOf(error: RpcError): (string | number)[] {
  const parsed = UnsupportedProtocolVersionDataSchema.safeParse(error.data);
  return parsed.success ? parsed.data.supportedVersions : [];
}
