/**
 * The RAP runtime's public contract: what `createRuntime` takes (RuntimeOptions) and what it returns (RapRuntime),
 * with the shapes its methods exchange. The behaviour is in runtime.ts.
 */

import type { IncomingMessage, ServerResponse } from "node:http";
import type { Logger } from "../../core/log.ts";
import type { Secret } from "../../core/secret.ts";
import type { PreparedCall, PrepareRequest, ToolInfo } from "./catalog.ts";
import type { NameClash } from "./discovery.ts";
import type { RuntimeHooks } from "./hooks.ts";
import type { RetryPolicy } from "./invoke.ts";
import type { CallRecord, CallResult, RuntimeStore, ThreadEntry } from "./store.ts";
import type { ToolsetConfig } from "./toolset-config.ts";

/** 7 days: callback URLs must outlive subscriptions, which continue after the call's own result. */
export const DEFAULT_CALLBACK_TTL_MS = 7 * 24 * 3_600_000;
export const DB_FILE = "rap-runtime.db";
export const KEY_FILE = "rap-runtime.key";

export interface RuntimeOptions {
  /** Tool server base URLs; each serves `{base}/.well-known/rap-toolset`. Sent no invocation authentication. */
  toolsetUrls?: readonly string[];
  /** Tool servers with the invocation authentication each expects (bearer or HMAC-SHA256); see ToolsetConfig. */
  toolsets?: readonly ToolsetConfig[];
  /**
   * A store of your own (e.g. `new MemoryRuntimeStore()` in tests). Default: PostgreSQL at `databaseUrl` (or
   * AGENTAUTH_DATABASE_URL), else SQLite at `dbPath`.
   */
  store?: RuntimeStore;
  /** Default `<AGENTAUTH_HOME>/rap-runtime.db`. */
  dbPath?: string;
  /**
   * A PostgreSQL URL (`postgres://…`): the store several runtime instances share. Default: AGENTAUTH_DATABASE_URL
   * from `env` when neither `store` nor `dbPath` is given. Every instance must use the same callback key.
   */
  databaseUrl?: string;
  /**
   * The key that signs callback capabilities (≥ 32 bytes). Default: `keyPath`, created owner-only on first use.
   * Keep it with the database: a new key invalidates every callback URL already handed to tools.
   */
  secretKey?: Uint8Array | Secret;
  /**
   * Default: `rap-runtime.key` next to the SQLite database, or in AGENTAUTH_HOME with PostgreSQL (every instance
   * must then be given the same key). With a custom store and no key, a random one per process.
   */
  keyPath?: string;
  /**
   * The URL tools reach this runtime at (callback URLs are `{publicBaseUrl}/callback/{token}`). Default: the
   * address `listen()` binds. Set it when the runtime sits behind a proxy, or must keep its URLs across restarts
   * on another port.
   */
  publicBaseUrl?: string;
  /** How long an open call waits for its result (OAuth detour included). Default 15 minutes. */
  callTimeoutMs?: number;
  /** Lifetime of a callback URL (at least `callTimeoutMs`). Default 7 days, for subscriptions. */
  callbackTtlMs?: number;
  hooks?: RuntimeHooks;
  logger?: Logger;
  /** Accept plain http to non-loopback tool servers and auth URLs (a trusted private network only). */
  allowInsecureHttp?: boolean;
  retry?: Partial<RetryPolicy>;
  env?: NodeJS.ProcessEnv;
  fetch?: typeof fetch;
  now?: () => number;
}

export interface InvokeRequest extends PrepareRequest {
  groupId: string;
  /** RAP `id`; usually the model's tool-call id. Default: a fresh `call_<uuid>`. */
  id?: string;
  /** RAP `call_id`: an optional secondary id the tool echoes. */
  callId?: string | null;
  userId?: string | null;
  threadAncestors?: string[];
}

export interface InvokeOutcome {
  groupId: string;
  id: string;
  /** True when the tool acknowledged with 200; otherwise the call already has its error result. */
  accepted: boolean;
  requiresAuth?: string;
}

export type SettledCall = CallRecord & { result: CallResult };

export interface ThreadHistory {
  groupId: string;
  calls: CallRecord[];
  entries: ThreadEntry[];
  views: Record<string, unknown>;
}

export interface Listening {
  /** The address bound (`http://127.0.0.1:PORT`). */
  url: string;
  port: number;
  close(): Promise<void>;
}

export interface RapRuntime {
  /** Where callback URLs point; undefined until `listen()` unless configured. */
  readonly publicBaseUrl: string | undefined;
  /** Which store holds the calls: its kind and a printable label (a path, or the URL without its password). */
  readonly storage: { kind: "custom" | "sqlite" | "postgres"; label: string };
  listTools(): ToolInfo[];
  toolsets(): { name: string; baseUrl: string; endpoint: string; tools: string[] }[];
  /** Toolsets that failed to load and names exposed by no one because of a clash. */
  problems(): {
    failures: { baseUrl: string; code: string; message: string }[];
    clashes: NameClash[];
  };
  /** Fetches every toolset again (a new session SHOULD); a failing one keeps its cached definition. */
  refreshToolsets(): Promise<void>;
  /** The local checks `invoke` makes, without sending: throws InvocationRefusedError, flags `requiresAuth`. */
  prepare(request: PrepareRequest): PreparedCall;
  invoke(request: InvokeRequest): Promise<InvokeOutcome>;
  /** Resolves with the call once it has its terminal result (the tool's or a synthetic error). */
  waitForResult(
    groupId: string,
    id: string,
    options?: { signal?: AbortSignal },
  ): Promise<SettledCall>;
  getCall(groupId: string, id: string): Promise<CallRecord | undefined>;
  thread(groupId: string): Promise<ThreadHistory>;
  /** Ends the call locally (synthetic error result, subscription dropped) and tells its tool server, once. */
  cancelCall(groupId: string, id: string): Promise<CallRecord | undefined>;
  /** Cancels the thread's open calls locally and notifies every tool server (best effort, no retry). */
  closeThread(groupId: string): Promise<void>;
  /** Times out overdue calls now (it also happens on start and on a timer). Returns how many. */
  sweepTimeouts(): Promise<number>;
  /** The callback receiver, to mount in a server of your own at `publicBaseUrl`'s path. */
  handleCallback(req: IncomingMessage, res: ServerResponse): void;
  listen(options?: { port?: number; host?: string }): Promise<Listening>;
  close(): Promise<void>;
}
