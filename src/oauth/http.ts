/** HTTP policy for every OAuth request: HTTPS except on loopback, a timeout, and a cancellation signal. */

import * as oauth from "oauth4webapi";
import { TransportError } from "./errors.ts";

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

/** oauth4webapi options for a request to `url`: insecure HTTP is permitted only for loopback targets. */
export function requestOptions(url: URL | string, policy: RequestPolicy = {}) {
  const target = typeof url === "string" ? new URL(url) : url;
  assertSecureUrl(target, "authorization server URL");
  const timeout = AbortSignal.timeout(policy.timeoutMs ?? DEFAULT_TIMEOUT_MS);
  return {
    [oauth.allowInsecureRequests]: isLoopback(target),
    signal: policy.signal ? AbortSignal.any([policy.signal, timeout]) : timeout,
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
