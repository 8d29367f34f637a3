/**
 * Shared steps of the provider engine tests: playing the browser against a simulator, checking that no secret
 * reached an error, and the hostile-answer round every preset meets (an HTML 502, a 200 without a token, a rate
 * limit, a 500: each a typed error with its code, nothing stored).
 */

import assert from "node:assert/strict";
import { AgentAuthError } from "../../src/core/errors.ts";
import { RateLimitedError, TokenEndpointError } from "../../src/oauth/index.ts";
import { type CredentialStore, MemoryCredentialStore } from "../../src/vault/index.ts";

/** Plays the browser: the authorization URL to the simulator, then its redirect back to our loopback listener. */
export async function browse(url: URL): Promise<void> {
  const consent = await fetch(url, { redirect: "manual" });
  const location = consent.headers.get("location");
  assert.ok(location, `the simulator redirected (HTTP ${consent.status})`);
  await (await fetch(location)).text();
}

/** What a simulator exposes that lets a test name the secrets a failing request carried. */
export interface SecretSource {
  clientSecret: string;
  lastTokenRequest(): { params?: Record<string, string> } | null | undefined;
}

/** Neither the client secret nor any long request value (code, verifier, refresh token) is in the error. */
export function assertNoSecret(
  error: unknown,
  sim: SecretSource,
  more: (string | undefined)[] = [],
): void {
  const text = `${(error as Error).message} ${JSON.stringify(error)} ${String((error as Error).cause)}`;
  assert.equal(text.includes(sim.clientSecret), false, "the client secret is not in the error");
  for (const value of [...Object.values(sim.lastTokenRequest()?.params ?? {}), ...more]) {
    if (value && value.length >= 16)
      assert.equal(text.includes(value), false, "no request value is in the error");
  }
}

export type HostileFault = "html" | "no_token" | "rate_limit" | "server_error";

/** The four hostile token answers and the code each must become. */
export const HOSTILE_CASES: readonly (readonly [HostileFault, string])[] = [
  ["html", "server_error"],
  ["no_token", "invalid_response"],
  ["rate_limit", "rate_limited"],
  ["server_error", "server_error"],
];

/** Each fault in turn at the next token answer: a typed error with its code, nothing stored, no secret shown. */
export async function assertHostileAnswers(options: {
  // Each simulator has more fault kinds than these four; any that includes them will do.
  sim: SecretSource & { failNext(fault: never): void };
  login: (store: CredentialStore) => Promise<unknown>;
  /** The wait the simulator's rate-limit answer asks for. */
  retryAfterMs: number;
}): Promise<void> {
  for (const [fault, code] of HOSTILE_CASES) {
    const store = new MemoryCredentialStore();
    (options.sim.failNext as (fault: HostileFault) => void)(fault);
    await assert.rejects(options.login(store), (error: unknown) => {
      assert.ok(error instanceof TokenEndpointError, `${fault}: ${String(error)}`);
      assert.equal(error.code, code, `${fault}: ${error.message}`);
      if (fault === "rate_limit") {
        assert.ok(error instanceof RateLimitedError);
        assert.equal(error.retryAfterMs, options.retryAfterMs);
      }
      assertNoSecret(error, options.sim);
      return true;
    });
    assert.deepEqual(await store.list(), [], `${fault}: nothing stored`);
  }
}

/** `browse`, remembering the authorization URL and the code the simulator redirected with. */
export function browser(): {
  browse: (url: URL) => Promise<void>;
  seen: { url?: URL; code?: string };
} {
  const seen: { url?: URL; code?: string } = {};
  const browse = async (url: URL): Promise<void> => {
    seen.url = url;
    const consent = await fetch(url, { redirect: "manual" });
    const location = consent.headers.get("location");
    assert.ok(location, `the simulator redirected (HTTP ${consent.status})`);
    seen.code = new URL(location).searchParams.get("code") ?? undefined;
    await (await fetch(location)).text();
  };
  return { browse, seen };
}

/** None of `secrets` is in the error's message, JSON or stack. */
export function assertNoneLeaked(error: unknown, secrets: (string | undefined)[]): void {
  const text = `${(error as Error).message} ${JSON.stringify(error)} ${String((error as Error).stack)}`;
  for (const secret of secrets) {
    if (secret) assert.ok(!text.includes(secret), "a secret leaked into the error");
  }
}

/** The typed error a promise must reject with. */
export async function failure(promise: Promise<unknown>): Promise<AgentAuthError> {
  const error = await promise.then(
    () => assert.fail("it succeeded"),
    (e: unknown) => e,
  );
  assert.ok(error instanceof AgentAuthError, String(error));
  return error;
}
