/** The ACP client journey (`agentauth/acp`, client side): sign in to any ACP agent an editor launches over stdio. */

export type { AgentExit, AgentStderr } from "./agent-process.ts";
export type { AgentProfile } from "./agent-profile.ts";
export { agentDisplayName, readInitializeResponse } from "./agent-profile.ts";
export { AGENT_QUIRKS, type AgentQuirks, type MethodQuirk } from "./agent-quirks.ts";
export { AcpAuthClient, connectAgent } from "./auth-client.ts";
export {
  type AdvertisedAuthMethod,
  type AuthMethodType,
  type EnvVarSpec,
  type LegacyTerminal,
  readAuthMethods,
} from "./auth-methods.ts";
export {
  type AuthAccount,
  type AuthStatus,
  AuthStatusCache,
  type AuthStatusHint,
  type AuthStatusSource,
  readAuthStatus,
  readGetAuthState,
  readStatusHint,
} from "./auth-status.ts";
export {
  AcpAgentExitedError,
  AcpAgentPromptedError,
  AcpAuthRequiredError,
  AcpCancelledError,
  AcpClosedError,
  AcpCommandNotConfirmedError,
  AcpEnvVarsMissingError,
  AcpInitializeError,
  AcpLoginError,
  AcpLogoutUnsupportedError,
  AcpMethodNotAdvertisedError,
  AcpMethodUnsupportedError,
  AcpProtocolError,
  AcpRequestError,
  AcpSignInUnknownError,
  AcpSpawnError,
  AcpTerminalLoginError,
  AcpTimeoutError,
} from "./errors.ts";
export type { LoginPlan } from "./login-plan.ts";
export { type CallerAbilities, chooseAuthMethod, terminalNeedsConsent } from "./method-choice.ts";
export { type KeyRoute, type MethodNeeds, methodNeeds, needsMet } from "./method-needs.ts";
export type {
  ConnectAgentOptions,
  EnvVarRequest,
  LoginOptions,
  LoginOutcome,
  LoginResult,
  RequestOptions,
} from "./options.ts";
export { killAllGroups } from "./process-group.ts";
export { type ClientIdentity, initializeParams, type ProtocolVersion } from "./protocol.ts";
export {
  commandLine,
  runInheritedTerminal,
  type TerminalInvocation,
  type TerminalResult,
  type TerminalRunner,
  terminalInvocation,
} from "./terminal.ts";
export { isOpenableUrl, type UrlPrompt } from "./url-prompt.ts";
