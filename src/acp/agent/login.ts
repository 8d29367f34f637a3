/**
 * Runs an OAuth method's login inside `authenticate`: the OAuth engine does the flow; this file gets the
 * verification URL and code to the person (URL-mode elicitation when the client offers it, else our extension
 * notification, and always the agent's stderr) and ends the login when the person declines or the request is
 * cancelled.
 */

import * as acp from "@agentclientprotocol/sdk/unstable";
import { DeviceFlowError, login } from "../../oauth/index.ts";
import type { CredentialRecord } from "../../vault/types.ts";
import type { LoginPrompt } from "../wire.ts";
import type { OAuthMethod } from "./config.ts";
import type { MethodCredentials } from "./credentials.ts";
import { shownDevicePrompt } from "./device-prompt.ts";
import { loginTarget, oauthTarget, signInPhrase } from "./oauth-method.ts";

export interface PromptChannel {
  /** URL-mode elicitation; resolves with the person's answer. Absent when the client did not advertise it. */
  elicit?: (prompt: LoginPrompt) => Promise<"accept" | "decline" | "cancel">;
  /** The `_agentauth/login_prompt` extension notification. */
  notify: (prompt: LoginPrompt) => Promise<void>;
  stderr: (text: string) => void;
}

export const DEFAULT_LOGIN_TIMEOUT_MS = 10 * 60_000;

export async function runOAuthLogin(
  method: OAuthMethod,
  credentials: MethodCredentials,
  channel: PromptChannel,
  signal: AbortSignal,
): Promise<CredentialRecord> {
  const controller = new AbortController();
  const stop = () => controller.abort();
  signal.addEventListener("abort", stop, { once: true });
  let timedOut = false;
  const timer = setTimeout(
    () => {
      timedOut = true;
      stop();
      // setTimeout fires at once above 2^31-1 ms; longer timeouts are capped at ~24.8 days.
    },
    Math.min(method.timeoutMs ?? DEFAULT_LOGIN_TIMEOUT_MS, 2_147_483_647),
  );
  const deliver = async (prompt: LoginPrompt) => {
    channel.stderr(`${prompt.message}\n`);
    if (!channel.elicit) {
      await channel.notify(prompt).catch(() => {});
      return;
    }
    // Not awaited by the login: the person answers while the flow polls; declining ends the login.
    channel
      .elicit(prompt)
      .then((action) => {
        if (action !== "accept") stop();
      })
      // A client that advertised elicitation but cannot answer it still gets the prompt another way.
      .catch(() => channel.notify(prompt).catch(() => {}));
  };
  try {
    return await login({
      ...loginTarget(method),
      flow: oauthTarget(method).flow,
      store: credentials.store,
      subject: credentials.subject,
      scope: method.scope,
      resource: method.resource,
      signal: controller.signal,
      onDevicePrompt: (prompt) => {
        const p = shownDevicePrompt(prompt);
        return deliver({
          methodId: method.id,
          url: p.complete ?? p.uri,
          userCode: p.userCode,
          expiresInSeconds: prompt.expiresInSeconds,
          message: `${signInPhrase(method)}, open ${p.uri} and enter the code ${p.userCode}.`,
        });
      },
      openUrl: (url) =>
        deliver({
          methodId: method.id,
          url: url.href,
          message: `${signInPhrase(method)}, open ${url.href}`,
        }),
    });
  } catch (error) {
    if (timedOut)
      throw new DeviceFlowError(
        "login_timeout",
        "Nobody completed the sign-in in time; try again.",
      );
    throw deviceFlowDisabled(error, method) ?? error;
  } finally {
    clearTimeout(timer);
    signal.removeEventListener("abort", stop);
  }
}

/**
 * GitHub refuses a device code request with `device_flow_disabled` when the app has not opted in ("Authorizing
 * OAuth apps" §"Error codes for the device flow",
 * https://docs.github.com/apps/oauth-apps/building-oauth-apps/authorizing-oauth-apps#error-codes-for-the-device-flow).
 * The engine names the fix only when the refusal comes while polling; here the person (and the agent's author)
 * hear what to switch on wherever it comes.
 */
export function deviceFlowDisabled(
  error: unknown,
  method: OAuthMethod,
): DeviceFlowError | undefined {
  const refusal = error as { oauthError?: unknown; cause?: { error?: unknown } } | null;
  if ((refusal?.oauthError ?? refusal?.cause?.error) !== "device_flow_disabled") return undefined;
  const { clientId, provider } = oauthTarget(method);
  const where = provider?.displayName ?? "The authorization server";
  return new DeviceFlowError(
    "device_flow_unsupported",
    `${where} refused the device flow: it is not enabled for the app ${clientId}. Enable Device Flow in the ` +
      `app's settings (GitHub: Settings → Developer settings → the app → "Enable Device Flow"), or configure ` +
      `the method ${method.id} with flow: "browser".`,
    { cause: error },
  );
}

/** URL-mode elicitation (`elicitation/create`, `mode: "url"`) tied to the `authenticate` request it serves. */
export async function elicit(
  client: acp.AgentContext,
  requestId: acp.RequestId,
  prompt: LoginPrompt,
): Promise<"accept" | "decline" | "cancel"> {
  const response = await client.request(acp.methods.client.elicitation.create, {
    mode: "url",
    requestId,
    elicitationId: crypto.randomUUID(),
    url: prompt.url,
    message: prompt.message,
  } as acp.CreateElicitationRequest);
  const action = (response as { action?: string }).action;
  return action === "accept" || action === "decline" ? action : "cancel";
}
