/**
 * AHP wire shapes, declared once (zod) for both dialects the host and client speak:
 *
 * - **official (mainline)**: `initialize {protocolVersions: string[]}` (SemVer negotiation), per-agent RFC 9728 metadata
 *   (snake_case) in root state `AgentInfo.protectedResources`, `authenticate {channel, resource, token, expiresIn?,
 *   scopes?}` → `{}`, `-32007` with `data.resources`, the `auth/required {channel, resource, reason?}` notification.
 * - **seed** (VS Code `auth-rework.md`): `initialize {protocolVersion: number}` → `resourceMetadata {resource,
 *   authSchemes[]}`, `authenticate {schemeId, scheme:"bearer", token}` → `{authenticated}`, `-32007` with
 *   `data.challenges[]` (RFC 6750 error codes), the `notify/authRequired` notification, deprecated `setAuthToken`.
 *
 * Tokens appear only in request params (`authenticate`, `setAuthToken`): never in results, state, errors or
 * notifications.
 */

import { z } from "zod";
import { OFFICIAL_PROTOCOL_VERSION, OFFICIAL_SUPPORTED_PROTOCOL_VERSIONS } from "./version.ts";

// ─── JSON-RPC 2.0 ────────────────────────────────────────────────────────────

export const JsonRpcErrorCodes = {
  ParseError: -32700,
  InvalidRequest: -32600,
  MethodNotFound: -32601,
  InvalidParams: -32602,
  InternalError: -32603,
} as const;

/** AHP error codes (`types/common/errors.ts`), plus our one implementation-defined code. */
export const AhpErrorCodes = {
  ...JsonRpcErrorCodes,
  /** `data.supportedVersions` is required (official); the seed dialect reuses it with numeric versions. */
  UnsupportedProtocolVersion: -32005,
  /** `AuthRequired` (official) / `AHP_AUTH_REQUIRED` (seed): `data.resources` (official) or `data.challenges` (seed). */
  AuthRequired: -32007,
  /** `SessionNotFound`: the referenced `ahp-session:` URI does not exist. */
  SessionNotFound: -32001,
  /** `ProviderNotFound`: `createSession` names an agent provider this host does not have. */
  ProviderNotFound: -32002,
  /** `SessionAlreadyExists`: `createSession` with a URI already in use. */
  SessionAlreadyExists: -32003,
  /** official `NotFound`: e.g. `subscribe` to a channel this host does not have. */
  NotFound: -32008,
  /**
   * agentauth extension: too many `authenticate` calls on this connection (threat model: "apply rate limits").
   * AHP defines no code for it, and JSON-RPC 2.0 reserves -32768..-32000 (AHP's own application codes live in
   * -32000..-32099, `types/common/errors.ts` @3462795), so it sits outside both: -31429 (429 as in HTTP). It was
   * -32029 before, inside the range AHP reserves. `data.retryAfterMs`.
   */
  RateLimited: -31429,
} as const;

export const JsonRpcIdSchema = z.union([z.string(), z.number()]);
export type JsonRpcId = z.infer<typeof JsonRpcIdSchema>;

/** Any incoming message before routing: a request (with `id`) or a notification (without). */
export const JsonRpcIncomingSchema = z.object({
  jsonrpc: z.literal("2.0"),
  id: JsonRpcIdSchema.optional(),
  method: z.string().min(1),
  params: z.unknown().optional(),
});
export type JsonRpcIncoming = z.infer<typeof JsonRpcIncomingSchema>;

export const JsonRpcErrorSchema = z.object({
  code: z.number().int(),
  message: z.string(),
  data: z.unknown().optional(),
});
export type JsonRpcError = z.infer<typeof JsonRpcErrorSchema>;

export const JsonRpcResponseSchema = z.union([
  z.object({ jsonrpc: z.literal("2.0"), id: JsonRpcIdSchema, result: z.unknown() }),
  z.object({
    jsonrpc: z.literal("2.0"),
    id: JsonRpcIdSchema.nullable(),
    error: JsonRpcErrorSchema,
  }),
]);
export type JsonRpcResponse = z.infer<typeof JsonRpcResponseSchema>;

export const JsonRpcNotificationSchema = z.object({
  jsonrpc: z.literal("2.0"),
  method: z.string(),
  params: z.unknown().optional(),
});

// ─── Names ───────────────────────────────────────────────────────────────────

export const ROOT_CHANNEL = "ahp-root://";

export const AhpMethods = {
  initialize: "initialize",
  authenticate: "authenticate",
  /** official: `subscribe {channel:"ahp-root://"}` → `{snapshot}` (root state, where clients read auth requirements). */
  subscribe: "subscribe",
  ping: "ping",
  /** official server → client notification. */
  authRequired: "auth/required",
  /** official server → client notification carrying an `ActionEnvelope` (state changes of a subscribed channel). */
  action: "action",
  /** seed server → client notification (method name = the seed's `type`). */
  seedAuthRequired: "notify/authRequired",
  /** seed client → server notification, deprecated: accepted for one version, logged as deprecated. */
  setAuthToken: "setAuthToken",
  /** official client → server *notification* (`types/common/commands.ts`): stop updates for a channel. */
  unsubscribe: "unsubscribe",
  /** official client → server notification (write-ahead actions); this host keeps no action log and ignores it. */
  dispatchAction: "dispatchAction",
} as const;

/** The official session commands the example host serves (`channels-session`/`channels-root` commands @043bc34). */
export const OfficialSessionMethods = {
  createSession: "createSession",
  disposeSession: "disposeSession",
  listSessions: "listSessions",
  reconnect: "reconnect",
} as const;

/**
 * Official client → server request names at 043bc34 (`types/common`, `channels-root`, `channels-session`,
 * `channels-chat` commands). A host that does not serve one answers -32601 saying so, rather than a bare
 * "method not found" that reads like a typo. Not exhaustive: any other name gets the plain -32601.
 */
export const OFFICIAL_COMMAND_NAMES: ReadonlySet<string> = new Set([
  "initialize",
  "reconnect",
  "ping",
  "subscribe",
  "authenticate",
  "createSession",
  "disposeSession",
  "listSessions",
  "resolveSessionConfig",
  "sessionConfigCompletions",
  "fetchTurns",
  "completions",
  "resourceRead",
  "resourceWrite",
  "resourceList",
  "resourceCopy",
  "resourceDelete",
  "resourceMove",
  "resourceMkdir",
  "resourceResolve",
  "resourceRequest",
]);

/** A client-chosen session URI (`ahp-session:/<uuid>` in the official docs); bounded, no control characters. */
export const SessionUriSchema = z
  .string()
  .max(256)
  .regex(
    /^ahp-session:\/[A-Za-z0-9._~-]{1,200}$/,
    "expected ahp-session:/<id> (letters, digits, . _ ~ -)",
  );

/** The official `PROTOCOL_VERSION` and baselines (`types/version/registry.ts` @0383429); see `./version.ts`. */
export const AHP_PROTOCOL_VERSION = OFFICIAL_PROTOCOL_VERSION;
export const AHP_VERSION_BASELINES = OFFICIAL_SUPPORTED_PROTOCOL_VERSIONS;
/** The seed dialect's numeric `protocolVersion`s. */
export const SEED_PROTOCOL_VERSIONS = [1] as const;

export const BearerErrorCodeSchema = z.enum([
  "invalid_request",
  "invalid_token",
  "insufficient_scope",
]);
export type BearerErrorCode = z.infer<typeof BearerErrorCodeSchema>;

// ─── official shapes ──────────────────────────────────────────────────────────────

/** RFC 9728 §2 metadata, snake_case, plus AHP's `required` (absent = `true`). Unknown fields kept. */
export const ProtectedResourceMetadataSchema = z.looseObject({
  resource: z.string().min(1),
  resource_name: z.string().optional(),
  authorization_servers: z.array(z.string()).optional(),
  jwks_uri: z.string().optional(),
  scopes_supported: z.array(z.string()).optional(),
  bearer_methods_supported: z.array(z.string()).optional(),
  resource_signing_alg_values_supported: z.array(z.string()).optional(),
  resource_documentation: z.string().optional(),
  resource_policy_uri: z.string().optional(),
  resource_tos_uri: z.string().optional(),
  required: z.boolean().optional(),
});
export type ProtectedResourceMetadata = z.infer<typeof ProtectedResourceMetadataSchema>;

export const AgentInfoSchema = z.looseObject({
  provider: z.string(),
  displayName: z.string(),
  description: z.string().optional(),
  models: z.array(z.unknown()).optional(),
  protectedResources: z.array(ProtectedResourceMetadataSchema).optional(),
});
export type AgentInfo = z.infer<typeof AgentInfoSchema>;

export const RootStateSchema = z.looseObject({ agents: z.array(AgentInfoSchema) });
export type RootState = z.infer<typeof RootStateSchema>;

/** A channel snapshot (`resource` = the channel URI, as VS Code's `IStateSnapshot`). */
export const SnapshotSchema = z.looseObject({
  resource: z.string(),
  state: z.unknown(),
  fromSeq: z.number().int(),
});
export type Snapshot = z.infer<typeof SnapshotSchema>;

export const ImplementationSchema = z.looseObject({
  name: z.string(),
  version: z.string().optional(),
  title: z.string().optional(),
});

export const InitializeParamsOfficialSchema = z.looseObject({
  channel: z.literal(ROOT_CHANNEL).optional(),
  /** Strictness of each entry is the negotiator's job (`-32602` naming the entry); an empty offer is `-32005`. */
  protocolVersions: z.array(z.string().max(64)).max(32),
  clientId: z.string().min(1).max(256),
  clientInfo: ImplementationSchema.optional(),
  initialSubscriptions: z.array(z.string().max(2048)).max(64).optional(),
  _meta: z.record(z.string(), z.unknown()).optional(),
});
export type InitializeParamsOfficial = z.infer<typeof InitializeParamsOfficialSchema>;

export const InitializeResultOfficialSchema = z.looseObject({
  protocolVersion: z.string(),
  serverSeq: z.number().int(),
  serverInfo: ImplementationSchema.optional(),
  /** One per `initialSubscriptions` entry this host knows (only `ahp-root://` here). */
  snapshots: z.array(SnapshotSchema),
});
export type InitializeResultOfficial = z.infer<typeof InitializeResultOfficialSchema>;

export const UnsupportedProtocolVersionDataSchema = z.object({
  supportedVersions: z.array(z.union([z.string(), z.number()])),
});

export const SubscribeParamsSchema = z.looseObject({ channel: z.string().min(1).max(2048) });
export const SubscribeResultSchema = z.looseObject({ snapshot: SnapshotSchema.optional() });

export const AuthenticateParamsOfficialSchema = z.looseObject({
  channel: z.literal(ROOT_CHANNEL),
  resource: z.string().min(1).max(2048),
  /** Empty string revokes this connection's credential for `resource`. */
  token: z.string().max(16_384),
  /** RFC 6749 `expires_in`: seconds remaining when sent. */
  expiresIn: z.number().int().min(1).optional(),
  scopes: z.array(z.string().max(256)).max(256).optional(),
  /**
   * Branch-only (AHP PR #439, `96a1337`): the exact, case-sensitive MCP server configuration name; when present the
   * host applies the token only to that server.
   */
  serverName: z.string().min(1).max(256).optional(),
  _meta: z.record(z.string(), z.unknown()).optional(),
});
export type AuthenticateParamsOfficial = z.infer<typeof AuthenticateParamsOfficialSchema>;

export const AuthenticateResultOfficialSchema = z.object({});

export const AuthRequiredErrorDataOfficialSchema = z.looseObject({
  resources: z.array(ProtectedResourceMetadataSchema),
});
export type AuthRequiredErrorDataOfficial = z.infer<typeof AuthRequiredErrorDataOfficialSchema>;

/** `auth/required` params; `reason` is an open enum (unknown values decode unchanged). */
export const AuthRequiredParamsOfficialSchema = z.looseObject({
  channel: z.string(),
  resource: ProtectedResourceMetadataSchema,
  reason: z.string().optional(),
});
export type AuthRequiredParamsOfficial = z.infer<typeof AuthRequiredParamsOfficialSchema>;
export type AuthRequiredReasonOfficial = "required" | "expired";

// ─── seed shapes ─────────────────────────────────────────────────────────────

export const AuthSchemeSchema = z.looseObject({
  scheme: z.literal("bearer"),
  id: z.string(),
  label: z.string(),
  authorizationServers: z.array(z.string()),
  scopesSupported: z.array(z.string()).optional(),
  required: z.boolean().optional(),
  /**
   * Our addition to the seed: the scheme's RFC 8707 resource identifier, so a client knows which audience to ask a
   * token for (the seed's top-level `resource` names the host, and scopes alone cannot say it).
   */
  resource: z.string().optional(),
});
export type AuthScheme = z.infer<typeof AuthSchemeSchema>;

export const ResourceMetadataSchema = z.looseObject({
  resource: z.string(),
  authSchemes: z.array(AuthSchemeSchema),
});
export type ResourceMetadata = z.infer<typeof ResourceMetadataSchema>;

export const InitializeParamsSeedSchema = z.looseObject({
  protocolVersion: z.number().int(),
  clientId: z.string().min(1).max(256).optional(),
});
export type InitializeParamsSeed = z.infer<typeof InitializeParamsSeedSchema>;

export const InitializeResultSeedSchema = z.looseObject({
  protocolVersion: z.number().int(),
  serverSeq: z.number().int(),
  snapshots: z.array(SnapshotSchema),
  resourceMetadata: ResourceMetadataSchema.optional(),
});
export type InitializeResultSeed = z.infer<typeof InitializeResultSeedSchema>;

export const AuthenticateParamsSeedSchema = z.looseObject({
  schemeId: z.string().min(1).max(256),
  scheme: z.literal("bearer"),
  token: z.string().max(16_384),
});
export type AuthenticateParamsSeed = z.infer<typeof AuthenticateParamsSeedSchema>;

export const AuthenticateResultSeedSchema = z.object({ authenticated: z.boolean() });
export type AuthenticateResultSeed = z.infer<typeof AuthenticateResultSeedSchema>;

export const AuthChallengeSchema = z.looseObject({
  schemeId: z.string(),
  error: BearerErrorCodeSchema,
  errorDescription: z.string().optional(),
  /** Space-separated, as RFC 6750 §3 `scope`. */
  scope: z.string().optional(),
});
export type AuthChallenge = z.infer<typeof AuthChallengeSchema>;

export const AuthRequiredErrorDataSeedSchema = z.looseObject({
  challenges: z.array(AuthChallengeSchema),
});
export type AuthRequiredErrorDataSeed = z.infer<typeof AuthRequiredErrorDataSeedSchema>;

export const SeedAuthStateSchema = z.enum(["authenticated", "expired", "revoked", "required"]);
export type SeedAuthState = z.infer<typeof SeedAuthStateSchema>;

/** `notify/authRequired` params: the seed's `IAuthStateNotification`, `type` included as the seed declares it. */
export const AuthStateNotificationSeedSchema = z.looseObject({
  type: z.literal("notify/authRequired"),
  schemeId: z.string(),
  state: SeedAuthStateSchema,
  challenge: AuthChallengeSchema.optional(),
});
export type AuthStateNotificationSeed = z.infer<typeof AuthStateNotificationSeedSchema>;

/**
 * Deprecated `setAuthToken` params. The seed names only `token`; `schemeId` is optional and, when absent, the
 * host applies the token to the one scheme it fits (or ignores it: it is fire-and-forget).
 */
export const SetAuthTokenParamsSchema = z.looseObject({
  token: z.string().max(16_384),
  schemeId: z.string().max(256).optional(),
});

// ─── official session shapes (example host) ──────────────────────────────────

/** `createSession` params (`channels-session/commands.ts` @043bc34); other official fields are accepted and kept. */
export const CreateSessionParamsSchema = z.looseObject({
  channel: SessionUriSchema,
  provider: z.string().min(1).max(256).optional(),
});

export const DisposeSessionParamsSchema = z.looseObject({ channel: SessionUriSchema });

/** `listSessions` params: `PaginatedParams` (`channels-root/commands.ts` @043bc34). */
export const ListSessionsParamsSchema = z.looseObject({
  channel: z.literal(ROOT_CHANNEL).optional(),
  limit: z.number().int().min(1).optional(),
  cursor: z.string().max(1024).optional(),
});

/** `reconnect` params (`common/commands.ts` @043bc34). */
export const ReconnectParamsSchema = z.looseObject({
  channel: z.literal(ROOT_CHANNEL).optional(),
  clientId: z.string().min(1).max(256),
  lastSeenServerSeq: z.number().int().min(0),
  subscriptions: z.array(z.string().max(2048)).max(256),
});

/** `SessionSummary` (`channels-session/state.ts` @043bc34): `SessionMetadata` + resource and ISO 8601 times. */
export const SessionSummarySchema = z.looseObject({
  resource: z.string(),
  provider: z.string(),
  title: z.string(),
  /** `SessionStatus` bitset; `1` = Idle. */
  status: z.number().int(),
  createdAt: z.string(),
  modifiedAt: z.string(),
});
export type SessionSummary = z.infer<typeof SessionSummarySchema>;

// ─── official MCP server state (bridge: `host/mcp/`) ─────────────────────────

/**
 * `McpAuthRequiredReason` (`channels-session/state.ts` @043bc34), an open enum: `required` (401, no token yet),
 * `expired` (401 for a token that had been accepted: expired or revoked), `insufficientScope` (403 step-up).
 */
export const McpAuthRequiredReasonSchema = z.string();
export type McpAuthRequiredReason = "required" | "expired" | "insufficientScope";

/**
 * `McpOAuthClient`. This host sends only `clientId`: a `clientSecret` in session state would reach every client
 * subscribed to the session, so it would be no secret (the bridge refuses to be configured with one).
 */
export const McpOAuthClientSchema = z.looseObject({
  clientId: z.string().min(1),
  clientSecret: z.string().optional(),
});

/** `McpAuthRequirement`: the challenge a client answers with `authenticate`; never a token. */
export const McpAuthRequirementSchema = z.looseObject({
  reason: McpAuthRequiredReasonSchema,
  oauthClient: McpOAuthClientSchema.optional(),
  resource: ProtectedResourceMetadataSchema,
  requiredScopes: z.array(z.string()).optional(),
  description: z.string().optional(),
});
export type McpAuthRequirement = z.infer<typeof McpAuthRequirementSchema>;

/** `ErrorInfo` as the `error` state carries it. */
export const AhpErrorInfoSchema = z.looseObject({
  errorType: z.string(),
  message: z.string(),
});

/** `McpServerState`, discriminated by `kind` (`McpServerStatus`). */
export const McpServerStateSchema = z.union([
  z.looseObject({ kind: z.literal("starting") }),
  z.looseObject({ kind: z.literal("ready") }),
  McpAuthRequirementSchema.extend({ kind: z.literal("authRequired") }),
  z.looseObject({ kind: z.literal("error"), error: AhpErrorInfoSchema }),
  z.looseObject({ kind: z.literal("stopped") }),
]);
export type McpServerState = z.infer<typeof McpServerStateSchema>;

/** A bare top-level `McpServerCustomization` in `SessionState.customizations` (host-originated). */
export const McpServerCustomizationSchema = z.looseObject({
  type: z.literal("mcpServer"),
  id: z.string(),
  uri: z.string(),
  name: z.string(),
  state: McpServerStateSchema,
});
export type McpServerCustomization = z.infer<typeof McpServerCustomizationSchema>;

/**
 * `session/customizationUpdated` (upsert by `customization.id`), `session/mcpServerStateChanged` (state only) and
 * `session/customizationRemoved` (by id: a server the host author removed).
 */
export const SessionMcpActionSchema = z.union([
  z.looseObject({
    type: z.literal("session/customizationUpdated"),
    customization: McpServerCustomizationSchema,
  }),
  z.looseObject({ type: z.literal("session/customizationRemoved"), id: z.string() }),
  z.looseObject({
    type: z.literal("session/mcpServerStateChanged"),
    id: z.string(),
    state: McpServerStateSchema,
  }),
]);
export type SessionMcpAction = z.infer<typeof SessionMcpActionSchema>;

/** The server → client `action` notification's params (`ActionEnvelope`, `common/actions.ts`); `origin` absent = host. */
export const ActionEnvelopeSchema = z.looseObject({
  channel: z.string(),
  action: z.looseObject({ type: z.string() }),
  serverSeq: z.number().int(),
});
export type ActionEnvelope = z.infer<typeof ActionEnvelopeSchema>;
