/**
 * What differs between ACP v1 and the v2 draft on the client's auth path, in one table: method names and the
 * `initialize` request. Everything else (`methodId` params, `auth/status`, elicitation) is spelled the same. Pure.
 */

export type ProtocolVersion = 1 | 2;

export const AUTH_METHODS = {
  1: { login: "authenticate", logout: "logout", status: "auth/status" },
  2: { login: "auth/login", logout: "auth/logout", status: "auth/status" },
} as const;

export interface ClientIdentity {
  name: string;
  version: string;
  title?: string;
}

export const DEFAULT_CLIENT_INFO: ClientIdentity = { name: "agentauth", version: "0.1.0" };

export interface AdvertisedClientAbilities {
  runTerminal: boolean;
  showUrl: boolean;
}

/**
 * The `initialize` params. v1: `clientCapabilities.auth.terminal` is a boolean and `clientInfo` optional. v2:
 * `capabilities.auth.terminal` is an object (`{}` = supported), `info` is required. Both: URL-mode elicitation is
 * `elicitation.url: {}`. A capability we cannot honour is omitted, never sent as false/null noise.
 */
export function initializeParams(
  version: ProtocolVersion,
  abilities: AdvertisedClientAbilities,
  info: ClientIdentity,
): Record<string, unknown> {
  const elicitation = abilities.showUrl ? { elicitation: { url: {} } } : {};
  if (version === 1) {
    // `_meta["terminal-auth"]`: the legacy opt-in; claude-code-acp 0.16 and opencode describe their terminal login
    // only when a client sends it (issue 8 §3.7).
    const legacy = abilities.runTerminal ? { _meta: { "terminal-auth": true } } : {};
    return {
      protocolVersion: 1,
      clientCapabilities: {
        auth: { terminal: abilities.runTerminal },
        ...elicitation,
        ...legacy,
      },
      clientInfo: info,
    };
  }
  return {
    protocolVersion: 2,
    info,
    capabilities: { ...(abilities.runTerminal ? { auth: { terminal: {} } } : {}), ...elicitation },
  };
}
