/**
 * The device authorization grant (RFC 8628): shows the person a URL and code, then polls the token endpoint at
 * the server's `interval`, adds 5 s on every `slow_down` (§3.5), stops at `expires_in`, and is cancellable.
 */

import * as oauth from "oauth4webapi";
import { clientParts, type OAuthClient } from "./client.ts";
import type { AuthorizationServer } from "./discovery.ts";
import { type DpopHandle, withDpopNonce } from "./dpop.ts";
import { CancelledError, DeviceFlowError, toOAuthError } from "./errors.ts";
import { type RequestPolicy, requestOptions, sleep } from "./http.ts";
import { type TokenSet, toTokenSet } from "./tokens.ts";

export interface DevicePrompt {
  /** The authorization server asking: name its host to the person (RFC 8628 §5.4), so a page elsewhere stands out. */
  issuer: string;
  verificationUri: string;
  verificationUriComplete?: string;
  userCode: string;
  expiresInSeconds: number;
}

export interface DeviceLoginOptions extends RequestPolicy {
  as: AuthorizationServer;
  client: OAuthClient;
  scope?: string;
  resource?: string;
  /**
   * More resources the grant should cover (RFC 8707 §2: `resource` may repeat), so one sign-in serves several
   * resource servers; the token request still names `resource` alone, which the access token is bound to.
   */
  alsoResources?: readonly string[];
  /** Called once with what the person must see; the user code is not a secret (they type it), the device code is. */
  onPrompt(prompt: DevicePrompt): void | Promise<void>;
  /** Called after each poll, for spinners and tests. */
  onPoll?(event: { result: "pending" | "slow_down"; intervalSeconds: number }): void;
  /** Ask for DPoP-bound tokens (RFC 9449 §5), proving this key at the token endpoint. */
  dpop?: DpopHandle;
}

/** RFC 8628 §3.2: when the server gives no interval, clients MUST use 5 seconds. */
const DEFAULT_INTERVAL_S = 5;

export async function deviceLogin(options: DeviceLoginOptions): Promise<TokenSet> {
  const { as, signal } = options;
  if (!as.device_authorization_endpoint) {
    throw new DeviceFlowError(
      "device_flow_unsupported",
      `The authorization server ${as.issuer} does not support the device flow.`,
    );
  }
  const { client, auth } = clientParts(options.client);
  const params = new URLSearchParams();
  if (options.scope) params.set("scope", options.scope);
  if (options.resource) params.set("resource", options.resource);
  for (const other of options.alsoResources ?? []) params.append("resource", other);

  let device: oauth.DeviceAuthorizationResponse;
  try {
    const response = await oauth.deviceAuthorizationRequest(
      as,
      client,
      auth,
      params,
      requestOptions(as.device_authorization_endpoint, options, as),
    );
    device = await oauth.processDeviceAuthorizationResponse(as, client, response);
  } catch (error) {
    // GitHub answers the device code request itself with `device_flow_disabled` when the app has it off.
    if (error instanceof oauth.ResponseBodyError && error.error === "device_flow_disabled") {
      throw deviceFlowDisabled(error);
    }
    throw toOAuthError(error, "device authorization request");
  }
  await options.onPrompt({
    issuer: as.issuer,
    verificationUri: device.verification_uri,
    verificationUriComplete: device.verification_uri_complete,
    userCode: device.user_code,
    expiresInSeconds: device.expires_in,
  });

  const deadline = Date.now() + device.expires_in * 1000;
  let interval = device.interval ?? DEFAULT_INTERVAL_S;
  const tokenEndpoint = as.token_endpoint ?? as.issuer;
  for (;;) {
    try {
      await sleep(interval * 1000, signal);
    } catch {
      throw new CancelledError("The device login was cancelled.");
    }
    if (Date.now() >= deadline) throw expired();
    try {
      const tokens = await withDpopNonce(options.dpop, async () => {
        const response = await oauth.deviceCodeGrantRequest(as, client, auth, device.device_code, {
          ...requestOptions(tokenEndpoint, options, as),
          additionalParameters: options.resource ? { resource: options.resource } : undefined,
          DPoP: options.dpop,
        });
        return oauth.processDeviceCodeResponse(as, client, response);
      });
      return toTokenSet(tokens, options.scope);
    } catch (error) {
      if (error instanceof oauth.ResponseBodyError) {
        if (error.error === "authorization_pending") {
          options.onPoll?.({ result: "pending", intervalSeconds: interval });
          continue;
        }
        if (error.error === "slow_down") {
          // RFC 8628 §3.5: add 5 s; GitHub also says the new interval in the answer, which wins when longer.
          const said = Number((error.cause as Record<string, unknown> | undefined)?.interval);
          interval = Math.max(interval + 5, Number.isFinite(said) && said <= 300 ? said : 0);
          options.onPoll?.({ result: "slow_down", intervalSeconds: interval });
          continue;
        }
        if (error.error === "expired_token") throw expired();
        if (error.error === "device_flow_disabled") throw deviceFlowDisabled(error);
        if (error.error === "access_denied") {
          throw new DeviceFlowError(
            "access_denied",
            "The sign-in was denied on the verification page. Run the login again to retry.",
          );
        }
      }
      if (signal?.aborted) throw new CancelledError("The device login was cancelled.");
      throw toOAuthError(error, "device token request");
    }
  }
}

/** The refusal stays the cause (`cause.error === "device_flow_disabled"`), for callers that say more. */
function deviceFlowDisabled(cause: oauth.ResponseBodyError): DeviceFlowError {
  return new DeviceFlowError(
    "device_flow_unsupported",
    "The device flow is disabled for this app at the provider. Enable it in the app's settings (GitHub: " +
      '"Enable Device Flow"), or sign in with the browser flow.',
    { cause },
  );
}

function expired(): DeviceFlowError {
  return new DeviceFlowError(
    "device_code_expired",
    "The device code expired before the sign-in was completed. Run the login again.",
  );
}
