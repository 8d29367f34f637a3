/**
 * ACP wire conventions shared by our agent kit and our client journey, declared once. Protocol shapes come from
 * `@agentclientprotocol/sdk`; this file holds only what the SDK does not: the draft `getAuthState` method (seed
 * RFD), our underscore-prefixed login-prompt notification (ACP extensibility rules), and the API-key `_meta` key
 * the ecosystem uses (codex-acp, gemini-cli).
 */

import { z } from "zod";

/** JSON-RPC error code of `auth_required` (ACP `ErrorCode` −32000). */
export const AUTH_REQUIRED = -32000;

/** The draft RFD's state query (agent-client-protocol PR #658), answered for clients built on it. */
export const GET_AUTH_STATE = "getAuthState";

/**
 * Sent by the agent while a device or browser login waits for the person, when the client did not advertise
 * URL-mode elicitation. Underscore-prefixed: an extension, never required by a client.
 */
export const LOGIN_PROMPT = "_agentauth/login_prompt";

/**
 * `agentCapabilities._meta[AGENTAUTH_META]` (v2: `capabilities._meta`): the agent is built on the agentauth kit, so
 * its `agent` methods reach the person by themselves (elicitation or LOGIN_PROMPT). A hint, never required.
 */
export const AGENTAUTH_META = "agentauth";

/**
 * `authenticate` params `_meta[API_KEY_META]` carries an API key: `{apiKey}` (what agentauth's client sends an agent on
 * the kit) or a plain string (the only shape gemini-cli reads, so what clients send; the kit reads both).
 */
export const API_KEY_META = "api-key";

export const AuthMethodStateSchema = z.object({
  authMethodId: z.string(),
  authenticated: z.boolean(),
  message: z.string().nullish(),
  _meta: z.record(z.string(), z.unknown()).nullish(),
});

/** `getAuthState` result, exactly as the seed RFD declares it. */
export const GetAuthStateResponseSchema = z.object({
  authenticated: z.boolean(),
  authMethods: z.array(AuthMethodStateSchema).nullish(),
  message: z.string().nullish(),
  _meta: z.record(z.string(), z.unknown()).nullish(),
});
export type GetAuthStateResponse = z.infer<typeof GetAuthStateResponseSchema>;

export const LoginPromptSchema = z.object({
  methodId: z.string(),
  /** Where the person goes: the verification URL (device flow) or the authorization URL (browser flow). */
  url: z.string().url(),
  /** The device flow's user code, when there is one (not a secret: the person types it). */
  userCode: z.string().optional(),
  expiresInSeconds: z.number().int().positive().optional(),
  message: z.string(),
});
export type LoginPrompt = z.infer<typeof LoginPromptSchema>;

const ApiKeySchema = z.string().min(1).max(4096);
export const ApiKeyMetaSchema = z.union([
  z.object({ apiKey: ApiKeySchema }),
  ApiKeySchema.transform((apiKey) => ({ apiKey })),
]);

/**
 * `_meta` as the SDK's generated schema reads it: an object, or dropped when it is anything else (the schema's
 * `defaultOnError`), so a malformed `_meta` never fails a request.
 */
const MetaSchema = z.record(z.string(), z.unknown()).nullish().catch(undefined);

/** `authenticate` (v1) and `auth/login` (v2) params, as the SDK declares them. */
export const AuthenticateParamsSchema = z.object({ methodId: z.string(), _meta: MetaSchema });

/** `logout`, `auth/logout`, `auth/status` params: only `_meta`. */
export const MetaOnlyParamsSchema = z.object({ _meta: MetaSchema });

/** `auth/status` states the SDK's unstable schema names; anything else reads as `unknown` (SDK rule). */
export const KNOWN_AUTH_STATES = [
  "authenticated",
  "unauthenticated",
  "not_required",
  "unknown",
] as const;
export type KnownAuthState = (typeof KNOWN_AUTH_STATES)[number];

export function normalizeAuthState(state: unknown): KnownAuthState {
  return (KNOWN_AUTH_STATES as readonly unknown[]).includes(state)
    ? (state as KnownAuthState)
    : "unknown";
}
