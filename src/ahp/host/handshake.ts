/**
 * The `initialize` handshake, pure: picks the dialect from the params, negotiates the version (official: the
 * caret ranges of the host's baselines, `../version.ts`; seed: its numeric version) and builds the answer. The
 * connection starts the session on `start` and closes after a `refused` answer (lifecycle spec: -32005, then close).
 */

import { negotiateProtocolVersion } from "../version.ts";
import {
  AhpErrorCodes,
  InitializeParamsOfficialSchema,
  InitializeParamsSeedSchema,
  ROOT_CHANNEL,
  type Snapshot,
} from "../wire.ts";
import type { HostContext } from "./context.ts";
import { type Dialect, detectDialect, negotiateSeed, supportedVersions } from "./negotiate.ts";
import { invalid, invalidParams, type Reply } from "./replies.ts";

export interface HandshakeOutcome {
  reply: Reply;
  start?: { dialect: Dialect; version: string };
  /** Set with a -32005 answer: log it, then close the connection. Only well-formed versions are listed. */
  refused?: { dialect: Dialect; offered: string[] };
}

export function handshake(host: HostContext, params: unknown): HandshakeOutcome {
  const dialect = detectDialect(params);
  if (!dialect) {
    return {
      reply: invalid(
        AhpErrorCodes.InvalidParams,
        "initialize needs protocolVersions (string[], official AHP) or a numeric protocolVersion.",
      ),
    };
  }
  if (dialect === "official") {
    const p = InitializeParamsOfficialSchema.safeParse(params);
    if (!p.success) return { reply: invalidParams(p.error) };
    const offered = p.data.protocolVersions;
    const outcome = negotiateProtocolVersion(offered, host.protocolVersions.parsed);
    if (!outcome.ok && outcome.reason === "malformed") {
      // The official helper throws here; answering -32602 (without closing) lets the client correct its offer.
      return {
        reply: invalid(
          AhpErrorCodes.InvalidParams,
          `Invalid params: protocolVersions[${outcome.index}] is not a MAJOR.MINOR.PATCH version (no "v", prerelease or build metadata).`,
        ),
      };
    }
    if (!outcome.ok) return unsupported(host, dialect, offered);
    // The host's one action sequence is the MCP bridge's (the only source of `action` notifications; the session
    // catalogue keeps no log): a client that joins after actions were stamped must not start from 0 and take the
    // next action for an old one.
    const serverSeq = host.mcp?.serverSeq ?? 0;
    const root: Snapshot = {
      resource: ROOT_CHANNEL,
      state: host.registry.rootState(),
      fromSeq: serverSeq,
    };
    return {
      start: { dialect, version: outcome.version },
      reply: {
        result: {
          protocolVersion: outcome.version,
          serverSeq,
          serverInfo: host.serverInfo,
          snapshots: (p.data.initialSubscriptions ?? []).includes(ROOT_CHANNEL) ? [root] : [],
        },
      },
    };
  }
  const p = InitializeParamsSeedSchema.safeParse(params);
  if (!p.success) return { reply: invalidParams(p.error) };
  const version = negotiateSeed(p.data.protocolVersion);
  if (version === undefined) return unsupported(host, dialect, [String(p.data.protocolVersion)]);
  return {
    start: { dialect, version: String(version) },
    reply: {
      result: {
        protocolVersion: version,
        serverSeq: host.mcp?.serverSeq ?? 0,
        snapshots: [],
        resourceMetadata: {
          resource: host.hostResource(),
          authSchemes: host.registry.authSchemes(),
        },
      },
    },
  };
}

function unsupported(
  host: HostContext,
  dialect: Dialect,
  offered: readonly string[],
): HandshakeOutcome {
  const supported = supportedVersions(dialect, host.protocolVersions.text);
  const speaks =
    dialect === "seed"
      ? `seed protocolVersion ${supported.join(" or ")}`
      : `AHP versions compatible with ${supported.join(" or ")} (${supported.map((v) => `^${v}`).join(", ")})`;
  return {
    refused: { dialect, offered: offered.slice(0, 8) },
    reply: invalid(
      AhpErrorCodes.UnsupportedProtocolVersion,
      `Unsupported protocol version: this host speaks ${speaks}; offered: ${offered.slice(0, 8).join(", ") || "none"}.`,
      { supportedVersions: supported },
    ),
  };
}
