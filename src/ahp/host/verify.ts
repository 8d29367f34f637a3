/**
 * How the host checks a token before accepting it for a resource: an RFC 9068 JWT with `aud` = the resource
 * (default, via the engine's `createTokenVerifier`), RFC 7662 introspection, or the author's own function.
 * Failures become RFC 6750 problems; an unreachable authorization server is *not* the token's fault.
 */

import { AgentAuthError } from "../../core/errors.ts";
import type { Secret } from "../../core/secret.ts";
import {
  createTokenVerifier,
  type OAuthClient,
  TokenVerificationError,
  type TokenVerifier,
  type VerifiedToken,
} from "../../oauth/index.ts";
import type { BearerErrorCode } from "../wire.ts";
import type { RegisteredResource } from "./resources.ts";

/** The author's verifier: resolve with the verified token, or throw `TokenVerificationError` (any other error = invalid_token). */
export type CustomVerifier = (
  token: Secret,
  resource: RegisteredResource,
) => Promise<VerifiedToken>;

export type VerifierChoice =
  | { kind: "jwt"; clockToleranceSeconds?: number }
  | { kind: "introspection"; client: OAuthClient }
  | CustomVerifier;

/** The token was refused: RFC 6750 code, a token-free description, and the scopes needed if any. */
export class TokenRejected extends AgentAuthError {
  readonly bearerError: BearerErrorCode;
  readonly scope?: string[];
  constructor(bearerError: BearerErrorCode, message: string, scope?: string[]) {
    super(bearerError, message);
    this.bearerError = bearerError;
    this.scope = scope;
  }
}

/** The token could not be checked (authorization server unreachable, discovery failed): try again later. */
export class VerifierUnavailable extends AgentAuthError {
  constructor(message: string, options?: { cause?: unknown }) {
    super("verifier_unavailable", message, options);
  }
}

export type ResourceVerifier = (
  token: Secret,
  resource: RegisteredResource,
  now: number,
) => Promise<VerifiedToken>;

export function createResourceVerifier(choice: VerifierChoice = { kind: "jwt" }): ResourceVerifier {
  const engines = new Map<string, TokenVerifier>();
  const engineFor = (resource: RegisteredResource): TokenVerifier => {
    let engine = engines.get(resource.resource);
    if (!engine) {
      const issuer = resource.authorizationServers[0];
      if (!issuer)
        throw new VerifierUnavailable(
          `no authorization server is declared for ${resource.resource}`,
        );
      engine = createTokenVerifier({
        issuer,
        audience: resource.resource,
        method:
          typeof choice !== "function" && choice.kind === "introspection"
            ? choice
            : { kind: "jwt" },
        clockToleranceSeconds:
          typeof choice !== "function" && choice.kind === "jwt"
            ? choice.clockToleranceSeconds
            : undefined,
      });
      engines.set(resource.resource, engine);
    }
    return engine;
  };

  return async (token, resource, now) => {
    let verified: VerifiedToken;
    try {
      verified =
        typeof choice === "function"
          ? await choice(token, resource)
          : await engineFor(resource).verifyToken(token, resource.requiredScopes ?? []);
    } catch (error) {
      throw toRejection(error, resource);
    }
    // The engine tolerates clock skew on `exp`; the host does not accept a token it would expire at once.
    if (verified.expiresAt !== undefined && verified.expiresAt <= now) {
      throw new TokenRejected("invalid_token", "The access token has expired.");
    }
    const missing = (resource.requiredScopes ?? []).filter((s) => !verified.scopes.includes(s));
    if (missing.length > 0) {
      throw new TokenRejected(
        "insufficient_scope",
        "The access token lacks a required scope.",
        resource.requiredScopes,
      );
    }
    return verified;
  };
}

function toRejection(error: unknown, resource: RegisteredResource): Error {
  if (error instanceof TokenRejected || error instanceof VerifierUnavailable) return error;
  if (error instanceof TokenVerificationError) {
    // The host's verifiers take bearer tokens only, so the DPoP codes do not arise here; they read as invalid_token.
    const bearer = error.bearerError;
    if (
      bearer === "invalid_request" ||
      bearer === "invalid_token" ||
      bearer === "insufficient_scope"
    ) {
      return new TokenRejected(
        bearer,
        error.message,
        bearer === "insufficient_scope" ? resource.requiredScopes : undefined,
      );
    }
    return new TokenRejected("invalid_token", error.message);
  }
  if (error instanceof AgentAuthError) {
    return new VerifierUnavailable(
      `could not verify the token for ${resource.resource}: ${error.message}`,
      {
        cause: error,
      },
    );
  }
  return new TokenRejected("invalid_token", "The access token was rejected.");
}
