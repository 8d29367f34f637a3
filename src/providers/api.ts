/**
 * Calls to a provider's own REST API (GitHub's `/user`, Slack's `auth.revoke`): the engine's transport policy
 * (HTTPS except loopback, a timeout, cancellation), a size cap, rate limits as `RateLimitedError`, and typed
 * errors that never carry the token or the body.
 */

import type { Secret } from "../core/secret.ts";
import {
  assertSecureUrl,
  RateLimitedError,
  type RequestPolicy,
  rateLimitOf,
  readCappedText,
  TransportError,
} from "../oauth/index.ts";
import { ProviderApiError } from "./errors.ts";

const DEFAULT_TIMEOUT_MS = 10_000;
const MAX_BODY_BYTES = 1024 * 1024;

export interface ApiRequest extends RequestPolicy {
  method?: string;
  headers?: Record<string, string>;
  body?: string;
  /** Names the provider in messages ("GitHub"). */
  provider: string;
  /** Names the call in messages ("account lookup"). */
  what: string;
}

export interface ApiAnswer {
  status: number;
  headers: Headers;
  /** Parsed JSON, or undefined for an empty body (204). */
  json: unknown;
}

export async function apiRequest(url: string, request: ApiRequest): Promise<ApiAnswer> {
  const target = new URL(url);
  assertSecureUrl(target, `${request.provider} API URL`);
  const timeout = AbortSignal.timeout(request.timeoutMs ?? DEFAULT_TIMEOUT_MS);
  let response: Response;
  try {
    response = await fetch(target, {
      method: request.method ?? "GET",
      headers: { accept: "application/json", ...request.headers },
      body: request.body,
      redirect: "manual",
      signal: request.signal ? AbortSignal.any([request.signal, timeout]) : timeout,
    });
  } catch (error) {
    throw new TransportError(
      (error as Error).name === "TimeoutError" ? "timeout" : "network_error",
      `The ${request.provider} ${request.what} failed at the network level. Check that ${target.origin} is reachable.`,
      { cause: error },
    );
  }
  const limited = rateLimitOf(response);
  if (limited) {
    await response.body?.cancel();
    throw new RateLimitedError(request.provider, limited);
  }
  // Streamed with the cap held while reading (a chunked multi-GB answer costs at most 1 MB).
  const body = await readCappedText(response, MAX_BODY_BYTES);
  if (body === undefined) {
    throw new ProviderApiError(
      "provider_response_invalid",
      `The ${request.provider} ${request.what} answer is too large (over ${MAX_BODY_BYTES} bytes); it was not read.`,
      { status: response.status },
    );
  }
  const text = body.trim();
  if (text === "") return { status: response.status, headers: response.headers, json: undefined };
  try {
    return { status: response.status, headers: response.headers, json: JSON.parse(text) };
  } catch {
    throw new ProviderApiError(
      "provider_response_invalid",
      `The ${request.provider} ${request.what} answered with something that is not JSON (HTTP ${response.status}).`,
      { status: response.status },
    );
  }
}

/** A string member of a JSON object, or undefined. */
export function str(value: unknown, name: string): string | undefined {
  if (typeof value !== "object" || value === null) return undefined;
  const member = (value as Record<string, unknown>)[name];
  if (typeof member === "number" && Number.isSafeInteger(member)) return String(member);
  return typeof member === "string" && member !== "" ? member : undefined;
}

/**
 * GET a provider's "who am I" endpoint with the access token as Bearer; anything but 200 is
 * `provider_account_unreadable`, naming `needs` (the scope the call requires) when given.
 */
export async function accountLookup(
  url: string,
  context: RequestPolicy & { accessToken: Secret },
  options: { provider: string; headers?: Record<string, string>; needs?: string },
): Promise<unknown> {
  const answer = await apiRequest(url, {
    signal: context.signal,
    timeoutMs: context.timeoutMs,
    provider: options.provider,
    what: "account lookup",
    headers: { authorization: `Bearer ${context.accessToken.reveal()}`, ...options.headers },
  });
  if (answer.status !== 200) {
    const needs = options.needs ? `; the ${options.needs} scope is needed` : "";
    throw new ProviderApiError(
      "provider_account_unreadable",
      `${options.provider} refused the account lookup (HTTP ${answer.status})${needs}.`,
      { status: answer.status },
    );
  }
  return answer.json;
}
