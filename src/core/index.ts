/** Shared building blocks: typed errors, redacted secrets, structured logs, the agentauth home folder. */
export { AgentAuthError } from "./errors.ts";
export { type PeerTextOptions, peerText, peerUrl } from "./display.ts";
export { agentauthHome, ensureHome } from "./home.ts";
export {
  createLogger,
  type LogFields,
  type Logger,
  type LogLevel,
  redact,
  silentLogger,
} from "./log.ts";
export { REDACTED, Secret, secret } from "./secret.ts";
