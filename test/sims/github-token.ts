/** GitHub simulator: the token endpoint (code, refresh, device grants) and the device-code endpoint. */

import type { IncomingMessage, ServerResponse } from "node:http";
import {
  parseBasic,
  parseParams,
  randomHex,
  redactParams,
  s256,
  sameSecret,
  sendText,
} from "./common.ts";
import type { GitHubFault, GitHubModel, GitHubUser } from "./github-state.ts";

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

interface Client {
  id: string | undefined;
  secret: string | undefined;
}

/** POST /login/oauth/access_token */
export function handleToken(
  model: GitHubModel,
  req: IncomingMessage,
  res: ServerResponse,
  body: Buffer,
  query: URLSearchParams,
) {
  model.counters.tokenRequests++;
  const fault = model.tokenFaults.shift();
  if (fault) return sendFault(res, fault, model, false);
  // The docs describe these as query parameters of the POST; clients send them in the body. Both are read.
  const params = {
    ...Object.fromEntries(query),
    ...(parseParams(body, req.headers["content-type"]) ?? {}),
  };
  const basic = parseBasic(req.headers.authorization);
  const client: Client = basic
    ? { id: basic.user, secret: basic.password }
    : { id: params.client_id, secret: params.client_secret };
  model.last = {
    contentType: req.headers["content-type"] ?? null,
    accept: req.headers.accept ?? null,
    auth: basic ? "basic" : params.client_secret !== undefined ? "post" : "none",
    grantType: params.grant_type ?? null,
    params: redactParams(params),
  };
  const grantType = params.grant_type;
  if (grantType === undefined || grantType === "authorization_code") {
    return answer(req, res, exchangeCode(model, params, client));
  }
  if (grantType === "refresh_token") return answer(req, res, refresh(model, params, client));
  if (grantType === "urn:ietf:params:oauth:grant-type:device_code") {
    return answer(req, res, pollDevice(model, params, client));
  }
  answer(req, res, error("unsupported_grant_type"));
}

function clientOk(model: GitHubModel, client: Client, secretRequired: boolean): boolean {
  if (client.id !== model.clientId) return false;
  if (client.secret === undefined) return !secretRequired;
  return sameSecret(client.secret, model.clientSecret);
}

function exchangeCode(model: GitHubModel, params: Record<string, string>, client: Client) {
  model.counters.codeExchanges++;
  // "Authorizing OAuth apps" §2: client_id, client_secret and code are required.
  if (!clientOk(model, client, true)) return error("incorrect_client_credentials");
  const record = params.code === undefined ? undefined : model.codes.get(params.code);
  // §2: "The code ... expires after 10 minutes"; a code works once.
  if (!record || record.expiresAt <= model.clock.now()) return error("bad_verification_code");
  if (
    params.redirect_uri !== undefined &&
    record.redirectUri !== null &&
    params.redirect_uri !== record.redirectUri
  ) {
    return error("redirect_uri_mismatch");
  }
  model.codes.delete(params.code!);
  // §1 code_challenge / §2 code_verifier: the verifier must match the S256 challenge sent to /authorize.
  if (record.challenge !== null) {
    if (params.code_verifier === undefined || s256(params.code_verifier) !== record.challenge) {
      return error("bad_verification_code");
    }
  }
  return model.issue(record.user, record.scope, false);
}

function refresh(model: GitHubModel, params: Record<string, string>, client: Client) {
  model.counters.refreshGrants++;
  // "Refreshing user access tokens": client_id, client_secret (unless the token came from the device flow),
  // grant_type=refresh_token, refresh_token. "Once you use a refresh token, that refresh token and the old user
  // access token will no longer work."
  const stored =
    params.refresh_token === undefined ? undefined : model.refreshTokens.get(params.refresh_token);
  const old = stored ? model.tokens.get(stored.accessToken) : undefined;
  if (!clientOk(model, client, !(old?.viaDevice ?? false)))
    return error("incorrect_client_credentials");
  if (!stored || !old || stored.expiresAt <= model.clock.now()) return error("bad_refresh_token");
  model.revokeToken(stored.accessToken);
  return model.issue(old.user, old.scope, old.viaDevice);
}

function pollDevice(model: GitHubModel, params: Record<string, string>, client: Client) {
  model.counters.devicePolls++;
  // "Authorizing OAuth apps" §"Device flow" step 3: client_id, device_code, grant_type; no client secret.
  if (!clientOk(model, client, false)) return error("incorrect_client_credentials");
  if (!model.deviceFlowEnabled) return error("device_flow_disabled");
  const record =
    params.device_code === undefined ? undefined : model.devices.get(params.device_code);
  if (!record) return error("incorrect_device_code");
  const now = model.clock.now();
  if (record.expiresAt <= now) return error("expired_token");
  // §"Rate limits for the device flow": polling faster than the interval answers slow_down, which adds 5 s and
  // carries the new interval. 80 % of the interval counts as on time (shared machines schedule late or early).
  const tooFast = record.lastPollAt !== null && now - record.lastPollAt < record.interval * 800;
  record.lastPollAt = now;
  if (model.slowDowns > 0 || tooFast) {
    if (model.slowDowns > 0) model.slowDowns--;
    record.interval += 5;
    return error("slow_down", { interval: record.interval });
  }
  if (record.status === "pending") return error("authorization_pending");
  model.devices.delete(params.device_code!);
  model.userCodes.delete(record.userCode);
  if (record.status === "denied" || !record.user) return error("access_denied");
  return model.issue(record.user, record.scope, true);
}

const USER_CODE_ALPHABET = "BCDFGHJKLMNPQRSTVWXZ";

/** POST /login/device/code ("Authorizing OAuth apps" §"Device flow" step 1). */
export function handleDeviceCode(
  model: GitHubModel,
  origin: string,
  req: IncomingMessage,
  res: ServerResponse,
  body: Buffer,
  query: URLSearchParams,
) {
  const params = {
    ...Object.fromEntries(query),
    ...(parseParams(body, req.headers["content-type"]) ?? {}),
  };
  if (params.client_id !== model.clientId)
    return answer(req, res, error("incorrect_client_credentials"));
  if (!model.deviceFlowEnabled) return answer(req, res, error("device_flow_disabled"));
  model.counters.deviceCodes++;
  const deviceCode = randomHex(20);
  let userCode = "";
  for (const b of Buffer.from(randomHex(8), "hex"))
    userCode += USER_CODE_ALPHABET[b % USER_CODE_ALPHABET.length];
  userCode = `${userCode.slice(0, 4)}-${userCode.slice(4)}`;
  model.devices.set(deviceCode, {
    userCode,
    scope: model.appKind === "github_app" ? "" : normaliseScope(params.scope),
    expiresAt: model.clock.now() + model.deviceTtl * 1000,
    interval: model.deviceInterval,
    lastPollAt: null,
    status: "pending",
    user: null,
  });
  model.userCodes.set(userCode, deviceCode);
  // Step 1 response: device_code, user_code, verification_uri, expires_in (900), interval (5). No
  // verification_uri_complete.
  answer(req, res, {
    device_code: deviceCode,
    user_code: userCode,
    verification_uri: model.verificationUri(origin),
    expires_in: model.deviceTtl,
    interval: model.deviceInterval,
  });
}

/** The person entered the code at /login/device and clicked Authorize (or Cancel). */
export function decideDevice(
  model: GitHubModel,
  userCode: string,
  user: GitHubUser | null,
): boolean {
  const deviceCode = model.userCodes.get(userCode.toUpperCase());
  const record = deviceCode ? model.devices.get(deviceCode) : undefined;
  if (record?.status !== "pending") return false;
  record.status = user ? "approved" : "denied";
  record.user = user;
  return true;
}
