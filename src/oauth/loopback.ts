/**
 * The loopback redirect listener for native apps and CLIs (RFC 8252 §7.3): binds 127.0.0.1 on a free port,
 * waits for the one redirect carrying the expected `state`, answers the browser with a short page, and closes.
 */

import { timingSafeEqual } from "node:crypto";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { CancelledError, DeviceFlowError } from "./errors.ts";

export interface LoopbackListener {
  /** `http://127.0.0.1:<port><path>`: register it (any port) and send it as `redirect_uri`. */
  redirectUri: string;
  /** Resolves with the redirect URL once a request with `state === expectedState` arrives. */
  waitForCallback(expectedState: string, options?: WaitOptions): Promise<URL>;
  close(): Promise<void>;
}

export interface WaitOptions extends IssuerCheck {
  timeoutMs?: number;
  signal?: AbortSignal;
}

/**
 * What the page checks of RFC 9207 `iss` before telling the person anything. The redirect is still handed over
 * either way: the caller's own check (completeAuthorization) is what refuses it, with a typed error.
 */
export interface IssuerCheck {
  /** The authorization server asked; a redirect whose `iss` names another is a mix-up, not a sign-in. */
  issuer?: string;
  /** The server advertises `authorization_response_iss_parameter_supported`: a missing `iss` is refused too. */
  issRequired?: boolean;
}

function issuerMismatch(url: URL | null, check: IssuerCheck): boolean {
  if (check.issuer === undefined || !url) return false;
  const iss = url.searchParams.get("iss");
  return iss === null ? check.issRequired === true : iss !== check.issuer;
}

/**
 * The page the browser lands on. RFC 6749 §4.1.2.1: a refusal comes back as `error` on the redirect; after Deny
 * (`access_denied`) the person chose this, so say so rather than claim a sign-in arrived.
 */
export function landingPage(url: URL | null, check: IssuerCheck = {}): string {
  const error = url?.searchParams.get("error");
  const [title, heading, text] = issuerMismatch(url, check)
    ? [
        "Sign-in did not complete",
        "Sign-in did not complete",
        // RFC 9207: said before anything else, so a mix-up never reads as a sign-in.
        "This answer came from another server than the one agentauth asked, so agentauth refused it. " +
          "Return to your terminal and sign in again.",
      ]
    : error === null || error === undefined
      ? [
          // Not "Signed in": the code is still to be redeemed, which may fail; the terminal says the outcome.
          "Sign-in received",
          "You can close this window",
          "Return to your terminal: agentauth has received the sign-in and finishes it there.",
        ]
      : error === "access_denied"
        ? [
            "Access denied",
            "You denied access",
            "agentauth was told and stopped waiting. You can close this window.",
          ]
        : [
            "Sign-in did not complete",
            "Sign-in did not complete",
            // The code is the server's text: only a plain RFC 6749 token is shown, never markup.
            `The server answered ${/^[A-Za-z0-9_.-]{1,64}$/.test(error) ? error : "with an error"}; ` +
              "agentauth was told. Return to your terminal for what to do next.",
          ];
  return `<!DOCTYPE html><html><head><meta charset="utf-8"><title>${title}</title></head>
<body><h1>${heading}</h1><p>${text}</p></body></html>`;
}

export async function listenOnLoopback(
  options: { port?: number; path?: string } = {},
): Promise<LoopbackListener> {
  const path = options.path ?? "/callback";
  let waiter:
    | { state: Buffer; check: IssuerCheck; resolve: (url: URL) => void; cancel: () => void }
    | undefined;
  const server = createServer((req, res) => {
    // URL.parse, not new URL: Node's HTTP parser accepts request targets WHATWG URL rejects (`//[`).
    const url = URL.parse(req.url ?? "/", "http://127.0.0.1");
    const state = url?.searchParams.get("state");
    // Requests without the expected state (a stray tab, a hostile page probing the port) are refused and ignored.
    if (
      req.method !== "GET" ||
      url?.pathname !== path ||
      !waiter ||
      !state ||
      !sameState(waiter.state, state)
    ) {
      res.writeHead(400, {
        "content-type": "text/plain; charset=utf-8",
        "cache-control": "no-store",
      });
      res.end("This address only accepts the sign-in redirect it is waiting for.");
      return;
    }
    res.writeHead(200, { "content-type": "text/html; charset=utf-8", "cache-control": "no-store" });
    res.end(landingPage(url, waiter.check));
    const { resolve } = waiter;
    waiter = undefined;
    resolve(new URL(`http://127.0.0.1:${(server.address() as AddressInfo).port}${req.url}`));
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(options.port ?? 0, "127.0.0.1", () => resolve());
  });
  const port = (server.address() as AddressInfo).port;
  return {
    redirectUri: `http://127.0.0.1:${port}${path}`,
    waitForCallback(expectedState, waitOptions = {}) {
      return new Promise<URL>((resolve, reject) => {
        const timeoutMs = waitOptions.timeoutMs ?? 10 * 60_000;
        const cleanup = () => {
          clearTimeout(timer);
          waitOptions.signal?.removeEventListener("abort", onAbort);
        };
        const timer = setTimeout(() => {
          waiter = undefined;
          reject(
            new DeviceFlowError(
              "login_timeout",
              "No sign-in arrived in time; run the login again.",
            ),
          );
        }, timeoutMs);
        const onAbort = () => {
          cleanup();
          waiter = undefined;
          reject(new CancelledError("The sign-in was cancelled."));
        };
        if (waitOptions.signal?.aborted) return onAbort();
        waitOptions.signal?.addEventListener("abort", onAbort, { once: true });
        waiter = {
          state: Buffer.from(expectedState),
          check: { issuer: waitOptions.issuer, issRequired: waitOptions.issRequired },
          resolve: (url) => {
            cleanup();
            resolve(url);
          },
          // close() while waiting: end the wait (and its timer) instead of keeping the process alive.
          cancel: onAbort,
        };
      });
    },
    close: () =>
      new Promise<void>((resolve) => {
        waiter?.cancel();
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

function sameState(expected: Buffer, actual: string): boolean {
  const candidate = Buffer.from(actual);
  return candidate.length === expected.length && timingSafeEqual(candidate, expected);
}
