/**
 * The tool server's gate before any work: the `Host` header (DNS rebinding) and the runtime's invocation
 * authentication (src/rap/invocation-auth.ts). Pure apart from the replay ledger (replay-ledger.ts: in memory, a
 * SQLite file or PostgreSQL); the server turns a refusal into its HTTP answer.
 */

import type { IncomingHttpHeaders } from "node:http";
import type { Logger } from "../../core/log.ts";
import {
  DEFAULT_REPLAY_WINDOW_SECONDS,
  type InvocationAuth,
  type InvocationAuthFailure,
  invocationAuthChallenge,
  SIGNATURE_HEADER,
  TIMESTAMP_HEADER,
  verifyInvocationSignature,
} from "../invocation-auth.ts";
import type { ReplayLedger } from "./replay-ledger.ts";

export interface Refusal {
  status: number;
  body: { error: string; reason?: string; message: string };
  headers: Record<string, string>;
}

/**
 * Host names a loopback listener answers to. A web page on evil.example that rebinds its name to 127.0.0.1 still
 * sends `Host: evil.example`; refusing it keeps browsers out even where invocation auth is off.
 */
export function loopbackHosts(port: number, extra: readonly string[] = []): Set<string> {
  return new Set(
    [`127.0.0.1:${port}`, `localhost:${port}`, `[::1]:${port}`, ...extra].map((h) =>
      h.toLowerCase(),
    ),
  );
}

export function hostRefusal(
  allowed: ReadonlySet<string> | undefined,
  host: string | undefined,
): Refusal | undefined {
  if (allowed === undefined) return undefined;
  if (host !== undefined && allowed.has(host.toLowerCase())) return undefined;
  return {
    status: 421,
    headers: {},
    body: {
      error: "misdirected_request",
      message:
        "This tool does not answer to that Host name. Use the address it printed when it started, or add the name to allowedHosts.",
    },
  };
}

/**
 * The hosts an HMAC signature may cover: the request's `Host` when it is one of the server's own names (the
 * loopback names, `allowedHosts`, the `publicBaseUrl` host), and the `publicBaseUrl` host. A proxy that rewrites
 * `Host` therefore still verifies against the public name the runtime signed for, while a request signed for
 * another tool never verifies here, whatever `Host` it carries.
 */
export function signedHosts(
  own: ReadonlySet<string>,
  publicHost: string,
  host: string | undefined,
): string[] {
  const given = host?.toLowerCase();
  return given !== undefined && own.has(given) && given !== publicHost
    ? [given, publicHost]
    : [publicHost];
}

export class InvocationGate {
  readonly #auth: InvocationAuth;
  readonly #ledger: ReplayLedger;
  readonly #logger: Logger;
  readonly #challenge: string;

  constructor(auth: InvocationAuth, ledger: ReplayLedger, logger: Logger) {
    this.#auth = auth;
    this.#ledger = ledger;
    this.#logger = logger;
    this.#challenge = invocationAuthChallenge(auth);
  }

  /** True when the body must be read before the check (HMAC signs it); false for bearer. */
  get needsBody(): boolean {
    return this.#auth.scheme === "hmac-sha256";
  }

  /** A refusal for a request that carries no credentials at all, decided before its body is read. */
  early(headers: IncomingHttpHeaders): Refusal | undefined {
    if (this.#auth.scheme === "bearer") return undefined;
    if (headers[TIMESTAMP_HEADER] === undefined && headers[SIGNATURE_HEADER] === undefined) {
      return this.#refusal("missing");
    }
    return undefined;
  }

  /**
   * `hosts`: the names the runtime may have signed for (see signedHosts). A signature that verifies is recorded in
   * the replay ledger before anything runs; already there, the request is `replayed`. A ledger that does not answer
   * refuses the request with 503 (nothing ran; the runtime retries 5xx) rather than risk running it twice.
   */
  async check(
    method: string,
    hosts: readonly string[],
    path: string,
    headers: IncomingHttpHeaders,
    body: Uint8Array,
  ): Promise<Refusal | undefined> {
    const verdict = verifyInvocationSignature(this.#auth, {
      method,
      host: hosts,
      path,
      headers,
      body,
    });
    if (!verdict.ok) return this.#refusal(verdict.reason);
    if (verdict.accepted === undefined) return undefined;
    let outcome: "ok" | "replayed" | "stale";
    try {
      outcome = await this.#ledger.remember(verdict.accepted);
    } catch (error) {
      this.#logger.error("rap.request.replay_check_failed", { ledger: this.#ledger.label, error });
      return {
        status: 503,
        headers: { "retry-after": "1" },
        body: {
          error: "replay_check_unavailable",
          message:
            "The tool could not check this request against replays (its storage did not answer); nothing ran. Retry in a moment.",
        },
      };
    }
    return outcome === "ok" ? undefined : this.#refusal(outcome);
  }

  #refusal(reason: InvocationAuthFailure): Refusal {
    // RFC 6750 §3.1 style: no error code when credentials are absent, invalid_request when malformed.
    const code =
      reason === "missing" ? "" : reason === "malformed" ? "invalid_request" : "invalid_token";
    return {
      status: 401,
      headers: {
        "www-authenticate": code ? `${this.#challenge}, error="${code}"` : this.#challenge,
      },
      body: { error: "unauthorized", reason, message: this.#message(reason) },
    };
  }

  #message(reason: InvocationAuthFailure): string {
    const how =
      this.#auth.scheme === "bearer"
        ? "Send Authorization: Bearer with the tool's invocation secret"
        : `Sign each request with the tool's invocation secret (${TIMESTAMP_HEADER}, ${SIGNATURE_HEADER}; see docs/rap.md)`;
    switch (reason) {
      case "missing":
        return `This tool requires invocation authentication. ${how}.`;
      case "malformed":
        return `The invocation authentication headers are malformed. ${how}.`;
      case "bad_signature":
        return `The invocation credentials are wrong. Check that the runtime uses the same secret file as the tool.`;
      case "stale": {
        const window =
          this.#auth.scheme === "hmac-sha256"
            ? (this.#auth.replayWindowSeconds ?? DEFAULT_REPLAY_WINDOW_SECONDS)
            : DEFAULT_REPLAY_WINDOW_SECONDS;
        return `The request's timestamp is more than ${window} s away from the tool's clock. Sync the clocks and sign each attempt afresh.`;
      }
      case "replayed":
        return "This signed request was already accepted once. Sign each attempt afresh.";
    }
  }
}
