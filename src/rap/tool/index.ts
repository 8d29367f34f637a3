/** The RAP tool side: a tool server from a set of operations, with OAuth for the operations that need it. */

export { DEFAULT_OPERATION_TIMEOUT_MS } from "./deadline.ts";
export {
  DEFAULT_DELIVERY,
  type DeliveryOptions,
  type DeliveryOutcome,
  deliverCallback,
} from "./delivery.ts";
export { OperationError, TokenRejectedError, ToolConfigError } from "./errors.ts";
export { secureCallbackUrl } from "./invocation.ts";
export type {
  Annotations,
  DisplayItem,
  OAuthProviderConfig,
  OperationContext,
  OperationDefinition,
  OperationOutput,
  PendingCall,
  PendingCallAuthorization,
  ToolProviderEntry,
  ToolServerOptions,
} from "./options.ts";
export {
  openPostgresToolState,
  type PostgresToolStateOptions,
} from "./postgres/state.ts";
export { memoryReplayLedger, type ReplayLedger } from "./replay-ledger.ts";
export {
  createRetryPool,
  DEFAULT_MAX_PENDING_DELIVERIES,
  type RetryPool,
} from "./retry-pool.ts";
export {
  createToolServer,
  DEFAULT_AUTHORIZATION_TIMEOUT_MS,
  INVOKE_PATH,
  type ListeningToolServer,
  OAUTH_CALLBACK_PATH,
  type ToolServer,
} from "./server.ts";
export {
  DEFAULT_REPLAY_LEDGER_FILE,
  openSqliteReplayLedger,
  ReplayLedgerError,
} from "./sqlite-replay.ts";
export type {
  CallbackOutbox,
  CallLedger,
  LedgerCall,
  OutboxMessage,
  SharedSetting,
  ToolStateStore,
} from "./state.ts";
export type { TakeoverOptions } from "./takeover.ts";
