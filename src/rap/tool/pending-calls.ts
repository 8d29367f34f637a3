/**
 * Pending authorizations bound to the call they interrupt. The `state` that `startAuthorization` puts in the URL
 * finds, exactly once and only before it expires, both the PKCE half (`PendingAuthorization`) and the call to
 * resume. The store is the oauth engine's `PendingStore` (SHA-256 digests, constant-time, single use, TTL).
 */

import {
  AuthorizationResponseError,
  MemoryPendingStore,
  type PendingAuthorization,
  type PendingStore,
} from "../../oauth/index.ts";
import type { PendingCall, PendingCallAuthorization } from "./options.ts";

export class PendingAuthorizations {
  readonly #store: PendingStore<PendingCallAuthorization>;
  readonly #ttlMs: number;
  /**
   * True when the store is shared with other instances and outlives this process (PostgreSQL): a redirect may then
   * belong to a call this instance never saw, and the call is resumed from what the store kept.
   */
  readonly shared: boolean;

  constructor(ttlMs: number, store?: PendingStore<PendingCallAuthorization>, shared = false) {
    this.#ttlMs = ttlMs;
    this.#store = store ?? new MemoryPendingStore<PendingCallAuthorization>({ ttlMs });
    this.shared = store !== undefined && shared;
  }

  /**
   * The PendingStore to hand `startAuthorization`: the state it creates is bound to `call` and to the browser whose
   * binding cookie hashes to `browser` (browser-binding.ts).
   */
  bind(call: PendingCall, browser: string): PendingStore<PendingAuthorization> {
    return {
      create: (authorization) => this.#store.create({ authorization, call, browser }, this.#ttlMs),
      consume: () => {
        throw new TypeError("a bound pending store only creates");
      },
      size: () => this.#store.size(),
    };
  }

  /** Finds and removes the entry for `state`; throws `state_invalid` when unknown, used or expired. */
  async take(state: string | null): Promise<PendingCallAuthorization> {
    return this.#store.consume(state);
  }

  async size(): Promise<number> {
    return this.#store.size();
  }
}

/** The PendingStore to hand `completeAuthorization` for an entry already taken: it answers that state once. */
export function alreadyTaken(
  state: string,
  authorization: PendingAuthorization,
): PendingStore<PendingAuthorization> {
  let used = false;
  return {
    create: () => {
      throw new TypeError("an already-taken pending store cannot create");
    },
    consume: (given) => {
      if (used || given !== state) {
        throw new AuthorizationResponseError(
          "state_invalid",
          "The authorization response's state is not valid.",
        );
      }
      used = true;
      return authorization;
    },
    size: () => (used ? 0 : 1),
  };
}
