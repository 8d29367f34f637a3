/**
 * `agentauth mcp example-server` checks its --issuer before it says ready. A server whose authorization server
 * cannot be reached, or is not one, refuses every token: saying "ready" then sends a newcomer off to debug sign-in
 * instead of the typo in --issuer. An issuer that refuses connections is waited for a while, because docs/mcp.md
 * starts `agentauth idp serve &` and the example server together and either may be first to listen.
 */

import { setTimeout as sleep } from "node:timers/promises";
import { AgentAuthError } from "../../core/errors.ts";
import { discoverAuthorizationServer, TransportError } from "../../oauth/index.ts";

/** The --issuer cannot serve the example server: `issuer_unreachable` or `issuer_not_authorization_server`. */
export class ExampleIssuerError extends AgentAuthError {}

export interface IssuerCheck {
  /** How long to wait for an issuer that refuses connections (0: check once). */
  waitSeconds: number;
  /** Where the one "waiting" line goes (stderr), printed once the first attempt was refused. */
  notice: (text: string) => void;
}

/** How often a refusing issuer is asked again: often enough that the wait ends soon after it listens. */
const RETRY_MS = 250;
/** One metadata request's limit: a host that swallows packets must not hold the start for the default minute. */
const REQUEST_TIMEOUT_MS = 10_000;

/** Resolves once `issuer` serves authorization server metadata with a JWKS; throws ExampleIssuerError otherwise. */
export async function checkExampleIssuer(issuer: string, check: IssuerCheck): Promise<void> {
  const deadline = Date.now() + check.waitSeconds * 1000;
  let noticed = false;
  for (;;) {
    try {
      const metadata = await discoverAuthorizationServer(issuer, { timeoutMs: REQUEST_TIMEOUT_MS });
      if (typeof metadata.jwks_uri !== "string") {
        throw notAnAuthorizationServer(
          issuer,
          "its metadata names no jwks_uri, the keys the example server verifies tokens with",
        );
      }
      return;
    } catch (error) {
      if (error instanceof ExampleIssuerError) throw error;
      if (!(error instanceof TransportError)) {
        throw notAnAuthorizationServer(issuer, (error as Error).message, error);
      }
      if (!refused(error) || Date.now() >= deadline) throw unreachable(issuer, error, check);
      if (!noticed) {
        check.notice(
          `agentauth: waiting for the authorization server at ${issuer} to answer (up to ${check.waitSeconds} s; ` +
            "--issuer-wait changes it, Ctrl-C stops)…\n",
        );
        noticed = true;
      }
      await sleep(RETRY_MS);
    }
  }
}

function refused(error: TransportError): boolean {
  for (let cause: unknown = error; cause; cause = (cause as { cause?: unknown }).cause) {
    if ((cause as { code?: unknown }).code === "ECONNREFUSED") return true;
  }
  return false;
}

function unreachable(
  issuer: string,
  error: TransportError,
  check: IssuerCheck,
): ExampleIssuerError {
  const why = refused(error)
    ? `nothing listens there${check.waitSeconds > 0 ? ` (waited ${check.waitSeconds} s)` : ""}`
    : error.message.replace(/ Check the URL and that the server is running\.$/, "");
  return new ExampleIssuerError(
    "issuer_unreachable",
    `the authorization server at ${issuer} does not answer: ${why}. The example server was not started, since it ` +
      "could verify no token. Start the authorization server first (e.g. 'agentauth idp serve --port 4444', then " +
      "--issuer http://127.0.0.1:4444) or correct --issuer.",
    { cause: error },
  );
}

function notAnAuthorizationServer(
  issuer: string,
  why: string,
  cause?: unknown,
): ExampleIssuerError {
  return new ExampleIssuerError(
    "issuer_not_authorization_server",
    `${issuer} is not an OAuth authorization server the example server can use: ${reason(why)}. ` +
      "--issuer must be the authorization server's issuer URL exactly, path included (e.g. the one " +
      "'agentauth idp serve' prints). The example server was not started.",
    { cause },
  );
}

/** Discovery's own advice ("Check the issuer URL: …") is what the message says next: said once. */
function reason(why: string): string {
  return why.replace(/\s*Check the issuer URL:[\s\S]*$/, "").replace(/\.$/, "");
}
