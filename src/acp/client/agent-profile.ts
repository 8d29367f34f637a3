/**
 * What an `initialize` answer tells the client about authentication, for ACP v1 and v2 alike: who the agent is,
 * which methods it advertises, and which auth methods it may be called with (status, logout, the draft's
 * `getAuthState`). Pure.
 */

import { basename } from "node:path";
import { peerText } from "../../core/display.ts";
import { methodQuirk } from "./agent-quirks.ts";
import { type AdvertisedAuthMethod, isRecord, readAuthMethods } from "./auth-methods.ts";

export interface AgentProfile {
  protocolVersion: number;
  /** v1 `agentInfo` / v2 `info`; absent when the agent did not say (optional in v1). */
  agent?: { name: string; version: string; title?: string };
  authMethods: AdvertisedAuthMethod[];
  capabilities: {
    /** `auth/status` may be called (v1 `agentCapabilities.auth.status`, v2 `capabilities.auth.status`). */
    status: boolean;
    /** `logout` / `auth/logout` may be called: v1 `agentCapabilities.auth.logout` non-null, v2 non-empty `authMethods`. */
    logout: boolean;
    /** The draft RFD's `getAuthState` was advertised (`getAuthState: true`, also read from `_meta`). */
    getAuthState: boolean;
    /** The agent says it is built on agentauth (`_meta.agentauth`): its `agent` methods reach the person by themselves. */
    agentauth: boolean;
    /** `_meta.authStatus` (claude-agent-acp): the agent pushes its state as `_auth/status_update` after initialize. */
    statusPush: boolean;
    /** `session/close` may be called (v1 `agentCapabilities.sessionCapabilities.close`, v2 `capabilities.session`). */
    sessionClose: boolean;
  };
}

export function readInitializeResponse(raw: unknown, version: 1 | 2): AgentProfile {
  const response = isRecord(raw) ? raw : {};
  const caps = record(version === 2 ? response.capabilities : response.agentCapabilities);
  const auth = record(caps.auth);
  const meta = record(caps._meta);
  const rawMethods = response.authMethods;
  const agent = readImplementation(version === 2 ? response.info : response.agentInfo);
  // v1: `sessionCapabilities.close`; v2: any `capabilities.session` includes `session/close` in its baseline.
  const sessionClose =
    version === 2 ? caps.session != null : record(caps.sessionCapabilities).close != null;
  return {
    protocolVersion:
      typeof response.protocolVersion === "number" ? response.protocolVersion : version,
    agent,
    authMethods: readAuthMethods(rawMethods, version).map((m) => withoutServerAsLogin(agent, m)),
    capabilities: {
      // Omitted or `null` means unsupported; `{}` (SDK schema) or `true` (the RFD draft's spelling) means supported.
      status: auth.status != null && auth.status !== false,
      // v2: "Supplying one or more methods means the agent MUST support both auth/login and auth/logout"; there is
      // no logout marker. v1: "Clients MUST NOT call logout unless agentCapabilities.auth.logout is advertised".
      logout:
        version === 2
          ? Array.isArray(rawMethods) && rawMethods.length > 0
          : auth.logout != null && auth.logout !== false,
      getAuthState: caps.getAuthState === true || meta.getAuthState === true,
      agentauth: meta.agentauth != null && meta.agentauth !== false,
      statusPush: meta.authStatus != null && meta.authStatus !== false,
      sessionClose,
    },
  };
}

/**
 * qwen-code's `openai` carries `_meta: {type: "terminal", args: ["--auth-type=openai"]}`, which starts its ACP
 * server again (agent-quirks.ts): such a descriptor is dropped, so the method is what it is on the wire, `agent`.
 */
function withoutServerAsLogin(
  agent: AgentProfile["agent"],
  method: AdvertisedAuthMethod,
): AdvertisedAuthMethod {
  if (!method.terminal || !methodQuirk(agent?.name, method.id)?.terminalIsServer) return method;
  const { terminal: _dropped, ...rest } = method;
  return rest;
}

/** The agent's name for messages: `title`, else `name`, else the command's basename; sanitised. */
export function agentDisplayName(profile: AgentProfile | undefined, command: string): string {
  const info = profile?.agent;
  return peerText(info?.title || info?.name || basename(command) || "the agent", { max: 80 });
}

function readImplementation(raw: unknown): AgentProfile["agent"] {
  if (!isRecord(raw) || typeof raw.name !== "string") return undefined;
  return {
    name: raw.name,
    version: typeof raw.version === "string" ? raw.version : "",
    ...(typeof raw.title === "string" ? { title: raw.title } : {}),
  };
}

function record(value: unknown): Record<string, unknown> {
  return isRecord(value) ? value : {};
}
