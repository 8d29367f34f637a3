/** The console: a local web page over the vault and a RAP runtime's pending authorizations (docs/console.md). */

export { type ActivityInput, ActivityLog, DEFAULT_ACTIVITY_CAPACITY } from "./activity.ts";
export { type ConnectTarget, type DisconnectOutcome, disconnect } from "./connect.ts";
export { ConsoleError, type ConsoleStatus } from "./errors.ts";
export {
  CONSOLE_LINK_FILE,
  ConsoleLinkError,
  linkFileCandidates,
  requestLoginLink,
} from "./link-file.ts";
export { type ConsoleNames, providerName, resourceName } from "./names.ts";
export { hooksFor, PendingBoard, type PendingInput, safeLink } from "./pending.ts";
export { type ConsoleOptions, type RunningConsole, startConsole } from "./server.ts";
export type { ConsolePanel } from "./state.ts";
export { diffCredentials, type VaultChange, type VaultWatch, watchVault } from "./vault-watch.ts";
export type * from "./wire.ts";
