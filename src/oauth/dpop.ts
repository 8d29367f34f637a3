/**
 * RFC 9449 DPoP: sender-constrained tokens. One ES256 key per credential, made at sign-in and sealed in the vault with
 * the tokens (`CredentialTokens.dpopKey`), so a refresh, in any process, proves the same key the tokens are bound to
 * (§5: a public client's refresh token is bound to it). Proofs are oauth4webapi's (`DPoP(client, keyPair)`: a fresh
 * `jti` and `iat` per request, `htm`/`htu`, `ath` for resource requests, server nonces cached per origin); a
 * `use_dpop_nonce` refusal (§8 at the token endpoint, §9 at a resource server) is retried once with the nonce the
 * server sent. The private key never leaves this module except sealed.
 */

import * as oauth from "oauth4webapi";
import { Secret } from "../core/secret.ts";
import type { AuthorizationServer } from "./discovery.ts";
import { TokenEndpointError } from "./errors.ts";

/** The proof algorithm agentauth signs with: ES256 is mandatory-to-implement for servers in practice (RFC 9449 §11.6). */
export const DPOP_ALGORITHM = "ES256";
const EC = { name: "ECDSA", namedCurve: "P-256" } as const;

export type DpopHandle = oauth.DPoPHandle;

/** Whether an authorization server takes ES256 DPoP proofs (RFC 9449 §5.1 `dpop_signing_alg_values_supported`). */
export function supportsDpop(as: AuthorizationServer): boolean {
  const algs = as.dpop_signing_alg_values_supported;
  return Array.isArray(algs) && algs.includes(DPOP_ALGORITHM);
}

/** A new key, as the sealed JWK the vault keeps (private and public parts, no `alg` choice left open). */
export async function generateDpopKey(): Promise<Secret> {
  const pair = await crypto.subtle.generateKey(EC, true, ["sign", "verify"]);
  const jwk = await crypto.subtle.exportKey("jwk", pair.privateKey);
  return new Secret(JSON.stringify({ kty: jwk.kty, crv: jwk.crv, x: jwk.x, y: jwk.y, d: jwk.d }));
}

// Handles per sealed key text: the key pair is imported once, and the nonces a server sent stay with the key.
const handles = new Map<string, Promise<DpopHandle>>();
const MAX_HANDLES = 1_000;

/** The proof maker for a sealed key (see `generateDpopKey`); a damaged key is a typed `dpop_key_invalid`. */
export function dpopHandle(sealed: Secret): Promise<DpopHandle> {
  const text = sealed.reveal();
  let handle = handles.get(text);
  if (!handle) {
    handle = importHandle(text);
    handle.catch(() => handles.delete(text));
    if (handles.size >= MAX_HANDLES) handles.delete(handles.keys().next().value as string);
    handles.set(text, handle);
  }
  return handle;
}

async function importHandle(text: string): Promise<DpopHandle> {
  try {
    const jwk = JSON.parse(text) as JsonWebKey;
    if (jwk.kty !== "EC" || jwk.crv !== "P-256" || typeof jwk.d !== "string") throw new Error();
    const privateKey = await crypto.subtle.importKey("jwk", jwk, EC, false, ["sign"]);
    const { d: _private, ...publicJwk } = jwk;
    const publicKey = await crypto.subtle.importKey("jwk", publicJwk, EC, true, ["verify"]);
    // The client only sets oauth4webapi's clock skew, none here.
    return oauth.DPoP({}, { privateKey, publicKey });
  } catch {
    throw new TokenEndpointError(
      "dpop_key_invalid",
      "The stored DPoP key of this credential cannot be read; sign in again to make a new one.",
    );
  }
}

/**
 * Runs a DPoP request (`attempt` builds and processes it) and, when the server answers `use_dpop_nonce`, once more:
 * the handle has cached the nonce from that answer's `DPoP-Nonce` header by then. A second refusal is the server's.
 */
export async function withDpopNonce<T>(
  dpop: DpopHandle | undefined,
  attempt: () => Promise<T>,
): Promise<T> {
  try {
    return await attempt();
  } catch (error) {
    if (!dpop || !oauth.isDPoPNonceError(error)) throw error;
    return attempt();
  }
}
