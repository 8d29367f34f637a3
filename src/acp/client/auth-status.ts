/**
 * Reading an agent's authentication state from every shape it comes in, and the cached state that
 * `auth/status_update` notifications keep current. Pure.
 *
 * Shapes: `auth/status` (SDK 2.4.0 unstable schema: `{state, accounts?}`), the same method answering the RFD draft's
 * `{authenticated, message?}` (agent-client-protocol PR #658, which agents still implement), the seed RFD's
 * `getAuthState`, and the vendor notification `_auth/status_update` (`{authStatus: {kind, label}}`, claude-agent-acp
 * #1080, codex-acp #467), which is only ever a hint.
 */

import { peerText } from "../../core/display.ts";
import {
  GetAuthStateResponseSchema,
  KNOWN_AUTH_STATES,
  type KnownAuthState,
  normalizeAuthState,
} from "../wire.ts";
import { isRecord } from "./auth-methods.ts";

/** Which mechanism gave the state. */
export type AuthStatusSource =
  | "auth/status"
  | "getAuthState"
  | "auth/status_update"
  | "_auth/status_update"
  | "none";

/** Display data only: the SDK schema says clients MUST NOT use it as an identifier and SHOULD NOT log it. */
export interface AuthAccount {
  label: string;
  active?: boolean;
  name?: string;
  email?: string;
  organization?: string;
}

/** A vendor extension's opinion of the state: shown, never acted on. */
export interface AuthStatusHint {
  state: KnownAuthState;
  label?: string;
  from: "_auth/status_update";
}

export interface AuthStatus {
  /** Unrecognised values read as `unknown` (SDK schema: "Clients MUST treat values they do not recognize as unknown"). */
  state: KnownAuthState;
  accounts: AuthAccount[];
  source: AuthStatusSource;
  /** Why, when there is something to say: no mechanism, an error, a draft-shape answer's message. */
  reason?: string;
  /** The state string the agent sent when it was not one we know (custom `_x` or future values). */
  unrecognizedState?: string;
  hint?: AuthStatusHint;
}

/** An `auth/status` answer or `auth/status_update` params, in the SDK shape or the RFD draft's. */
export function readAuthStatus(raw: unknown, source: AuthStatusSource): AuthStatus {
  if (!isRecord(raw)) {
    return unknownStatus(source, "the agent's answer was not an object");
  }
  if (typeof raw.state === "string") {
    const state = normalizeAuthState(raw.state);
    return {
      state,
      accounts: readAccounts(raw.accounts),
      source,
      ...(state === "unknown" && raw.state !== "unknown"
        ? {
            unrecognizedState: peerText(raw.state, { max: 100 }),
            reason: "the agent reported a state this client does not know",
          }
        : {}),
    };
  }
  if (typeof raw.authenticated === "boolean") {
    return fromAuthenticatedFlag(raw.authenticated, raw.message, source);
  }
  return unknownStatus(source, "the agent's answer carries no state");
}

/** The seed RFD's `getAuthState` answer (`GetAuthStateResponseSchema` in wire.ts). */
export function readGetAuthState(raw: unknown): AuthStatus {
  const parsed = GetAuthStateResponseSchema.safeParse(raw);
  if (!parsed.success)
    return unknownStatus("getAuthState", "the agent's getAuthState answer is malformed");
  return fromAuthenticatedFlag(parsed.data.authenticated, parsed.data.message, "getAuthState");
}

/**
 * `_auth/status_update` params. Known payloads: `{authStatus: {kind: account|api_key|gateway|external|none, label}}`
 * (the vendor extension) or a bare `{state}`. Anything else yields no hint.
 */
export function readStatusHint(raw: unknown): AuthStatusHint | undefined {
  if (!isRecord(raw)) return undefined;
  const body = isRecord(raw.authStatus) ? raw.authStatus : raw;
  const label = typeof body.label === "string" ? peerText(body.label, { max: 100 }) : undefined;
  let state: KnownAuthState | undefined;
  if (typeof body.kind === "string") {
    state =
      body.kind === "none"
        ? "unauthenticated"
        : VENDOR_KINDS.has(body.kind)
          ? "authenticated"
          : "unknown";
  } else if (typeof body.state === "string") {
    state = normalizeAuthState(body.state);
  }
  return state ? { state, from: "_auth/status_update", ...(label ? { label } : {}) } : undefined;
}

const VENDOR_KINDS = new Set(["account", "api_key", "gateway", "external"]);

export function unknownStatus(source: AuthStatusSource, reason: string): AuthStatus {
  return { state: "unknown", accounts: [], source, reason };
}

function fromAuthenticatedFlag(
  authenticated: boolean,
  message: unknown,
  source: AuthStatusSource,
): AuthStatus {
  return {
    state: authenticated ? "authenticated" : "unauthenticated",
    accounts: [],
    source,
    ...(typeof message === "string" && message ? { reason: peerText(message) } : {}),
  };
}

/** Copies only the display fields the schema names; never `_meta`. Entries without a label are dropped. */
function readAccounts(raw: unknown): AuthAccount[] {
  if (!Array.isArray(raw)) return [];
  const accounts: AuthAccount[] = [];
  for (const item of raw) {
    if (!isRecord(item) || typeof item.label !== "string") continue;
    const account: AuthAccount = { label: peerText(item.label, { max: 100 }) };
    if (typeof item.active === "boolean") account.active = item.active;
    for (const key of ["name", "email", "organization"] as const) {
      const value = item[key];
      if (typeof value === "string") account[key] = peerText(value, { max: 100 });
    }
    accounts.push(account);
  }
  return accounts;
}

/**
 * The latest known state, ordered by an epoch. Notifications are recorded in wire order (the connection taps the
 * message stream), so a `status()` query that started before a notification arrived must not overwrite it: the
 * query records its answer with the epoch it started at, and loses if anything was recorded since.
 */
export class AuthStatusCache {
  #epoch = 0;
  #current: AuthStatus | undefined;
  #hint: AuthStatusHint | undefined;
  #hintWaiters: Array<() => void> = [];
  readonly #onChange: ((status: AuthStatus) => void) | undefined;

  constructor(onChange?: (status: AuthStatus) => void) {
    this.#onChange = onChange;
  }

  get epoch(): number {
    return this.#epoch;
  }

  get current(): AuthStatus | undefined {
    return this.#current && this.#withHint(this.#current);
  }

  /** An `auth/status_update` notification: always the newest word. */
  notify(status: AuthStatus): void {
    this.#epoch++;
    this.#set(status);
  }

  hint(hint: AuthStatusHint): void {
    this.#hint = hint;
    for (const wake of this.#hintWaiters.splice(0)) wake();
  }

  get lastHint(): AuthStatusHint | undefined {
    return this.#hint;
  }

  /** Resolves with the first hint (at once if one came already), or undefined after `ms` or on abort. */
  async firstHint(ms: number, signal?: AbortSignal): Promise<AuthStatusHint | undefined> {
    if (this.#hint || signal?.aborted) return this.#hint;
    let timer: ReturnType<typeof setTimeout> | undefined;
    let wake: () => void = () => {};
    await new Promise<void>((resolve) => {
      wake = resolve;
      this.#hintWaiters.push(resolve);
      timer = setTimeout(resolve, ms);
      signal?.addEventListener("abort", () => resolve(), { once: true });
    });
    clearTimeout(timer);
    this.#hintWaiters = this.#hintWaiters.filter((w) => w !== wake);
    return this.#hint;
  }

  /** A query's answer; returns what the caller should report (a newer notification wins). */
  answer(status: AuthStatus, startedAt: number): AuthStatus {
    if (this.#epoch !== startedAt && this.#current) return this.#withHint(this.#current);
    this.#epoch++;
    this.#set(status);
    return this.#withHint(status);
  }

  #set(status: AuthStatus): void {
    const previous = this.#current;
    this.#current = status;
    if (previous?.state !== status.state || previous.source !== status.source) {
      this.#onChange?.(this.#withHint(status));
    }
  }

  #withHint(status: AuthStatus): AuthStatus {
    return this.#hint ? { ...status, hint: this.#hint } : status;
  }
}

export { KNOWN_AUTH_STATES, type KnownAuthState };
