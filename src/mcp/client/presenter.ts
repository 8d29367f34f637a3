/**
 * How the provider's tokens travel: the transport's `fetch` (`agentAuthProvider(...).fetch`).
 *
 * - It notes which stored token each response answered, so a 401 forces a refresh of exactly that token's version.
 * - A DPoP-bound token (RFC 9449 §7.1) is never handed to the transport: `token()` returns a placeholder, and this
 *   fetch swaps it for `Authorization: DPoP <token>` with a fresh proof of the credential's key (`htm`, `htu`, `ath`,
 *   a new `jti`), through oauth4webapi. A server's `use_dpop_nonce` (§9) is retried once with its nonce, which the
 *   key's handle then keeps for that origin, so later requests carry it from the start. A host that does not pass
 *   this fetch sends the placeholder, which no server accepts, and the provider says what to do: the bound token
 *   itself never goes out as a bearer token.
 */

import type { FetchLike } from "@modelcontextprotocol/client";
import * as oauth from "oauth4webapi";
import type { Secret } from "../../core/secret.ts";
import { dpopHandle, isLoopback } from "../../oauth/index.ts";
import type { CredentialRecord } from "../../vault/index.ts";

// A few recent tokens suffice: a response answers a token handed out moments before.
const REMEMBERED_TOKENS = 8;
const PLACEHOLDER_PREFIX = "agentauth-dpop-placeholder.";

interface Handed {
  version: number;
  /** Set for a DPoP-bound token: the token and its key, used only inside `fetch`. */
  bound?: { token: Secret; key: Secret };
}

export interface TokenPresenter {
  /** What `token()` returns for a record: its bearer token, or a placeholder for a DPoP-bound one. */
  hand(record: CredentialRecord): string | undefined;
  /** The version of the token a response answered, when it went through `fetch` with one. */
  answered(response: Response): number | undefined;
  /** Whether a response went through `fetch` without any token. */
  bare(response: Response): boolean;
  /** Whether the response came through `fetch` at all (a host may not pass it to the transport). */
  seen(response: Response): boolean;
  readonly fetch: FetchLike;
}

export function createPresenter(): TokenPresenter {
  const handed = new Map<string, Handed>();
  const answered = new WeakMap<Response, number>();
  const bare = new WeakSet<Response>();
  const seen = new WeakSet<Response>();

  function remember(value: string, entry: Handed): void {
    handed.delete(value);
    handed.set(value, entry);
    if (handed.size > REMEMBERED_TOKENS) handed.delete(handed.keys().next().value as string);
  }

  function hand(record: CredentialRecord): string | undefined {
    const token = record.tokens.accessToken;
    if (!token) return undefined;
    const key = record.tokens.dpopKey;
    if (key && record.tokens.tokenType?.toLowerCase() === "dpop") {
      // One placeholder per record version and token: stable while the token is, new when it changes.
      const existing = [...handed].find(([, e]) => e.version === record.version && e.bound);
      const value = existing?.[0] ?? `${PLACEHOLDER_PREFIX}${crypto.randomUUID()}`;
      remember(value, { version: record.version, bound: { token, key } });
      return value;
    }
    const value = token.reveal();
    if (!handed.has(value)) remember(value, { version: record.version });
    return value;
  }

  const fetchWith: FetchLike = async (url, init) => {
    const headers = new Headers(init?.headers);
    const authorization = headers.get("authorization");
    const presented = authorization?.replace(/^Bearer\s+/i, "");
    const entry = presented ? handed.get(presented) : undefined;
    if (entry?.bound) {
      headers.delete("authorization");
      const response = await sendBound(new URL(url), init, headers, entry.bound);
      answered.set(response, entry.version);
      seen.add(response);
      return response;
    }
    const response = await fetch(url, init);
    seen.add(response);
    if (entry) answered.set(response, entry.version);
    else if (!authorization) bare.add(response);
    return response;
  };

  return {
    hand,
    answered: (response) => answered.get(response),
    bare: (response) => bare.has(response),
    seen: (response) => seen.has(response),
    fetch: fetchWith,
  };
}

/** One request with the bound token and a fresh proof; a `use_dpop_nonce` answer is retried once (RFC 9449 §9). */
async function sendBound(
  url: URL,
  init: RequestInit | undefined,
  headers: Headers,
  credential: { token: Secret; key: Secret },
): Promise<Response> {
  const handle = await dpopHandle(credential.key);
  const body = (init?.body ?? null) as oauth.ProtectedResourceRequestBody;
  const send = () =>
    oauth.protectedResourceRequest(
      credential.token.reveal(),
      init?.method ?? "GET",
      url,
      headers,
      body,
      {
        DPoP: handle,
        signal: init?.signal ?? undefined,
        [oauth.allowInsecureRequests]: isLoopback(url),
      },
    );
  try {
    return await send();
  } catch (error) {
    if (!(error instanceof oauth.WWWAuthenticateChallengeError)) throw error;
    if (!oauth.isDPoPNonceError(error)) return error.response;
    await error.response.body?.cancel().catch(() => {});
    try {
      return await send();
    } catch (again) {
      if (again instanceof oauth.WWWAuthenticateChallengeError) return again.response;
      throw again;
    }
  }
}
