/**
 * The tokens this store already opened, per record id, with the exact sealed bytes and associated data they came
 * from. A row read again unchanged (the usual case: a caller asking for the same credential's access token before
 * every request) is not decrypted again: the profile of a vault read put AES-GCM set-up, base64url decoding, the
 * associated data and the payload's JSON at half its CPU.
 *
 * Reusing the result is exact, not approximate: AES-GCM opening is a function of (key, nonce, ciphertext, associated
 * data), and a hit requires every one of them to be equal to what was opened before (the key through its id, which
 * is a hash of the key bytes, still present in the keyring; the associated data through the subject, issuer, resource
 * and the provider column's text, from which it is built). A row whose bytes changed in any way, a forgery included,
 * misses and is opened (and checked) again.
 *
 * What it keeps in memory: the tokens of at most `max` records this process read recently, as Secret objects (never
 * printed: see core/secret.ts), dropped when the store writes or deletes the record, sees it change, or closes. The
 * process holds the vault key anyway, so whoever can read its memory can open every row; the memo adds no access.
 */

import type { Keyring } from "./keyring.ts";
import { openTokens, type Sealed, type SealKey } from "./seal.ts";
import type { CredentialTokens } from "./types.ts";

const inspectCustom = Symbol.for("nodejs.util.inspect.custom");

/** Records whose opened tokens are kept; past it, the oldest opened is dropped. */
export const OPENED_TOKENS_MAX = 1024;

interface Opened {
  subject: string;
  issuer: string;
  resource: string;
  provider: unknown;
  kid: string;
  nonce: string;
  ciphertext: string;
  tokens: CredentialTokens;
}

export class OpenedTokens {
  readonly #entries = new Map<string, Opened>();
  readonly #max: number;

  constructor(max = OPENED_TOKENS_MAX) {
    this.#max = max;
  }

  /**
   * `openTokens`, or what it returned for the same inputs before. `providerColumn` is the row's provider text (or
   * null): the associated data covers the provider, and equal text means an equal reference.
   */
  open(
    keyring: Keyring,
    key: SealKey,
    providerColumn: unknown,
    sealed: Sealed,
    recordId: string,
  ): CredentialTokens {
    const seen = this.#entries.get(recordId);
    if (
      seen !== undefined &&
      seen.ciphertext === sealed.ciphertext &&
      seen.nonce === sealed.nonce &&
      seen.kid === sealed.kid &&
      seen.subject === key.subject &&
      seen.issuer === key.issuer &&
      seen.resource === key.resource &&
      seen.provider === providerColumn &&
      keyring.get(sealed.kid) !== undefined
    ) {
      return { ...seen.tokens };
    }
    const tokens = openTokens(keyring, key, sealed, recordId);
    if (seen !== undefined) this.#entries.delete(recordId);
    else if (this.#entries.size >= this.#max) {
      const oldest = this.#entries.keys().next().value;
      if (oldest !== undefined) this.#entries.delete(oldest);
    }
    this.#entries.set(recordId, {
      subject: key.subject,
      issuer: key.issuer,
      resource: key.resource,
      provider: providerColumn,
      kid: sealed.kid,
      nonce: sealed.nonce,
      ciphertext: sealed.ciphertext,
      tokens,
    });
    return { ...tokens };
  }

  /** Drops one record's tokens (it was written, deleted, or changed elsewhere). */
  forget(recordId: string): void {
    this.#entries.delete(recordId);
  }

  clear(): void {
    this.#entries.clear();
  }

  get size(): number {
    return this.#entries.size;
  }

  toJSON(): { size: number } {
    return { size: this.#entries.size };
  }

  [inspectCustom](): string {
    return `OpenedTokens(${this.#entries.size} records, [redacted])`;
  }
}
