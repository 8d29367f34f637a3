/**
 * The resource-server side: verifies a bearer token from an `Authorization` header as an RFC 9068 JWT access
 * token (JWKS cached, audience = our resource by default, per RFC 8707) or through RFC 7662 introspection, checks
 * scopes, and fails with the RFC 6750 challenge to send back. With `dpop`, it also takes DPoP-bound JWTs
 * (RFC 9449 §7: `Authorization: DPoP` and a proof of the bound key, checked by oauth4webapi, used once, with a
 * server nonce when asked), and can refuse bearer tokens altogether.
 */

import * as oauth from "oauth4webapi";
import { AgentAuthError } from "../core/errors.ts";
import { Secret } from "../core/secret.ts";
import { parseAuthorizationBearer, parseAuthorizationDpop } from "./bearer.ts";
import { type BearerChallenge, buildResourceChallenge, type DpopErrorCode } from "./challenge.ts";
import type { OAuthClient } from "./client.ts";
import {
  type AuthorizationServer,
  type DiscoveryOptions,
  discoverAuthorizationServer,
} from "./discovery.ts";
import { DPOP_ALGORITHM } from "./dpop.ts";
import {
  DPOP_PROOF_WINDOW_SECONDS,
  type DpopNonces,
  DpopReplayCache,
  dpopNonces,
} from "./dpop-proof.ts";
import { isLoopback } from "./http.ts";
import { introspectToken } from "./revoke.ts";

export interface VerifiedToken {
  subject?: string;
  clientId?: string;
  scopes: string[];
  expiresAt?: number;
  claims: Record<string, unknown>;
  /** With `dpop.nonce`: the nonce to send back in `DPoP-Nonce`, so the client's next proof carries it (§9). */
  dpopNonce?: string;
}

/** A request as the DPoP checks see it: `htm` and `htu` are compared with its method and URL. */
export interface VerifiableRequest {
  method: string;
  /** The URL the client called (its scheme, host and path; the query is ignored, RFC 9449 §4.3). */
  url: string;
  authorization?: string | null;
  /** The `DPoP` header: one proof JWT. */
  dpop?: string | null;
}

/** Why a request is refused, with the challenge (status and `WWW-Authenticate` value) that says so. */
export class TokenVerificationError extends AgentAuthError {
  readonly challenge: BearerChallenge;
  readonly bearerError?: DpopErrorCode;
  /** For `use_dpop_nonce`: the nonce to send in `DPoP-Nonce`. */
  readonly dpopNonce?: string;
  constructor(
    code: string,
    message: string,
    challenge: BearerChallenge,
    bearerError?: DpopErrorCode,
    dpopNonce?: string,
  ) {
    super(code, message);
    this.challenge = challenge;
    this.bearerError = bearerError;
    this.dpopNonce = dpopNonce;
  }
}

export interface TokenVerifierOptions {
  issuer: string;
  /** Our resource identifier: JWTs must carry it in `aud`, introspection results in `aud` when present. */
  audience: string;
  /** Default `jwt`. Introspection needs a client the server lets introspect. */
  method?: { kind: "jwt" } | { kind: "introspection"; client: OAuthClient };
  requiredScopes?: string[];
  realm?: string;
  /** The RFC 9728 metadata URL, sent in every challenge (§5.1). */
  resourceMetadataUrl?: string;
  /**
   * Seconds of leeway for `exp`/`iat`/`nbf` (clock drift between us and the issuer). Default 5. A token whose `iat`
   * is later than now plus this is refused (`invalid_token`), from a JWT or an introspection answer.
   */
  clockToleranceSeconds?: number;
  discovery?: DiscoveryOptions;
  /**
   * Accept DPoP-bound JWT access tokens (RFC 9449; `verifyRequest` only, JWT method only). `required` refuses bearer
   * tokens; `nonce` makes proofs carry a nonce this server handed out (§9).
   */
  dpop?: { required?: boolean; nonce?: boolean };
}

export interface TokenVerifier {
  /** Verifies the `Authorization` header's bearer token; `requiredScopes` overrides the default for this call. */
  verify(
    authorization: string | null | undefined,
    requiredScopes?: string[],
  ): Promise<VerifiedToken>;
  /** Verifies a request's token, bearer or (with `dpop`) DPoP-bound with its proof. */
  verifyRequest(request: VerifiableRequest, requiredScopes?: string[]): Promise<VerifiedToken>;
  verifyToken(token: Secret, requiredScopes?: string[]): Promise<VerifiedToken>;
}

/**
 * How often, at most, a token signed with a key we do not hold makes us fetch the JWKS again. oauth4webapi alone
 * refetches for an unknown `kid` only once its copy is 60 s old, so after a key rotation (or a restarted
 * `agentauth idp serve`, whose keys live in memory) valid new tokens were refused for up to a minute. Small enough
 * that the first token after a rotation is accepted; large enough that a peer sending random `kid`s cannot make us
 * hammer the authorization server (one fetch per this many seconds).
 */
export const JWKS_REFETCH_COOLDOWN_SECONDS = 5;

export function createTokenVerifier(options: TokenVerifierOptions): TokenVerifier {
  let as: AuthorizationServer | undefined;
  const keySet = jwksKeySet();
  const dpop = options.dpop;
  const replays = dpop ? new DpopReplayCache() : undefined;
  const nonces: DpopNonces | undefined = dpop?.nonce ? dpopNonces() : undefined;
  const tolerance = options.clockToleranceSeconds ?? 5;
  const fail: Fail = (code, message, error, scope, nonce) =>
    new TokenVerificationError(
      code,
      message,
      buildResourceChallenge({
        realm: options.realm,
        error,
        errorDescription: error ? message : undefined,
        scope,
        resourceMetadata: options.resourceMetadataUrl,
        dpop,
        algs: [DPOP_ALGORITHM],
      }),
      error,
      nonce,
    );

  const checkScopes = (verified: VerifiedToken, requiredScopes: string[]) => {
    const missing = requiredScopes.filter((s) => !verified.scopes.includes(s));
    if (missing.length > 0) {
      throw fail(
        "insufficient_scope",
        "The access token lacks a required scope.",
        "insufficient_scope",
        requiredScopes,
      );
    }
    return verified;
  };

  const verifyToken = async (token: Secret, requiredScopes = options.requiredScopes ?? []) => {
    if (dpop?.required) {
      throw fail("dpop_required", "This resource takes DPoP-bound tokens only.", "invalid_token");
    }
    as ??= await discoverAuthorizationServer(options.issuer, options.discovery);
    const verified =
      options.method?.kind === "introspection"
        ? await viaIntrospection(
            as,
            options.method.client,
            token,
            options.audience,
            tolerance,
            fail,
          )
        : await viaJwt(as, token, options.audience, keySet, tolerance, fail);
    return checkScopes(verified, requiredScopes);
  };

  /** RFC 9449 §7: the bound token and its proof; then the proof is used once, and carries our nonce if asked. */
  const verifyBound = async (
    request: VerifiableRequest,
    token: string,
    requiredScopes: string[],
  ): Promise<VerifiedToken> => {
    if (options.method?.kind === "introspection") {
      throw fail("dpop_unsupported", "DPoP-bound tokens are not accepted here.", "invalid_token");
    }
    if (!request.dpop || request.dpop.includes(",")) {
      // §4.3: exactly one proof.
      throw fail("dpop_proof_invalid", "The request needs one DPoP proof.", "invalid_dpop_proof");
    }
    as ??= await discoverAuthorizationServer(options.issuer, options.discovery);
    const headers = { authorization: `DPoP ${token}`, dpop: request.dpop };
    const verified = await viaJwt(
      as,
      new Secret(token),
      options.audience,
      keySet,
      tolerance,
      fail,
      {
        method: request.method,
        url: request.url,
        headers,
      },
    );
    const proof = decodeProof(request.dpop);
    const jkt = (verified.claims.cnf as { jkt?: string } | undefined)?.jkt ?? "";
    if (nonces && !nonces.accepts(proof.nonce)) {
      throw fail(
        "dpop_nonce_required",
        "Use the DPoP nonce this server provides.",
        "use_dpop_nonce",
        undefined,
        nonces.current(),
      );
    }
    const until = ((proof.iat ?? 0) + DPOP_PROOF_WINDOW_SECONDS + tolerance) * 1000;
    if (!replays?.first(`${jkt}.${proof.jti}`, until)) {
      throw fail("dpop_proof_replayed", "This DPoP proof was already used.", "invalid_dpop_proof");
    }
    return { ...checkScopes(verified, requiredScopes), dpopNonce: nonces?.current() };
  };

  return {
    verifyToken,
    async verify(authorization, requiredScopes) {
      const parsed = parseAuthorizationBearer(authorization);
      if (parsed.kind === "missing") throw fail("token_missing", "No bearer token was sent.");
      if (parsed.kind === "malformed") {
        throw fail(
          "invalid_request",
          "The Authorization header is not a valid Bearer credential.",
          "invalid_request",
        );
      }
      return verifyToken(new Secret(parsed.token), requiredScopes);
    },
    async verifyRequest(request, requiredScopes = options.requiredScopes ?? []) {
      const bound = dpop ? parseAuthorizationDpop(request.authorization) : undefined;
      if (bound?.kind === "token") return verifyBound(request, bound.token, requiredScopes);
      if (bound?.kind === "malformed") {
        throw fail(
          "invalid_request",
          "The Authorization header is not a valid DPoP credential.",
          "invalid_request",
        );
      }
      if (dpop?.required && parseAuthorizationBearer(request.authorization).kind === "missing") {
        throw fail("token_missing", "No DPoP-bound token was sent.");
      }
      return this.verify(request.authorization, requiredScopes);
    },
  };
}

/** The proof's claims the replay and nonce checks need (its signature was checked with the token). */
function decodeProof(proof: string): { jti?: string; iat?: number; nonce?: unknown } {
  try {
    const payload = JSON.parse(
      Buffer.from(proof.split(".")[1] ?? "", "base64url").toString("utf8"),
    );
    return typeof payload === "object" && payload !== null ? payload : {};
  } catch {
    return {};
  }
}

type Fail = (
  code: string,
  message: string,
  error?: DpopErrorCode,
  scope?: string[],
  nonce?: string,
) => TokenVerificationError;

/** One generation of the key set: the server object oauth4webapi keys its own cache by, and our cache input. */
interface KeySetGeneration {
  server: AuthorizationServer;
  cache: oauth.JWKSCacheInput;
}

/**
 * The verifier's JWKS state, refetched early when a token names a key we do not hold (see
 * JWKS_REFETCH_COOLDOWN_SECONDS). oauth4webapi reads our `jwksCache` input only when its own module-level cache
 * has no entry for the server object, so a refetch starts a new generation: an empty cache input and a copy of the
 * server object, which the library has never seen. One refetch at a time; verifications that arrive meanwhile
 * wait for it rather than fetch too.
 */
interface JwksKeySet {
  generation?: KeySetGeneration;
  refreshing?: Promise<void>;
  /** performance.now() of the last early refetch. */
  lastRefetchAt: number;
}

function jwksKeySet(): JwksKeySet {
  return { lastRefetchAt: Number.NEGATIVE_INFINITY };
}

async function validateJwt(
  as: AuthorizationServer,
  token: Secret,
  audience: string,
  keySet: JwksKeySet,
  tolerance: number,
  bound?: { method: string; url: string; headers: Record<string, string> },
): Promise<oauth.JWTAccessTokenClaims> {
  const validate = (generation: KeySetGeneration) =>
    oauth.validateJwtAccessToken(
      generation.server,
      bound
        ? new Request(bound.url, { method: bound.method, headers: bound.headers })
        : new Request(audience, { headers: { authorization: `Bearer ${token.reveal()}` } }),
      audience,
      {
        [oauth.jwksCache]: generation.cache,
        [oauth.clockTolerance]: tolerance,
        [oauth.allowInsecureRequests]: as.jwks_uri ? isLoopback(new URL(as.jwks_uri)) : false,
        signal: AbortSignal.timeout(10_000),
      },
    );
  if (keySet.refreshing) await keySet.refreshing;
  // The first generation uses the discovered object itself, as before: verifiers of one issuer share its key set.
  keySet.generation ??= { server: as, cache: {} };
  const current = keySet.generation;
  const fetchedBefore = current.cache.uat;
  try {
    return await validate(current);
  } catch (error) {
    if (!isUnknownKey(error)) throw error;
    // The key set changed while we validated (another verification refetched it, or this one fetched it): try the
    // current one once, without fetching.
    if (keySet.generation !== current || current.cache.uat !== fetchedBefore) {
      if (keySet.refreshing) await keySet.refreshing;
      return validate(keySet.generation);
    }
    if (performance.now() - keySet.lastRefetchAt < JWKS_REFETCH_COOLDOWN_SECONDS * 1000)
      throw error;
    keySet.lastRefetchAt = performance.now();
    const next: KeySetGeneration = { server: { ...current.server }, cache: {} };
    keySet.generation = next;
    const attempt = validate(next);
    const refreshing = attempt.then(
      () => undefined,
      () => undefined,
    );
    keySet.refreshing = refreshing;
    void refreshing.then(() => {
      if (keySet.refreshing === refreshing) keySet.refreshing = undefined;
    });
    return attempt;
  }
}

/** No key of the JWKS matches the token's header (`kid`, `alg`): the one failure a fresher key set can cure. */
function isUnknownKey(error: unknown): boolean {
  if (!(error instanceof oauth.OperationProcessingError) || error.code !== oauth.KEY_SELECTION) {
    return false;
  }
  // KEY_SELECTION also covers "several keys match and the token has no kid"; only zero candidates is unknown.
  const candidates = (error.cause as { candidates?: unknown } | undefined)?.candidates;
  return Array.isArray(candidates) && candidates.length === 0;
}

async function viaJwt(
  as: AuthorizationServer,
  token: Secret,
  audience: string,
  keySet: JwksKeySet,
  tolerance: number,
  fail: Fail,
  bound?: { method: string; url: string; headers: Record<string, string> },
) {
  let claims: oauth.JWTAccessTokenClaims;
  try {
    claims = await validateJwt(as, token, audience, keySet, tolerance, bound);
  } catch (error) {
    const proof =
      bound && /DPoP Proof|DPoP use|confirmation/.test(String((error as Error)?.message));
    throw proof
      ? fail(
          "dpop_proof_invalid",
          "The DPoP proof does not match the token or the request.",
          "invalid_dpop_proof",
        )
      : fail("invalid_token", describeJwtFailure(error), "invalid_token");
  }
  // oauth4webapi requires `iat` but only checks `exp` and `nbf` against the clock.
  if (issuedInFuture(claims.iat, tolerance))
    throw fail("invalid_token", FUTURE_IAT, "invalid_token");
  return {
    subject: claims.sub,
    clientId: claims.client_id,
    scopes: typeof claims.scope === "string" ? claims.scope.split(" ").filter(Boolean) : [],
    expiresAt: claims.exp * 1000,
    claims: { ...claims },
  };
}

async function viaIntrospection(
  as: AuthorizationServer,
  client: OAuthClient,
  token: Secret,
  audience: string,
  tolerance: number,
  fail: Fail,
) {
  const result = await introspectToken({ as, client, token, tokenTypeHint: "access_token" });
  if (!result.active)
    throw fail("invalid_token", "The access token is not active.", "invalid_token");
  const aud = result.aud === undefined ? [] : Array.isArray(result.aud) ? result.aud : [result.aud];
  if (!aud.includes(audience)) {
    throw fail(
      "invalid_token",
      "The access token was not issued for this resource.",
      "invalid_token",
    );
  }
  if (typeof result.exp === "number" && result.exp * 1000 <= Date.now()) {
    throw fail("invalid_token", "The access token has expired.", "invalid_token");
  }
  // RFC 7662 §2.2 makes `iat` optional; when given, it is held to the same rule as a JWT's.
  if (issuedInFuture(result.iat, tolerance))
    throw fail("invalid_token", FUTURE_IAT, "invalid_token");
  return {
    subject: result.sub,
    clientId: result.client_id,
    scopes: typeof result.scope === "string" ? result.scope.split(" ").filter(Boolean) : [],
    expiresAt: typeof result.exp === "number" ? result.exp * 1000 : undefined,
    claims: { ...result },
  };
}

const FUTURE_IAT =
  "The access token was issued in the future (its iat is later than the allowed clock skew); check the clocks of this server and of the authorization server.";

/**
 * Pure: is `iat` (seconds) later than now plus the clock skew we allow? Such a token was minted by an issuer whose
 * clock is wrong, or ahead of time to be used later; either way it is not the fresh token it claims to be
 * (RFC 9068 §4: validate `iat` like the other time claims; issue 20 §1.8). Absent or not a number: nothing to judge
 * (a JWT without `iat` is already refused by oauth4webapi).
 */
export function issuedInFuture(
  iat: unknown,
  toleranceSeconds: number,
  nowSeconds = Math.floor(Date.now() / 1000),
): boolean {
  return typeof iat === "number" && Number.isFinite(iat) && iat > nowSeconds + toleranceSeconds;
}

/** Short, token-free reasons; the full validation error stays out of responses. */
function describeJwtFailure(error: unknown): string {
  const message = error instanceof Error ? error.message : "";
  if (/"exp"|expired/i.test(message)) return "The access token has expired.";
  if (/"aud"|audience/i.test(message)) return "The access token was not issued for this resource.";
  if (/signature/i.test(message)) return "The access token signature is invalid.";
  if (/"iss"|issuer/i.test(message)) return "The access token comes from an untrusted issuer.";
  return "The access token is invalid.";
}
