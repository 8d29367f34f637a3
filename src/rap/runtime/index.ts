/** The RAP runtime side: discover toolsets, invoke operations, receive callbacks durably. See docs/rap.md. */

export {
  DB_FILE,
  DEFAULT_CALLBACK_TTL_MS,
  type InvokeOutcome,
  type InvokeRequest,
  KEY_FILE,
  type Listening,
  type RapRuntime,
  type RuntimeOptions,
  type SettledCall,
  type ThreadHistory,
} from "./api.ts";
export {
  type CallClaims,
  callbackUrl,
  signCallToken,
  type TokenCheck,
  verifyCallToken,
} from "./capability.ts";
export type { PreparedCall, PrepareRequest, ToolInfo } from "./catalog.ts";
export {
  checkToolset,
  type Discovery,
  discoverToolsets,
  fetchToolset,
  indexTools,
  type LoadedTool,
  type LoadedToolset,
  type NameClash,
} from "./discovery.ts";
export {
  CallbackKeyError,
  InvocationRefusedError,
  RuntimeStoreError,
  ThreadBusyError,
  ToolsetDiscoveryError,
  WaitError,
} from "./errors.ts";
export type {
  AuthorizationRequiredEvent,
  RequiresAuthEvent,
  RuntimeHooks,
  StatusEvent,
  SubscriptionEventEvent,
  ToolResultEvent,
  UserChoiceEvent,
  ViewUpdateEvent,
} from "./hooks.ts";
export {
  callDeliveryKey,
  IDEMPOTENCY_KEY_HEADER,
  MAX_IDEMPOTENCY_KEY_LENGTH,
  parseIdempotencyKey,
} from "./idempotency-key.ts";
export { DEFAULT_RETRY, type RetryPolicy } from "./invoke.ts";
export { MemoryRuntimeStore } from "./memory-store.ts";
export { PostgresRuntimeStore, type PostgresRuntimeStoreOptions } from "./postgres-store.ts";
export { createRuntime } from "./runtime.ts";
export { SerialQueue } from "./serial-queue.ts";
export { SqliteRuntimeStore } from "./sqlite-store.ts";
export { keyFingerprint, type StoreKind } from "./storage.ts";
export type {
  CallRecord,
  CallResult,
  CallStatus,
  NewCall,
  NewThreadEntry,
  RuntimeStore,
  SubscriptionState,
  ThreadEntry,
  Transition,
} from "./store.ts";
export { DEFAULT_CALL_TIMEOUT_MS } from "./timeouts.ts";
export type { ToolsetConfig } from "./toolset-config.ts";
