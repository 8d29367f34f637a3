/** The OAuth engine's typed errors: one class per kind of failure, each with a stable `code` and no secret. */

import * as oauth from "oauth4webapi";
import { peerText } from "../core/display.ts";
import { AgentAuthError } from "../core/errors.ts";

/** Metadata could not be fetched, was malformed, or failed a check (issuer echo, PKCE support, resource match). */
export class DiscoveryError extends AgentAuthError {}

/** The authorization response was refused: bad `state`, wrong `iss`, or an error the server sent back. */
export class AuthorizationResponseError extends AgentAuthError {
  /** The OAuth `error` the server returned, when it returned one (e.g. `access_denied`). */
  readonly oauthError?: string;
  constructor(code: string, message: string, options?: { cause?: unknown; oauthError?: string }) {
    super(code, message, options);
    this.oauthError = options?.oauthError;
  }
}

/** The token, revocation, introspection or registration endpoint answered with an error. */
export class TokenEndpointError extends AgentAuthError {
  readonly oauthError?: string;
  readonly status?: number;
  constructor(
    code: string,
    message: string,
    options?: { cause?: unknown; oauthError?: string; status?: number },
  ) {
    super(code, message, options);
    this.oauthError = options?.oauthError;
    this.status = options?.status;
  }
}

/**
 * The provider is rate limiting us (HTTP 429, or GitHub's 403 with `x-ratelimit-remaining: 0`). Retryable: wait
 * `retryAfterMs` when the provider said how long. Nothing is stored or marked while it lasts.
 */
export class RateLimitedError extends TokenEndpointError {
  readonly retryable = true;
  readonly retryAfterMs?: number;
  constructor(provider: string, limit: { retryAfterMs?: number }) {
    const wait =
      limit.retryAfterMs !== undefined
        ? `in ${Math.max(1, Math.ceil(limit.retryAfterMs / 1000))} s`
        : "in a minute";
    super("rate_limited", `${provider} is rate limiting requests right now. Try again ${wait}.`, {
      status: 429,
    });
    this.retryAfterMs = limit.retryAfterMs;
  }
}

/** Only a new interactive login helps: no credential, or the refresh token was refused for good. */
export class LoginRequiredError extends AgentAuthError {}

/** The device authorization grant ended without tokens (expired, denied, cancelled). */
export class DeviceFlowError extends AgentAuthError {}

/** The network failed or timed out, or a non-loopback URL was not HTTPS. */
export class TransportError extends AgentAuthError {}

/** The flow was cancelled by the caller's AbortSignal. */
export class CancelledError extends AgentAuthError {
  constructor(message = "The operation was cancelled.") {
    super("cancelled", message);
  }
}

/**
 * Maps whatever oauth4webapi or fetch threw into our typed errors. `what` names the step for the message
 * ("token request", "discovery"). Messages carry the server's error code and description, never request bodies.
 */
export function toOAuthError(error: unknown, what: string): AgentAuthError {
  if (error instanceof AgentAuthError) return error;
  if (error instanceof oauth.ResponseBodyError) {
    const description = error.error_description ? `: ${quote(error.error_description)}` : "";
    const code = error.error === "invalid_grant" ? "invalid_grant" : "token_endpoint_error";
    return new TokenEndpointError(
      code,
      `The authorization server refused the ${what} (${quote(error.error, 64)}${description}).`,
      {
        cause: error,
        oauthError: error.error,
        status: error.status,
      },
    );
  }
  if (error instanceof oauth.WWWAuthenticateChallengeError) {
    // A 401 from the token endpoint carries its OAuth error in the challenge (RFC 6749 §5.2: invalid_client).
    const oauthError = error.cause
      .map((c) => c.parameters.error)
      .find((e) => typeof e === "string");
    return new TokenEndpointError(
      "token_endpoint_error",
      `The authorization server refused the ${what} (HTTP ${error.status}${oauthError ? `, ${quote(oauthError, 64)}` : ""}).`,
      { cause: error, status: error.status, oauthError },
    );
  }
  if (
    error instanceof oauth.OperationProcessingError &&
    error.cause instanceof Response &&
    error.cause.status >= 500
  ) {
    return new TokenEndpointError(
      "server_error",
      `The authorization server failed the ${what} (HTTP ${error.cause.status}); try again later.`,
      {
        status: error.cause.status,
      },
    );
  }
  if (error instanceof oauth.OperationProcessingError) {
    return new TokenEndpointError(
      "invalid_response",
      `The authorization server's ${what} response failed validation (${error.code ?? "invalid"}): ${quote(error.message)}`,
      { cause: error },
    );
  }
  if (
    error instanceof DOMException &&
    (error.name === "TimeoutError" || error.name === "AbortError")
  ) {
    return error.name === "AbortError"
      ? new CancelledError()
      : new TransportError(
          "timeout",
          `The ${what} timed out. Check that the authorization server is reachable.`,
        );
  }
  // undici signals network failures as `TypeError: fetch failed` with the socket error as cause.
  if (error instanceof TypeError && error.message === "fetch failed") {
    return new TransportError(
      "network_error",
      `The ${what} failed at the network level (${quote(String((error.cause as Error | undefined)?.message ?? error.message))}). Check the URL and that the server is running.`,
      {
        cause: error,
      },
    );
  }
  if (error instanceof TypeError || error instanceof SyntaxError) {
    return new TokenEndpointError(
      "invalid_response",
      `The authorization server's ${what} response could not be read.`,
      { cause: error },
    );
  }
  return new AgentAuthError("internal_error", `Unexpected failure during the ${what}.`, {
    cause: error,
  });
}

/**
 * What the authorization server said, for a message: callers pass messages on as they are (the MCP bridges hand
 * them to an agent, and so to its model), so escape sequences, bidi overrides and invisible text go here.
 */
export function quote(text: string, max = 200): string {
  return peerText(text, { max });
}
