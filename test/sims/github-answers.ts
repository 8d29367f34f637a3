/** GitHub simulator: how the OAuth endpoints answer (form/JSON/XML by Accept, documented errors) and faults. */

import type { IncomingMessage, ServerResponse } from "node:http";
import { sendText } from "./common.ts";
import type { GitHubFault, GitHubModel } from "./github-state.ts";

const TROUBLESHOOTING =
  "https://docs.github.com/apps/managing-oauth-apps/troubleshooting-oauth-app-access-token-request-errors";
const DEVICE_ERRORS =
  "https://docs.github.com/developers/apps/authorizing-oauth-apps#error-codes-for-the-device-flow";

// docs.github.com "Troubleshooting OAuth app access token request errors" and "Authorizing OAuth apps" §"Error
// codes for the device flow": each error, its description and its documentation link.
const ERRORS: Record<string, [string, string]> = {
  incorrect_client_credentials: [
    "The client_id and/or client_secret passed are incorrect.",
    `${TROUBLESHOOTING}#incorrect-client-credentials`,
  ],
  redirect_uri_mismatch: [
    "The redirect_uri MUST match the registered callback URL for this application.",
    `${TROUBLESHOOTING}#redirect-uri-mismatch2`,
  ],
  bad_verification_code: [
    "The code passed is incorrect or expired.",
    `${TROUBLESHOOTING}#bad-verification-code`,
  ],
  bad_refresh_token: [
    "The refresh token passed is incorrect or expired.",
    "https://docs.github.com/apps/creating-github-apps/authenticating-with-a-github-app/refreshing-user-access-tokens",
  ],
  unsupported_grant_type: ["The grant type is not supported.", DEVICE_ERRORS],
  authorization_pending: ["The authorization request is still pending.", DEVICE_ERRORS],
  slow_down: ["Too many requests have been made in the same timeframe.", DEVICE_ERRORS],
  expired_token: ["The device code has expired.", DEVICE_ERRORS],
  access_denied: ["The authorization request was denied.", DEVICE_ERRORS],
  incorrect_device_code: ["The device_code provided is not valid.", DEVICE_ERRORS],
  device_flow_disabled: ["Device Flow must be explicitly enabled for this App", DEVICE_ERRORS],
};

/**
 * docs.github.com "Authorizing OAuth apps" §2 ("By default, the response takes the following form ... You can also
 * receive the response in different formats if you provide the format in the Accept header"): form-encoded unless
 * Accept asks for JSON or XML. Errors are answered with HTTP 200 and an `error` field, like successes.
 */
export function answer(
  req: IncomingMessage,
  res: ServerResponse,
  body: Record<string, string | number>,
) {
  const accept = (req.headers.accept ?? "").toLowerCase();
  if (accept.includes("application/json")) {
    sendText(res, 200, JSON.stringify(body), "application/json; charset=utf-8");
  } else if (accept.includes("application/xml")) {
    const fields = Object.entries(body)
      .map(
        ([k, v]) => `<${k}>${String(v).replace(/[<&>]/g, (c) => `&#${c.charCodeAt(0)};`)}</${k}>`,
      )
      .join("");
    sendText(res, 200, `<OAuth>${fields}</OAuth>`, "application/xml; charset=utf-8");
  } else {
    const form = new URLSearchParams(Object.entries(body).map(([k, v]) => [k, String(v)]));
    sendText(res, 200, form.toString(), "application/x-www-form-urlencoded; charset=utf-8");
  }
}

export function error(
  code: string,
  extra: Record<string, string | number> = {},
): Record<string, string | number> {
  const [description, uri] = ERRORS[code] ?? ["", TROUBLESHOOTING];
  return { error: code, error_description: description, error_uri: uri, ...extra };
}

/** GitHub's "Unicorn!" page: what its front end serves when the application behind it is unavailable. */
export const UNICORN_HTML =
  "<!DOCTYPE html><html><head><title>Unicorn! &middot; GitHub</title></head><body>" +
  "<h1>This page is taking too long to load.</h1><p>Sorry about that. Please try refreshing and contact us " +
  "if the problem persists.</p></body></html>";

/** Answers an injected fault; also used by the REST side. */
export function sendFault(
  res: ServerResponse,
  fault: GitHubFault,
  model: GitHubModel,
  rest: boolean,
) {
  if (fault === "html" || fault === "html200") {
    sendText(res, fault === "html" ? 502 : 200, UNICORN_HTML, "text/html; charset=utf-8");
  } else if (fault === "server_error") {
    sendText(
      res,
      500,
      JSON.stringify({ message: "Server Error" }),
      "application/json; charset=utf-8",
    );
  } else if (fault === "no_token") {
    sendText(
      res,
      200,
      JSON.stringify({ token_type: "bearer", scope: "" }),
      "application/json; charset=utf-8",
    );
  } else {
    // docs.github.com "Rate limits for the REST API" §"Exceeding the rate limit": 403 (or 429) with
    // x-ratelimit-remaining: 0 and x-ratelimit-reset (UTC epoch seconds).
    const reset = Math.floor(model.clock.now() / 1000) + 3600;
    const body = {
      message: `API rate limit exceeded for ${rest ? "user ID 1001" : "this client"}.`,
      documentation_url:
        "https://docs.github.com/rest/overview/rate-limits-for-the-rest-api#about-secondary-rate-limits",
    };
    sendText(res, 403, JSON.stringify(body), "application/json; charset=utf-8", {
      "x-ratelimit-limit": "5000",
      "x-ratelimit-remaining": "0",
      "x-ratelimit-reset": String(reset),
      "x-ratelimit-used": "5000",
      "x-ratelimit-resource": "core",
    });
  }
}

/** Scopes arrive space-delimited (the docs) or comma-separated; GitHub answers them comma-separated. */
export function normaliseScope(scope: string | undefined): string {
  return (scope ?? "")
    .split(/[\s,]+/)
    .filter((s) => s.length > 0)
    .join(",");
}
