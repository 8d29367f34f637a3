/** HTTP policy for every OAuth request: HTTPS except on loopback, a timeout, and a cancellation signal. */

import * as oauth from "oauth4webapi";
import { TransportError } from "./errors.ts";
import type { CustomFetch } from "./quirks/index.ts";

export const DEFAULT_TIMEOUT_MS = 10_000;

export interface RequestPolicy {
  timeoutMs?: number;
  signal?: AbortSignal;
}

/** RFC 8252 §8.3: loopback IP literals (and `localhost`) are the only places plain HTTP is acceptable. */
export function isLoopback(url: URL): boolean {
  const host = url.hostname;
  return (
    host === "localhost" ||
    host === "[::1]" ||
    host === "::1" ||
    /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(host)
  );
}

export function assertSecureUrl(url: URL, what: string): void {
  if (url.protocol === "https:") return;
  if (url.protocol === "http:" && isLoopback(url)) return;
  throw new TransportError(
    "insecure_transport",
    `The ${what} must use https:// (plain http is allowed only on loopback).`,
  );
}

/**
 * Where a provider's quirks ride on its authorization server metadata, the way oauth4webapi itself attaches
 * `_expectedIssuer`: every engine request to that server goes through this fetch (see `src/oauth/quirks`).
 */
export const serverFetch: unique symbol = Symbol("agentauth.serverFetch");

/** Metadata that may carry a provider's `customFetch`. */
export type QuirkyServer = oauth.AuthorizationServer & { [serverFetch]?: CustomFetch };

/**
 * oauth4webapi options for a request to `url`: insecure HTTP is permitted only for loopback targets; requests to a
 * provider's server (`as`) go through its quirks.
 */
export function requestOptions(url: URL | string, policy: RequestPolicy = {}, as?: QuirkyServer) {
  const target = typeof url === "string" ? new URL(url) : url;
  assertSecureUrl(target, "authorization server URL");
  const timeout = AbortSignal.timeout(policy.timeoutMs ?? DEFAULT_TIMEOUT_MS);
  const custom = as?.[serverFetch];
  return {
    [oauth.allowInsecureRequests]: isLoopback(target),
    signal: policy.signal ? AbortSignal.any([policy.signal, timeout]) : timeout,
    ...(custom ? { [oauth.customFetch]: custom } : {}),
  };
}

/** Resolves after `ms`, or rejects with the signal's reason when it aborts first. */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const timer = setTimeout(() => {
      signal?.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal?.reason);
    };
    signal?.addEventListener("abort", onAbort, { once: true });
  });
}
