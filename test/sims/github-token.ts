/** GitHub simulator: the token endpoint (code, refresh, device grants) and the device-code endpoint. */

import type { IncomingMessage, ServerResponse } from "node:http";
import { parseBasic, parseParams, randomHex, redactParams, s256, sameSecret } from "./common.ts";
import { answer, error, normaliseScope, sendFault } from "./github-answers.ts";
import type { GitHubModel, GitHubUser } from "./github-state.ts";

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
