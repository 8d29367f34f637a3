/**
 * Per-connection credential state, one entry per resource: each client authenticates for itself (AHP: auth status
 * is per connection, kept out of shared root state). Pure: the caller passes the clock; timers live in the shell.
 *
 * Every change bumps the resource's generation, so a slow verification that finishes after a newer `authenticate`
 * or a revocation can never overwrite it (last *sent*, not last *verified*, wins).
 */

import type { Secret } from "../../core/secret.ts";

export type CredentialState = "unauthenticated" | "authenticated" | "expired" | "revoked";

export interface Credential {
  state: CredentialState;
  /** Held in memory only, for re-verification; never serialised (a `Secret` prints `[redacted]`). */
  token?: Secret;
  subject?: string;
  scopes: string[];
  /** Epoch ms. */
  expiresAt?: number;
}

export interface AcceptInput {
  token: Secret;
  subject?: string;
  scopes: string[];
  /** Epoch ms from the token itself (JWT `exp`, introspection `exp`). */
  tokenExpiresAt?: number;
  /** The client's `expiresIn` (seconds remaining when sent). */
  expiresIn?: number;
}

/** The earlier of what the client said (`expiresIn`) and what the token says (`exp`). */
export function effectiveExpiry(
  now: number,
  expiresIn: number | undefined,
  tokenExpiresAt: number | undefined,
): number | undefined {
  const fromClient = expiresIn === undefined ? undefined : now + expiresIn * 1000;
  if (fromClient === undefined) return tokenExpiresAt;
  if (tokenExpiresAt === undefined) return fromClient;
  return Math.min(fromClient, tokenExpiresAt);
}

export class ConnectionCredentials {
  readonly #entries = new Map<string, Credential>();
  readonly #generations = new Map<string, number>();

  /** Starts an attempt; pass the ticket back to `accept`. */
  begin(resource: string): number {
    const next = (this.#generations.get(resource) ?? 0) + 1;
    this.#generations.set(resource, next);
    return next;
  }

  /** Stores a verified credential unless a newer attempt or a revocation came after `ticket`. */
  accept(
    resource: string,
    ticket: number,
    input: AcceptInput,
    now: number,
  ): Credential | undefined {
    if (this.#generations.get(resource) !== ticket) return undefined;
    const credential: Credential = {
      state: "authenticated",
      token: input.token,
      subject: input.subject,
      scopes: [...input.scopes],
      expiresAt: effectiveExpiry(now, input.expiresIn, input.tokenExpiresAt),
    };
    this.#entries.set(resource, credential);
    return credential;
  }

  /** A failed attempt leaves the previous credential as it was (the client may still hold a good one). */
  isCurrent(resource: string, ticket: number): boolean {
    return this.#generations.get(resource) === ticket;
  }

  /** Drops the credential (empty token, or the host noticed revocation). True when one was authenticated. */
  revoke(resource: string): boolean {
    this.begin(resource);
    const had = this.#entries.get(resource)?.state === "authenticated";
    this.#entries.set(resource, { state: "revoked", scopes: [] });
    return had;
  }

  /** Marks the credential expired when it is due. True when this call changed the state. */
  expireIfDue(resource: string, now: number): boolean {
    const entry = this.#entries.get(resource);
    if (
      entry?.state !== "authenticated" ||
      entry.expiresAt === undefined ||
      entry.expiresAt > now
    ) {
      return false;
    }
    this.begin(resource);
    this.#entries.set(resource, { state: "expired", scopes: [], subject: entry.subject });
    return true;
  }

  /** The state as of `now` (an authenticated credential past its expiry reads as expired). */
  get(resource: string, now: number): Credential {
    const entry = this.#entries.get(resource);
    if (!entry) return { state: "unauthenticated", scopes: [] };
    if (
      entry.state === "authenticated" &&
      entry.expiresAt !== undefined &&
      entry.expiresAt <= now
    ) {
      return { state: "expired", scopes: [], subject: entry.subject };
    }
    return entry;
  }

  authenticated(now: number): Array<{ resource: string; credential: Credential }> {
    return [...this.#entries.keys()]
      .map((resource) => ({ resource, credential: this.get(resource, now) }))
      .filter((e) => e.credential.state === "authenticated");
  }

  clear(): void {
    this.#entries.clear();
    for (const resource of this.#generations.keys()) this.begin(resource);
  }
}
