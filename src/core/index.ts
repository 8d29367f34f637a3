/** Shared building blocks: typed errors, redacted secrets, structured logs, the agentauth home folder. */

export { type PeerTextOptions, peerText, peerUrl } from "./display.ts";
export { AgentAuthError } from "./errors.ts";
export { agentauthHome, ensureHome } from "./home.ts";
export {
  createLogger,
  type LogFields,
  type Logger,
  type LogLevel,
  redact,
  silentLogger,
} from "./log.ts";
export { NodeVersionError, nodeSupported, REQUIRED_NODE } from "./node-version.ts";
export { REDACTED, Secret, secret } from "./secret.ts";
