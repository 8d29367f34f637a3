/** The tool server's public configuration types: operations, their handlers' context, OAuth providers. */

import type { z } from "zod";
import type { Logger } from "../../core/log.ts";
import type { Secret } from "../../core/secret.ts";
import type {
  DiscoveryOptions,
  OAuthClient,
  PendingAuthorization,
  PendingStore,
  Provider,
} from "../../oauth/index.ts";
import type { CredentialStore } from "../../vault/index.ts";
import type { InvocationAuth } from "../invocation-auth.ts";
import type { AnnotationsSchema, DisplayItemSchema } from "../wire.ts";
import type { DeliveryOptions } from "./delivery.ts";
import type { ReplayLedger } from "./replay-ledger.ts";
import type { ToolStateStore } from "./state.ts";
import type { TakeoverOptions } from "./takeover.ts";

export type Annotations = z.infer<typeof AnnotationsSchema>;
export type DisplayItem = z.infer<typeof DisplayItemSchema>;

/** What a handler receives. Field names map to the invocation: `id` is its `id`, `callId` its `call_id`. */
export interface OperationContext {
  operation: string;
  arguments: Record<string, unknown>;
  id: string;
  callId: string | null;
  groupId: string;
  threadAncestors: string[];
  userId: string | null;
  /** Present exactly when the operation `requiresAuth`: a fresh token for `userId` at that provider. */
  accessToken?: Secret;
  /**
   * Aborted when the runtime cancels the call or closes its thread (nothing is sent after that), or when the
   * operation's deadline (`operationTimeoutMs`) passes (an error result is sent). Pass it on to I/O.
   */
  signal: AbortSignal;
  logger: Logger;
}

/** A handler's answer: the `tool_result` text, optionally with UI hints (`display_as`). */
export type OperationOutput = string | { text: string; display_as?: DisplayItem[] };

export interface OperationDefinition {
  /** 1–128 characters, `[A-Za-z0-9_-]` recommended; unique in the toolset. */
  name: string;
  description: string;
  /** JSON Schema (draft 2020-12) for `arguments`; compiled once at startup, an invalid one is a startup error. */
  inputSchema: Record<string, unknown>;
  annotations?: Annotations;
  displayScript?: string;
  /** The provider id (a key of `providers`) whose token the handler needs; advertised as `annotations.requiresAuth`. */
  requiresAuth?: string;
  /**
   * Does the work. Throw `OperationError` for a failure the user should read, `TokenRejectedError` when the
   * provider refused the token; anything else becomes a generic error result (and is logged).
   */
  /** May be async or return a plain value; a throw (synchronous or not) ends the call with an error result. */
  handler: (ctx: OperationContext) => OperationOutput | Promise<OperationOutput>;
}

/**
 * One entry of `providers`: a preset from `agentauth/providers` (`github({ clientId, clientSecret })`,
 * `slack(...)`; its endpoints, quirks, account and revocation come from the provider's documentation, its scope
 * from the preset's `scope` option or default) or a discoverable authorization server with a client.
 */
export type ToolProviderEntry = Provider | OAuthProviderConfig;

/** A discoverable authorization server (RFC 8414 / OpenID Connect Discovery) and the tool's client there. */
export interface OAuthProviderConfig {
  /** The authorization server's issuer URL (HTTPS, or HTTP on loopback only). */
  issuer: string;
  /** Registered with the redirect URI `${publicBaseUrl}/oauth/callback`. */
  client: OAuthClient;
  /** Request the minimum the operations need (RAP §OAuth: SHOULD use minimum scopes). */
  scope?: string;
  /** RFC 8707 resource indicator of the provider's API; part of the vault key ("" when absent). */
  resource?: string;
  /** Shown to the person in error messages and pages; default: the provider id. */
  displayName?: string;
  /** Extra authorization request parameters (`prompt`, …); cannot override the protected ones. */
  extraParams?: Record<string, string>;
  /**
   * Reads who signed in (e.g. the API's /me) right after the code exchange, for the success page, the log and the
   * vault record's display fields; ID token claims are used without it. Failures are logged and ignored.
   */
  account?: (
    accessToken: Secret,
  ) => Promise<{ subject?: string; name?: string; email?: string } | undefined>;
  /** Never set: its absence tells this shape from a preset (which has a `ref`), so inline hooks stay typed. */
  ref?: undefined;
}

/** A pending authorization, as kept in the `PendingStore` under its `state`: serialisable apart from the verifier. */
export interface PendingCallAuthorization {
  authorization: PendingAuthorization;
  call: PendingCall;
  /**
   * Hex SHA-256 of the cookie Continue gives the consenting browser (browser-binding.ts): the redirect is refused
   * from any browser that does not send it. Absent only in entries written before it existed, which are refused.
   */
  browser?: string;
}

/** Everything needed to run the call again once the person has authorized. */
export interface PendingCall {
  /** Random per attempt: a late redirect for an attempt that timed out or was cancelled finds nothing. */
  attempt: string;
  provider: string;
  operation: string;
  arguments: Record<string, unknown>;
  callbackUrl: string;
  groupId: string;
  id: string;
  callId: string | null;
  threadAncestors: string[];
  userId: string;
}

export interface ToolServerOptions {
  toolset: { name: string; description?: string };
  operations: OperationDefinition[];
  /**
   * The OAuth providers operations name in `requiresAuth`: `{ github: github({ clientId, clientSecret }) }` (a
   * preset), or `{ demo: { issuer, client } }` (discovery). Register `${publicBaseUrl}/oauth/callback` with each.
   */
  providers?: Record<string, ToolProviderEntry>;
  /** Where tokens are kept, keyed {subject: user_id, issuer, resource}. Required when an operation needs OAuth. */
  store?: CredentialStore;
  /**
   * The URL the runtime and browsers reach this server at (no trailing slash needed). Default: the `listen()`
   * address. The toolset endpoint is `${base}/invoke`, the OAuth redirect URI `${base}/oauth/callback`.
   */
  publicBaseUrl?: string;
  /** How long an `oauth` message's link stays valid; after it the call ends with an error result. Default 10 min. */
  authorizationTimeoutMs?: number;
  /**
   * How long one run of an operation's handler may take (default 5 minutes). Past it the handler's `signal`
   * aborts, the call ends with an error `tool_result`, its work slot is freed, and a late answer is dropped.
   */
  operationTimeoutMs?: number;
  /** Fine-tuning of callback delivery (backoff, per-attempt timeout, extra headers). */
  delivery?: DeliveryOptions;
  /**
   * How long a message (result, error, oauth) is retried while the runtime is unreachable, answers 5xx, 408 or 429.
   * Default 10 minutes; waits grow to at most 30 s apart, with jitter. Same as `delivery.maxTotalMs`.
   */
  deliveryRetryTotalMs?: number;
  /**
   * How many messages may wait to be retried at once (default 1,000). When full, the one that has waited longest
   * is dropped and logged (`rap.callback.failed`, reason `dropped`): memory stays bounded during a long outage.
   */
  maxPendingDeliveries?: number;
  /** Which callback URLs the server will POST to. Default: https, or http on loopback. */
  callbackUrlAllowed?: (url: URL) => boolean;
  /** Calls running or awaiting authorization at once; more are refused with an error result. Default 1,000. */
  maxActiveCalls?: number;
  /**
   * How many accepted calls run at once after their acknowledgement (default 16); the rest wait in order. Lower
   * favours acknowledgement latency under bursts (bench/rap.bench.ts), higher favours slow, I/O-bound operations.
   */
  workConcurrency?: number;
  /** Where pending authorizations live; default an in-memory store expiring after `authorizationTimeoutMs`. */
  pending?: PendingStore<PendingCallAuthorization>;
  /**
   * Durable state shared by every instance of this tool (`openPostgresToolState`): pending authorizations (any
   * instance finishes a sign-in another started, and exactly one can use a given `state`) and an outbox of
   * callbacks (written before the first attempt, delivered after a restart). Takes precedence over `pending`.
   * The server does not close it: its owner does, after `close()`.
   */
  state?: ToolStateStore;
  /**
   * With `state`: how often the outbox is polled for due messages (default 1 s), how long a claim on a message lasts
   * before another instance may deliver it (default the attempt timeout + 20 s; it must be longer than the attempt
   * timeout, or a RangeError is thrown, since a claim lapsing mid-attempt lets two instances send one message at
   * once), and how many are claimed at once.
   */
  outboxTuning?: { pollMs?: number; claimMs?: number; batch?: number };
  /**
   * With `state`: how often this instance looks for instances the database says are gone, to end their running calls
   * with an error result and release their claims (default 1 s), and how long after a database start a missing
   * instance is still given to come back (default 10 s, by the database's clock).
   */
  takeover?: TakeoverOptions;
  discovery?: DiscoveryOptions;
  logger?: Logger;
  /**
   * How the runtime proves POST /invoke, /close_thread and /cancel_tool_call are its own (see
   * src/rap/invocation-auth.ts). Without it anyone who reaches the port can invoke; `rap tool serve` uses HMAC.
   */
  invocationAuth?: InvocationAuth;
  /**
   * Where HMAC-signed invocations already accepted are remembered, so a replay inside the window is refused:
   * `openSqliteReplayLedger(path)` (a file: survives restarts, shared by the tool processes of one machine), or the
   * shared `state`'s (PostgreSQL: every instance), which is used when this is absent. Without either, this process's
   * memory only (a warning is logged): a request captured before a restart, or sent to another instance, runs again.
   * The server does not close it: its owner does, after `close()`.
   */
  replay?: ReplayLedger;
  /**
   * Extra `Host` header values (`name:port`) accepted. On a loopback listener only 127.0.0.1:PORT,
   * localhost:PORT, [::1]:PORT and the publicBaseUrl host are accepted otherwise (DNS rebinding); given here, the
   * check also applies to a server not started by `listen()`.
   */
  allowedHosts?: string[];
}
